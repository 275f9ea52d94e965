package rabbit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// writeDump writes a dump of n messages with ids "<prefix>-<i>", each
// edited by edit (nil: as made).
func writeDump(t *testing.T, n int, prefix string, edit func(i int, r *dumpfile.Record)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), prefix+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := fmt.Sprintf(`{"ladder_dump":%d,"vhost":"/","queue":"gone","broker_version":"3.10.8","dumped_at":"2024-01-02T03:04:05Z"}`, dumpfile.Format)
	if _, err := f.WriteString(head + "\n"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := dumpfile.Record{Position: i, Properties: dumpfile.Properties{MessageID: fmt.Sprintf("%s-%d", prefix, i), DeliveryMode: 2},
			Body: []byte(fmt.Sprintf(`{"n":%d}`, i))}
		if edit != nil {
			edit(i, &r)
		}
		line, err := dumpfile.MarshalRecord(r, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// skippedLines are the lines a report skipped, with why.
func skippedLines(rep *broker.MoveReport) map[int]string {
	out := map[int]string{}
	for _, p := range rep.Planned {
		if !p.Moves() {
			out[p.Position] = p.Skip
		}
	}
	return out
}

// A line the broker would refuse — headers over one frame (it would close
// the connection), on 4.x a body over the default maximum (it would close
// the channel) — is skipped with its own reason before anything is
// published; every valid line after it is published, on the first run and
// again on --resume (which publishes nothing twice).
func TestReplayChecksEachLineBeforePublishing(t *testing.T) {
	f := newFixture(t)
	dst := f.queue("dst", nil)
	l := f.live(false)
	version, err := l.BrokerVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const n = 600
	bad := map[int]string{3: "do not fit in one frame"} // dump line = i + 2
	bigBody := topology.VersionAtLeast(version, 4, 0)
	if bigBody {
		bad[301] = "over the broker's maximum message size (16777216 bytes, RabbitMQ 4.x's default max_message_size)"
	} else {
		t.Logf("RabbitMQ %s: a body over its 128 MiB maximum is left to the own node's test", version)
	}
	file := writeDump(t, n, "chk", func(i int, r *dumpfile.Record) {
		switch i + 2 {
		case 3:
			r.Headers = retry.Headers{"trace": strings.Repeat("t", 200<<10)}
		case 301:
			if bigBody {
				r.Body = make([]byte, 16<<20+1)
			}
		}
	})
	req := usecase.ReplayRequest{File: file, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}
	for run, resume := range []bool{false, true} {
		req.Resume = resume
		rep, err := usecase.Replay(context.Background(), gate.New(l, gate.Options{}), req, nil)
		if !errors.Is(err, broker.ErrPartial) {
			t.Fatalf("run %d: error %v, want a partial replay (lines skipped)", run, err)
		}
		skipped := skippedLines(rep)
		if len(skipped) != len(bad) || rep.Skipped != len(bad) || rep.Failed != 0 || rep.DuplicatesPossible {
			t.Fatalf("run %d: %+v", run, rep)
		}
		for line, want := range bad {
			if !strings.Contains(skipped[line], want) {
				t.Errorf("run %d: line %d skipped for %q, want %q", run, line, skipped[line], want)
			}
		}
		if want := []int{n - len(bad), 0}[run]; rep.Moved != want {
			t.Errorf("run %d: published %d, want %d", run, rep.Moved, want)
		}
	}
	seen := idsOf(f.drain(dst, time.Second))
	for i := 0; i < n; i++ {
		want := 1
		if _, isBad := bad[i+2]; isBad {
			want = 0
		}
		if got := seen[fmt.Sprintf("chk-%d", i)]; got != want {
			t.Errorf("chk-%d on the broker %d times, want %d", i, got, want)
		}
	}
}

// On a broker configured below its version's default maximum, the first
// line over it is refused by the broker: that line alone is skipped (with
// the broker's words), the lines of its batch it did not reach are
// published again, and the limit it named is checked before every later
// line. The own node, with max_message_size lowered at runtime.
func TestReplayLearnsAConfiguredMaximumFromTheBroker(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	node := brokertest.RequireOwnNode(t)
	const limit = 100000
	was := strings.TrimSpace(node.Ctl(t, "eval", "persistent_term:get(max_message_size)."))
	node.Ctl(t, "eval", fmt.Sprintf("persistent_term:put(max_message_size, %d).", limit))
	t.Cleanup(func() { node.Ctl(t, "eval", fmt.Sprintf("persistent_term:put(max_message_size, %s).", was)) })
	f := fixtureOn(t, brokertest.OwnVhostOn(t, node.Resolved))
	dst := f.queue("dst", nil)
	l := f.live(false)
	const n = 600
	big := map[int]bool{12: true, 402: true} // dump lines, in different batches
	file := writeDump(t, n, "cfg", func(i int, r *dumpfile.Record) {
		if big[i+2] {
			r.Body = make([]byte, limit+5000)
		}
	})
	req := usecase.ReplayRequest{File: file, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}
	rep, err := usecase.Replay(context.Background(), gate.New(l, gate.Options{}), req, nil)
	if !errors.Is(err, broker.ErrPartial) {
		t.Fatalf("error %v, want a partial replay", err)
	}
	skipped := skippedLines(rep)
	if !strings.Contains(skipped[12], "refused, message too large: PRECONDITION_FAILED - ") || !strings.Contains(skipped[12], fmt.Sprintf("max size %d", limit)) {
		t.Errorf("line 12: %q", skipped[12])
	}
	// Line 402 comes later: by then the limit is usually learned and it is
	// not published, but a first run cut short (a loaded machine) may have
	// left it to the broker's refusal. Both say why; the learning is
	// checked on its own below.
	if !strings.Contains(skipped[402], "too large") && !strings.Contains(skipped[402], "maximum message size") {
		t.Errorf("line 402: %q", skipped[402])
	}
	total := []*broker.MoveReport{rep}
	if rep.Failed > 0 {
		// Lines before the refused one the broker took but had not
		// confirmed when it closed the channel: in doubt, published again
		// by --resume.
		req.Resume = true
		again, err := usecase.Replay(context.Background(), gate.New(l, gate.Options{}), req, nil)
		if !errors.Is(err, broker.ErrPartial) {
			t.Fatalf("resume: %v", err)
		}
		total = append(total, again)
	}
	bound := 0
	for _, r := range total {
		bound += r.DuplicatesAtMost
	}
	seen := idsOf(f.drain(dst, time.Second))
	dups := 0
	for i := 0; i < n; i++ {
		c := seen[fmt.Sprintf("cfg-%d", i)]
		switch {
		case big[i+2] && c != 0:
			t.Errorf("cfg-%d is over the limit but on the broker %d times", i, c)
		case !big[i+2] && c == 0:
			t.Errorf("cfg-%d was not published", i)
		}
		dups += max(0, c-1)
	}
	if dups > bound {
		t.Errorf("%d duplicates, at most %d reported", dups, bound)
	}
	t.Logf("first run: %d published, %d skipped, %d in doubt; %d runs; %d duplicates (bound %d)", rep.Moved, rep.Skipped, rep.Failed, len(total), dups, bound)

	// The client learned the limit from those refusals: a later replay's
	// line over it is not published at all.
	file2 := writeDump(t, 5, "cfg2", func(i int, r *dumpfile.Record) {
		if i == 2 {
			r.Body = make([]byte, limit+5000)
		}
	})
	rep2, err := usecase.Replay(context.Background(), gate.New(l, gate.Options{}), usecase.ReplayRequest{File: file2, To: req.To}, nil)
	if !errors.Is(err, broker.ErrPartial) {
		t.Fatalf("second replay: %v, want a partial replay", err)
	}
	if got := skippedLines(rep2)[4]; !strings.Contains(got, fmt.Sprintf("over the broker's maximum message size (%d bytes, the broker's configured max_message_size)", limit)) {
		t.Errorf("second replay, line 4: %q (the learned limit not applied)", got)
	}
	if rep2.Moved != 4 || rep2.DuplicatesAtMost != 0 {
		t.Errorf("second replay: %d published, %d in doubt, want 4 and none", rep2.Moved, rep2.DuplicatesAtMost)
	}
}
