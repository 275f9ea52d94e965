package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry/topology"
)

// brokerEnv points the commands at the test broker.
func brokerEnv(t *testing.T) *rabbit.Resolved {
	t.Helper()
	r := brokertest.Require(t)
	cfg := brokertest.Config()
	t.Setenv("LADDER_AMQP_URL", cfg.AMQPURL)
	t.Setenv("LADDER_API_URL", cfg.APIURL)
	return r
}

// vhostEnv points the commands at a vhost of the test's own, for commands
// that read a whole vhost (topology, the TUI).
func vhostEnv(t *testing.T) *rabbit.Resolved {
	t.Helper()
	brokerEnv(t)
	r := brokertest.OwnVhost(t)
	t.Setenv("LADDER_VHOST", r.Vhost)
	return r
}

// testQueue declares a unique queue with n messages, deleted at the end.
func testQueue(t *testing.T, r *rabbit.Resolved, suffix string, n int, args amqp.Table) string {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test cli")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	name := brokertest.Name(t, suffix)
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := r.DialAMQP(context.Background(), "test cleanup")
		if err != nil {
			return
		}
		defer c.Close()
		if ch, err := c.Channel(); err == nil {
			_, _ = ch.QueueDelete(name, false, false, false)
		}
	})
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	var confs []*amqp.DeferredConfirmation
	for i := 0; i < n; i++ {
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", name, false, false, amqp.Publishing{
			MessageId: fmt.Sprintf("%s-%d", suffix, i), DeliveryMode: amqp.Persistent, Body: []byte("x"),
			Headers: amqp.Table{"x-retry-count": int32(2)},
		})
		if err != nil {
			t.Fatal(err)
		}
		confs = append(confs, dc)
	}
	for _, dc := range confs {
		if !dc.Wait() {
			t.Fatal("publish not confirmed")
		}
	}
	return name
}

func depthOf(t *testing.T, r *rabbit.Resolved, q string) int {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test depth")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	st, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st.Messages
}

