package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/pace"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// dumpOfDLQ dumps the simulation's DLQ to a file and returns its path.
func dumpOfDLQ(t *testing.T, s *sim.Sim, n int) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "dlq.jsonl")
	if code, _, errOut := runOnSim(t, s, "dump", sim.OrdersDLQ, "--out", file, "-n", fmt.Sprint(n)); code != exitOK {
		t.Fatalf("dump: %d %s", code, errOut)
	}
	return file
}

// Restoring a queue from its own dump (after a purge) is what a dump is
// for: the queue it came from is a valid target.
func TestReplayRestoresTheQueueItWasDumpedFrom(t *testing.T) {
	s := newSim(t)
	file := dumpOfDLQ(t, s, 5)
	code, out, errOut := runOnSim(t, s, "replay", file, "--to", "queue:"+sim.OrdersDLQ, "--yes", "-o", "json")
	var rep broker.MoveReport
	json.Unmarshal([]byte(out), &rep)
	if code != exitOK || rep.Moved != 5 {
		t.Fatalf("replay into the dumped queue: exit %d %s %+v", code, errOut, rep)
	}
}

// A dump of another vhost is replayed where asked, but the plan and the
// question say so.
func TestReplayOfAnotherVhostsDumpSaysSo(t *testing.T) {
	s := newSim(t)
	file := dumpOfDLQ(t, s, 2)
	raw, _ := os.ReadFile(file)
	head, rest, _ := strings.Cut(string(raw), "\n")
	var h map[string]any
	json.Unmarshal([]byte(head), &h)
	h["vhost"] = "staging"
	nh, _ := json.Marshal(h)
	os.WriteFile(file, []byte(string(nh)+"\n"+rest), 0o600)
	code, out, errOut := runOnSim(t, s, "replay", file, "--to", "queue:"+sim.OrdersMain, "--dry-run")
	if code != exitOK || !strings.Contains(out, "note: the dump is of vhost staging; this replay publishes into vhost "+s.Vhost()) {
		t.Fatalf("dry run: exit %d %s %s", code, out, errOut)
	}
	plan := &broker.MoveReport{Requested: 2}
	q := replayQuestion(usecase.ReplayRequest{File: file, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: sim.OrdersMain}}, plan, "staging", s.Vhost())
	if !strings.HasPrefix(q, "! "+file+" is a dump of vhost staging; this replays it into vhost "+s.Vhost()+"\n") {
		t.Errorf("question: %q", q)
	}
	if q := replayQuestion(usecase.ReplayRequest{File: file}, plan, s.Vhost(), s.Vhost()); strings.Contains(q, "vhost") {
		t.Errorf("same vhost, still warned: %q", q)
	}
}

// Two replays of one dump at once: the second is refused, in one line
// naming the first (pid, host, start), exit 1, publishing nothing; the
// first publishes every line once.
func TestSecondReplayOfADumpIsRefusedNamingTheFirst(t *testing.T) {
	s := newSim(t)
	file := dumpOfDLQ(t, s, 5)
	before := s.Stats().Published
	hold := &pace.Hold{}
	hold.Pause()
	done := make(chan error, 1)
	go func() {
		_, err := usecase.Replay(context.Background(), gate.New(s, gate.Options{}), usecase.ReplayRequest{File: file, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: sim.OrdersMain}, Hold: hold}, nil)
		done <- err
	}()
	// The first holds the lock once its record is in the progress file.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(dumpfile.ProgressFile(file))
		if strings.Contains(string(b), `"lock"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first replay never took its lock")
		}
	}
	host, _ := os.Hostname()
	for _, args := range [][]string{{"--yes"}, {"--dry-run"}, {"--resume", "--yes"}} {
		code, out, errOut := runOnSim(t, s, append([]string{"replay", file, "--to", "queue:" + sim.OrdersMain}, args...)...)
		if code != exitError || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 ||
			!strings.Contains(errOut, "another replay of this dump is running") || !strings.Contains(errOut, fmt.Sprintf("pid %d on %s, started ", os.Getpid(), host)) {
			t.Errorf("second replay %v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	hold.Resume()
	if err := <-done; err != nil {
		t.Fatalf("first replay: %v", err)
	}
	if got := s.Stats().Published - before; got != 5 {
		t.Errorf("%d published, want 5: once each", got)
	}
	// Ended, it holds nothing: --resume is allowed (and finds nothing to do).
	if code, _, errOut := runOnSim(t, s, "replay", file, "--to", "queue:"+sim.OrdersMain, "--resume", "--yes"); code != exitOK {
		t.Errorf("resume after the first ended: exit %d %s", code, errOut)
	}
}

// A symbolic link to a dump is the dump: replaying it after the dump
// itself is refused as a second replay (issue 31: a link beside the dump
// replayed it all again, 20,000 duplicates reported as none).
func TestReplayThroughALinkIsTheSameReplay(t *testing.T) {
	s := newSim(t)
	file := dumpOfDLQ(t, s, 3)
	link := filepath.Join(filepath.Dir(file), "link.jsonl")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runOnSim(t, s, "replay", file, "--to", "queue:"+sim.OrdersMain, "--yes"); code != exitOK {
		t.Fatalf("first replay: %d %s", code, errOut)
	}
	before := s.Stats().Published
	code, _, errOut := runOnSim(t, s, "replay", link, "--to", "queue:"+sim.OrdersMain, "--yes")
	if code != exitError || !strings.Contains(errOut, "it was replayed before") || s.Stats().Published != before {
		t.Errorf("replay through a link: exit %d, %q, %d published", code, errOut, s.Stats().Published-before)
	}
}
