package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// ownNodeEnv points the commands at the own node, in a vhost of the test's.
func ownNodeEnv(t *testing.T) (*brokertest.OwnNode, *rabbit.Resolved) {
	t.Helper()
	n := brokertest.RequireOwnNode(t)
	r := brokertest.OwnVhostOn(t, n.Resolved)
	// A test that fails with the node down brings it back for the next
	// (and for deleting its vhost).
	t.Cleanup(func() {
		if !n.Answers() {
			n.Start(t)
		}
	})
	for _, env := range []string{"LADDER_PROMETHEUS_URL", "LADDER_CA_CERT", "LADDER_INSECURE_SKIP_VERIFY", "LADDER_AUDIT_LOG", "LADDER_READ_ONLY", "LADDER_OUTPUT"} {
		t.Setenv(env, "")
	}
	t.Setenv("LADDER_AMQP_URL", n.Resolved.AMQPURL)
	t.Setenv("LADDER_API_URL", n.Resolved.APIURL.String())
	t.Setenv("LADDER_VHOST", r.Vhost)
	return n, r
}

// A move whose broker stops under it says the broker closed the connection
// and why (its own words), exit 3 — not "a message the AMQP client could
// not read".
func TestMoveNodeStoppedSaysConnectionLost(t *testing.T) {
	n, r := ownNodeEnv(t)
	// 40 s of moving at 10/s: stopping a node takes 10 s or more on a busy
	// machine, and the move must still be running when it goes.
	src := testQueue(t, r, "lost", 400, nil)
	dst := testQueue(t, r, "moved", 0, nil)
	move := startLadder("move", "--from", src, "--to", "queue:"+dst, "--yes", "--rate", "10/s")
	if !brokertest.WaitFor(time.Minute, func() bool { return move.finished() || depthOf(t, r, dst) >= 5 }) {
		t.Fatalf("nothing moved in a minute; stderr %q", move.stderr.String())
	}
	n.Stop(t)
	select {
	case <-move.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the move did not end 2 minutes after the node stopped; stderr %q", move.stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(move.stderr.String()), "\n")
	last := lines[len(lines)-1]
	t.Logf("%s", last)
	// A stopping node closes its connections (CONNECTION_FORCED); on a busy
	// machine the socket's reset can come first: both name the broker.
	addr := "RabbitMQ at 127.0.0.1:" + brokertest.OwnAMQPPort
	if move.code != exitPartial || !strings.Contains(last, addr+" closed the connection: CONNECTION_FORCED - ") && !strings.Contains(last, "connection to "+addr+" lost: ") {
		t.Errorf("exit %d, last line %q", move.code, last)
	}
	if strings.Contains(last, "could not read") || strings.Contains(last, "not open") {
		t.Errorf("the lost connection is misnamed: %q", last)
	}
	n.Start(t)
	if s, d := depthOf(t, r, src), depthOf(t, r, dst); s+d < 400 {
		t.Errorf("%d in the source and %d in the target: messages lost", s, d)
	}
}

// A message larger than the broker's max_message_size is refused by name,
// in the broker's words, and stays in the source. The limit is lowered on
// the own node after the message is in (4.x keeps it in a persistent term
// read as each message arrives) and restored when the test ends.
func TestMoveMessageTooLargeSaysSo(t *testing.T) {
	n, r := ownNodeEnv(t)
	src := testQueue(t, r, "large", 0, nil)
	dst := testQueue(t, r, "moved", 0, nil)
	conn, err := r.DialAMQP(context.Background(), "test large")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", src, false, false, amqp.Publishing{MessageId: "large-0", Body: make([]byte, 200000)})
	if err != nil || !dc.Wait() {
		t.Fatalf("publish: %v", err)
	}
	before := strings.TrimSpace(n.Ctl(t, "eval", "persistent_term:get(max_message_size)."))
	t.Cleanup(func() { n.Ctl(t, "eval", "persistent_term:put(max_message_size, "+before+").") })
	n.Ctl(t, "eval", "persistent_term:put(max_message_size, 100000).")
	code, _, errOut := runLadder(t, "move", "--from", src, "--to", "queue:"+dst, "--yes")
	t.Logf("%s", strings.TrimSpace(errOut))
	want := "refused, message too large: PRECONDITION_FAILED - message size 200000 is larger than configured max size 100000"
	if code != exitPartial || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, %q, want it to hold %q", code, errOut, want)
	}
	if d := depthOf(t, r, src); d != 1 {
		t.Errorf("%d messages in the source, want 1", d)
	}
}
