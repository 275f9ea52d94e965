package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// A resource alarm on the target broker (its memory high watermark set
// below what it uses, on a node of the test's own): a move and a replay
// wait, say "broker is blocking publishes", and finish once the alarm
// clears, with every message there exactly once.

// alarmMessages is how many messages the source holds.
const alarmMessages = 2000

// ladderRun is a command running in the background.
type ladderRun struct {
	stdout, stderr brokertest.SyncBuffer
	code           int
	done           chan struct{}
}

func startLadder(args ...string) *ladderRun {
	lr := &ladderRun{done: make(chan struct{})}
	go func() {
		defer close(lr.done)
		lr.code = run(args, strings.NewReader(""), &lr.stdout, &lr.stderr, Build{Version: "dev", Commit: "dev", Date: "dev"}, nil)
	}()
	return lr
}

func (lr *ladderRun) finished() bool {
	select {
	case <-lr.done:
		return true
	default:
		return false
	}
}

// alarmOn lowers the node's memory high watermark below what it uses and
// waits for the alarm; the watermark is restored when the test ends,
// whatever happened. alarmOff restores it.
func alarmOn(t *testing.T, n *brokertest.OwnNode) {
	t.Helper()
	t.Cleanup(func() { n.Ctl(t, "set_vm_memory_high_watermark", brokertest.OwnWatermark) })
	n.Ctl(t, "set_vm_memory_high_watermark", "0.0000001")
	if !brokertest.WaitFor(60*time.Second, func() bool { return n.MemoryAlarmNow(t) }) {
		t.Fatal("no memory alarm 60 s after lowering the watermark")
	}
}

func alarmOff(t *testing.T, n *brokertest.OwnNode) {
	t.Helper()
	n.Ctl(t, "set_vm_memory_high_watermark", brokertest.OwnWatermark)
}

// waitBlocked waits until the command says the broker blocks it, checks
// it is still running a while later, and lets the alarm clear.
func waitBlocked(t *testing.T, n *brokertest.OwnNode, lr *ladderRun, what string) {
	t.Helper()
	const said = "ladder: broker is blocking publishes (low on memory); waiting\n"
	if !brokertest.WaitFor(2*time.Minute, func() bool { return strings.Contains(lr.stderr.String(), said) || lr.finished() }) {
		t.Fatalf("%s: nothing said about the alarm within 2 minutes; stderr %q", what, lr.stderr.String())
	}
	if lr.finished() {
		t.Fatalf("%s finished under the alarm: exit %d, stderr %q, stdout %s", what, lr.code, lr.stderr.String(), lr.stdout.String())
	}
	// Still waiting a while later: the alarm holds it, not slowness.
	time.Sleep(3 * time.Second)
	if lr.finished() {
		t.Fatalf("%s finished under the alarm: exit %d, stderr %q", what, lr.code, lr.stderr.String())
	}
	alarmOff(t, n)
	select {
	case <-lr.done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s did not finish 3 minutes after the alarm cleared; stderr %q", what, lr.stderr.String())
	}
	if lr.code != exitOK {
		t.Fatalf("%s: exit %d, stderr %q, stdout %s", what, lr.code, lr.stderr.String(), lr.stdout.String())
	}
	if want := said + "ladder: broker no longer blocks publishes; continuing\n"; lr.stderr.String() != want {
		t.Errorf("%s: stderr %q, want %q", what, lr.stderr.String(), want)
	}
	var rep broker.MoveReport
	if err := json.Unmarshal([]byte(lr.stdout.String()), &rep); err != nil {
		t.Fatalf("%s: %v: %s", what, err, lr.stdout.String())
	}
	if rep.Moved != alarmMessages || rep.Failed != 0 || rep.DuplicatesPossible {
		t.Errorf("%s: moved %d, failed %d, duplicates possible %v, want %d, 0, false", what, rep.Moved, rep.Failed, rep.DuplicatesPossible, alarmMessages)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "the broker blocked publishing for a while (low on memory)") {
		t.Errorf("%s: no note of the alarm in %q", what, rep.Notes)
	}
}

// countIDs takes every message of q and fails unless each of the test's
// ids is there exactly once.
func countIDs(t *testing.T, r *rabbit.Resolved, q, prefix string) {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test count")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for {
		d, ok, err := ch.Get(q, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		seen[d.MessageId]++
	}
	var missing, twice []string
	for i := range alarmMessages {
		id := fmt.Sprintf("%s-%d", prefix, i)
		switch seen[id] {
		case 0:
			missing = append(missing, id)
		case 1:
		default:
			twice = append(twice, id)
		}
		delete(seen, id)
	}
	if len(missing) > 0 || len(twice) > 0 || len(seen) > 0 {
		t.Fatalf("%s: %d missing (%.5q), %d more than once (%.5q), %d not ours", q, len(missing), missing, len(twice), twice, len(seen))
	}
}

func TestMoveAndReplayWaitForAResourceAlarm(t *testing.T) {
	n := brokertest.RequireOwnNode(t)
	r := brokertest.OwnVhostOn(t, n.Resolved)
	for _, env := range []string{"LADDER_PROMETHEUS_URL", "LADDER_CA_CERT", "LADDER_INSECURE_SKIP_VERIFY", "LADDER_AUDIT_LOG", "LADDER_READ_ONLY", "LADDER_OUTPUT"} {
		t.Setenv(env, "")
	}
	t.Setenv("LADDER_AMQP_URL", n.Resolved.AMQPURL)
	t.Setenv("LADDER_API_URL", n.Resolved.APIURL.String())
	t.Setenv("LADDER_VHOST", r.Vhost)
	src := testQueue(t, r, "alarm", alarmMessages, nil)
	dst := testQueue(t, r, "moved", 0, nil)
	start := time.Now()

	alarmOn(t, n)
	move := startLadder("move", "--from", src, "--to", "queue:"+dst, "--yes", "-o", "json")
	waitBlocked(t, n, move, "move")
	if d := depthOf(t, r, src); d != 0 {
		t.Errorf("%d messages still in %s", d, src)
	}
	t.Logf("move under an alarm: %s", time.Since(start).Round(100*time.Millisecond))

	// Replay: a dump of what moved, published again into another queue.
	start = time.Now()
	file := filepath.Join(t.TempDir(), "moved.jsonl")
	if code, _, errOut := runLadder(t, "dump", dst, "--out", file); code != exitOK {
		t.Fatalf("dump: exit %d: %s", code, errOut)
	}
	again := testQueue(t, r, "replayed", 0, nil)
	alarmOn(t, n)
	replay := startLadder("replay", file, "--to", "queue:"+again, "--yes", "-o", "json")
	waitBlocked(t, n, replay, "replay")
	t.Logf("replay under an alarm: %s", time.Since(start).Round(100*time.Millisecond))

	countIDs(t, r, dst, "alarm")
	countIDs(t, r, again, "alarm")
}