func TestPeekCommandJSONContract(t *testing.T) {
	r := brokerEnv(t)
	q := testQueue(t, r, "peek", 3, nil)
	code, out, errOut := runLadder(t, "peek", q, "-n", "2", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"queue", "type", "total", "ready", "side_effects", "messages"} {
		if _, ok := res[k]; !ok {
			t.Errorf("peek JSON lacks %q", k)
		}
	}
	msgs := res["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0].(map[string]any)
	for _, k := range []string{"position", "exchange", "routing_key", "redelivered", "properties", "headers", "retry", "deaths", "origin", "hol", "body_size", "body_preview"} {
		if _, ok := m[k]; !ok {
			t.Errorf("message JSON lacks %q", k)
		}
	}
	if rt := m["retry"].(map[string]any); rt["count"] != float64(2) || rt["source"] != "x-retry-count" {
		t.Errorf("retry %v", rt)
	}
	if depthOf(t, r, q) != 3 {
		t.Error("peek removed messages")
	}
}

// On a real quorum queue the table and the JSON say the same side effects,
// the delivery count among them.
func TestPeekCommandSideEffectsOnAQuorumQueue(t *testing.T) {
	r := brokerEnv(t)
	q := testQueue(t, r, "peek-qq", 2, amqp.Table{"x-queue-type": "quorum"})
	code, out, errOut := runLadder(t, "peek", q, "-n", "2", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		SideEffects []string `json:"side_effects"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(res.SideEffects, " "); !strings.Contains(text, "redelivered") || !strings.Contains(text, "x-delivery-count") {
		t.Fatalf("JSON side effects %q", res.SideEffects)
	}
	code, out, errOut = runLadder(t, "peek", q, "-n", "2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, effect := range res.SideEffects {
		if !strings.Contains(out, "! "+effect+"\n") {
			t.Errorf("table lacks the side effect %q:\n%s", effect, out)
		}
	}
}

func TestPeekCommandMissingQueue(t *testing.T) {
	brokerEnv(t)
	code, _, errOut := runLadder(t, "peek", "ladder-no-such-queue-xyz")
	if code != exitError || !strings.Contains(errOut, `"ladder-no-such-queue-xyz"`) || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("exit %d %q", code, errOut)
	}
}

func TestMoveCommandRefusesWithoutTerminalOrYes(t *testing.T) {
	r := brokerEnv(t)
	src := testQueue(t, r, "src", 2, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	code, _, errOut := runLadder(t, "move", "--from", src, "--to", "queue:"+dst)
	if code != exitUsage || !strings.Contains(errOut, "--yes") {
		t.Fatalf("exit %d %q", code, errOut)
	}
	code, _, errOut = runLadder(t, "--read-only", "move", "--from", src, "--to", "queue:"+dst, "--yes")
	if code != exitError || !strings.Contains(errOut, "read-only") {
		t.Fatalf("read-only: exit %d %q", code, errOut)
	}
	if depthOf(t, r, src) != 2 || depthOf(t, r, dst) != 0 {
		t.Fatal("a refused move changed the queues")
	}
}

func TestMoveCommandJSONAndPartialExit(t *testing.T) {
	r := brokerEnv(t)
	src := testQueue(t, r, "src", 5, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	code, out, errOut := runLadder(t, "move", "--from", src, "--to", "queue:"+dst, "--limit", "3", "--yes", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"requested": 3.0, "moved": 3.0, "failed": 0.0, "returned": 0.0, "target": "queue:" + dst, "delay_ms": 0.0, "duplicates_possible": false} {
		if rep[k] != want {
			t.Errorf("%s = %v, want %v", k, rep[k], want)
		}
	}
	// An unroutable target: nothing moves, exit 3 (partial), all stay.
	code, _, errOut = runLadder(t, "move", "--from", src, "--to", "exchange:amq.direct:ladder-nowhere", "--yes")
	if code != exitPartial {
		t.Fatalf("unroutable: exit %d %q", code, errOut)
	}
	if depthOf(t, r, src) != 2 {
		t.Fatal("unroutable move lost messages")
	}
}

func TestMoveCommandBadTargetIsUsage(t *testing.T) {
	brokerEnv(t)
	code, _, errOut := runLadder(t, "move", "--from", "q", "--to", "topic:x", "--yes")
	if code != exitUsage || !strings.Contains(errOut, `--to "topic:x"`) {
		t.Fatalf("exit %d %q", code, errOut)
	}
}

func TestTopologyCommandJSON(t *testing.T) {
	vhostEnv(t)
	code, out, errOut := runLadder(t, "topology", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"vhost", "broker_version", "ladders", "findings"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("topology JSON lacks %q", k)
		}
	}
}

// Killing ladder in the middle of a move loses nothing: unacked messages
// return to the source.
func TestMoveKilledMidwayLosesNothing(t *testing.T) {
	r := brokerEnv(t)
	const n = 20000
	src := testQueue(t, r, "src", n, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	cmd := startMove(t, r, src, dst, nil, "--rate", "2000/s")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// The broker requeues the dead connection's unacked messages.
	var total int
	for i := 0; i < 100; i++ {
		total = depthOf(t, r, src) + depthOf(t, r, dst)
		if total >= n {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	moved := depthOf(t, r, dst)
	if moved >= n {
		t.Fatalf("the move finished before the kill (%d moved)", moved)
	}
	if total < n {
		t.Fatalf("%d of %d messages left after the kill: lost %d", total, n, n-total)
	}
	t.Logf("killed after %d moved; %d in all (duplicates: %d)", moved, total, total-n)
}

func TestMoveCommandWritesTheAuditLog(t *testing.T) {
	r := brokerEnv(t)
	src := testQueue(t, r, "src", 2, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	log := filepath.Join(t.TempDir(), "audit.log")
	code, _, errOut := runLadder(t, "move", "--from", src, "--to", "queue:"+dst, "--yes", "--audit-log", log)
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"phase":"start"`) || !strings.Contains(lines[1], `"moved":2`) {
		t.Fatalf("audit log:\n%s", b)
	}
	if strings.Contains(string(b), "guest:guest") || !strings.Contains(string(b), "guest:xxxxx") {
		t.Fatalf("the audit log must name the broker with its password redacted:\n%s", b)
	}
	if fi, _ := os.Stat(log); fi.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v", fi.Mode().Perm())
	}
}

// Ctrl+C during a move: deliveries stop, in-flight confirms settle, the
// report is printed, exit 3 — and every message is somewhere.
func TestMoveInterruptedBySIGINTReportsAndLosesNothing(t *testing.T) {
	r := brokerEnv(t)
	const n = 20000
	src := testQueue(t, r, "src", n, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	var stdout strings.Builder
	cmd := startMove(t, r, src, dst, &stdout, "-o", "json", "--rate", "2000/s")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitPartial {
		t.Fatalf("exit %v, want %d; stdout %s", err, exitPartial, stdout.String())
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("no JSON report after Ctrl+C: %v\n%s", err, stdout.String())
	}
	moved := int(rep["moved"].(float64))
	if moved == 0 || moved >= n {
		t.Fatalf("moved %d", moved)
	}
	var inSrc, inDst int
	for i := 0; i < 100; i++ {
		inSrc, inDst = depthOf(t, r, src), depthOf(t, r, dst)
		if inSrc+inDst >= n {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if inSrc+inDst < n {
		t.Fatalf("%d + %d < %d: messages lost", inSrc, inDst, n)
	}
	if inDst != moved && rep["duplicates_possible"] != true {
		t.Errorf("target holds %d, report says moved %d without duplicates possible", inDst, moved)
	}
}

// startMove builds the real binary, starts `move --from src --to queue:dst
// --yes` with it and returns once at least 1,000 messages have arrived.
// Callers that stop it midway pace it (--rate 2000/s: 20,000 take 10 s),
// so a test process starved of CPU for a second or two still finds it
// running.
func startMove(t *testing.T, r *rabbit.Resolved, src, dst string, stdout *strings.Builder, extra ...string) *exec.Cmd {
	t.Helper()
	bin := ladderBinary(t)
	cmd := exec.Command(bin, append([]string{"move", "--from", src, "--to", "queue:" + dst, "--yes"}, extra...)...)
	cmd.Env = os.Environ()
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for depthOf(t, r, dst) < 1000 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("move never got going")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd
}

// A move refused before anything moved prints its error alone: no report
// that reads like a result, in table or JSON.
func TestMoveCommandFailingBeforeAnythingPrintsOnlyTheError(t *testing.T) {
	r := brokerEnv(t)
	src := testQueue(t, r, "src", 2, nil)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"move", "--from", src, "--to", "queue:ladder-test-no-such-queue", "--yes", "-o", "json"}, `target queue "ladder-test-no-such-queue" does not exist`},
		{[]string{"move", "--from", "ladder-test-no-such-source", "--to", "queue:" + src, "--yes"}, `source queue "ladder-test-no-such-source" does not exist`},
		{[]string{"move", "--from", src, "--to", "exchange:ladder-test-no-such-exchange", "--yes", "-o", "json"}, `target exchange "ladder-test-no-such-exchange" does not exist`},
	} {
		code, out, errOut := runLadder(t, c.args...)
		if code != exitError || out != "" || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, errOut)
		}
	}
	if depthOf(t, r, src) != 2 {
		t.Error("a refused move changed the source")
	}
}

// ladder's own wait queues are marked as ladder's, and no finding is about them.
func TestTopologyMarksLadderOwnQueues(t *testing.T) {
	r := vhostEnv(t)
	src := testQueue(t, r, "src", 1, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	if code, _, errOut := runLadder(t, "move", "--from", src, "--to", "queue:"+dst, "--delay", "10m", "--yes"); code != exitOK {
		t.Fatalf("move: exit %d %s", code, errOut)
	}
	code, out, errOut := runLadder(t, "topology", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var rep present.TopologyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	owned := 0
	for _, q := range rep.Other {
		if strings.HasPrefix(q.Name, "ladder.delay.") {
			owned++
			if !q.OwnedByLadder {
				t.Errorf("%+v", q)
			}
		} else if q.OwnedByLadder {
			t.Errorf("%s marked as ladder's", q.Name)
		}
	}
	if owned != 1 || len(rep.Ladders) != 0 {
		t.Errorf("owned %d, ladders %+v", owned, rep.Ladders)
	}
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Queue, "ladder.delay.") {
			t.Errorf("finding on ladder's own queue: %+v", f)
		}
	}
}

// ladder lint on a live broker: queues declared the ways 4.3 refuses or
// changes are named, and errors exit 1.
func TestLintCommandOnTheBroker(t *testing.T) {
	r := vhostEnv(t)
	version := liveVersion(t, r)
	// An empty vhost: nothing found, exit 0, a header and no rows.
	code, out, errOut := runLadder(t, "lint", "--for", "4.3")
	if code != exitOK || errOut != "" || !strings.HasSuffix(out, ": 0 findings\n") {
		t.Fatalf("empty vhost: exit %d %q %q", code, out, errOut)
	}
	// What this broker still accepts of what lint warns of (measured:
	// 4.0.5 and 4.3.6 take lazy and transient queues; 4.3 refuses
	// version 1; mirroring policies went in 4.0).
	want := map[string]string{}
	lazy := testQueue(t, r, "lazy", 0, amqp.Table{"x-queue-mode": "lazy"})
	want[lazy] = topology.CodeQueueMode
	qq := testQueue(t, r, "qq", 0, amqp.Table{"x-queue-type": "quorum"})
	want[qq] = topology.CodeQuorumNoDLX
	nerr := 0
	if !topology.VersionAtLeast(version, 4, 3) {
		v1 := testQueue(t, r, "v1", 0, amqp.Table{"x-queue-version": int32(1)})
		want[v1] = topology.CodeQueueVersion1
		nerr++
	}
	if !topology.VersionAtLeast(version, 4, 0) {
		mirrored := testQueue(t, r, "mirrored", 0, nil)
		body := []byte(`{"pattern":"^` + mirrored + `$","definition":{"ha-mode":"all"},"apply-to":"queues"}`)
		if err := brokertest.API(r, "PUT", "policies/"+url.PathEscape(r.Vhost)+"/mirror", body); err != nil {
			t.Fatal(err)
		}
		want[mirrored] = topology.CodeClassicMirrored
		nerr++
	}
	conn, err := r.DialAMQP(context.Background(), "test lint")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	temp := brokertest.Name(t, "temp")
	if _, err := ch.QueueDeclare(temp, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	want[temp] = topology.CodeTransientQueue
	var rep struct {
		Findings []topology.Finding `json:"findings"`
	}
	// The policy applies within a moment: poll for the findings.
	ok := brokertest.WaitFor(30*time.Second, func() bool {
		code, out, errOut = runLadder(t, "lint", "--for", "4.3", "-o", "json")
		rep.Findings = nil
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			return false
		}
		return len(rep.Findings) == len(want)
	})
	found := map[string]string{}
	for _, f := range rep.Findings {
		found[f.Queue] = f.Code
	}
	if !ok {
		t.Fatalf("findings %v, want %v", found, want)
	}
	for q, code := range want {
		if found[q] != code {
			t.Errorf("%s: %q, want %s (all: %v)", q, found[q], code, found)
		}
	}
	switch {
	case nerr > 0 && (code != exitError || !strings.Contains(errOut, fmt.Sprintf("lint: %d ", nerr))):
		t.Errorf("with %d errors: exit %d %q", nerr, code, errOut)
	case nerr == 0 && code != exitOK:
		t.Errorf("warnings only: exit %d %q", code, errOut)
	}
	// Text: one finding a line under the header, as topology prints them.
	_, out, _ = runLadder(t, "lint", "--for", "4.3")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1+len(want) || !strings.HasSuffix(lines[0], fmt.Sprintf(": %d findings", len(want))) {
		t.Fatalf("text:\n%s", out)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 4 || want[f[2]] != f[1] {
			t.Errorf("line %q: want severity, code, queue, message", l)
		}
	}
}

// On RabbitMQ 4.3, a quorum queue with built-in delayed retry shows as a
// ladder with its DLQ, and schedule previews its own delays.
func TestDelayedRetryQueueOnTheBroker(t *testing.T) {
	r := vhostEnv(t)
	if v := liveVersion(t, r); !strings.HasPrefix(v, "4.3") && !strings.HasPrefix(v, "4.4") {
		t.Skipf("RabbitMQ %s has no built-in delayed retry (4.3 adds it)", v)
	}
	dlq := testQueue(t, r, "dlq", 0, amqp.Table{"x-queue-type": "quorum"})
	main := testQueue(t, r, "jobs", 0, amqp.Table{"x-queue-type": "quorum", "x-delayed-retry-type": "failed",
		"x-delayed-retry-min": int64(1000), "x-delayed-retry-max": int64(30000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
	code, out, errOut := runLadder(t, "topology", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var rep present.TopologyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Ladders) != 1 || rep.Ladders[0].Main.Name != main || rep.Ladders[0].DLQ == nil || rep.Ladders[0].DLQ.Name != dlq {
		t.Fatalf("ladders %+v", rep.Ladders)
	}
	if d := rep.Ladders[0].Main.DelayedRetry; d == nil || d.Type != "failed" || d.MinMS != 1000 || d.MaxMS != 30000 {
		t.Errorf("delayed_retry %+v", d)
	}
	code, out, errOut = runLadder(t, "schedule", "--ladder", main, "--attempts", "3")
	if code != exitOK || !strings.Contains(out, "1s") || !strings.Contains(out, "3s") {
		t.Errorf("schedule: exit %d %s\n%s", code, errOut, out)
	}
}

// liveVersion is the test broker's RabbitMQ version.
func liveVersion(t *testing.T, r *rabbit.Resolved) string {
	t.Helper()
	l, err := rabbit.NewLive(r, "test version")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	v, err := l.BrokerVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A target that rejects publishes: the nacked messages stay, the summary
// counts them, exit 3.
func TestMoveCommandToARejectingTargetExitsPartial(t *testing.T) {
	r := brokerEnv(t)
	src := testQueue(t, r, "src", 8, nil)
	dst := testQueue(t, r, "dst", 0, amqp.Table{"x-max-length": int64(3), "x-overflow": "reject-publish"})
	code, out, errOut := runLadder(t, "move", "--from", src, "--to", "queue:"+dst, "--yes", "-o", "json")
	if code != exitPartial {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitPartial, out, errOut)
	}
	var rep struct{ Moved, Failed int }
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Moved != 3 || rep.Failed != 5 {
		t.Fatalf("%+v %v\n%s", rep, err, out)
	}
	deadline := time.Now().Add(15 * time.Second)
	for depthOf(t, r, src) != 5 {
		if time.Now().After(deadline) {
			t.Fatalf("source keeps %d, want 5", depthOf(t, r, src))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
