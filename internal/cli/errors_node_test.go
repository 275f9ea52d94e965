package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
)

// ownNodeEnv points the commands at the own node, in a vhost of the test's.
func ownNodeEnv(t *testing.T) (*brokertest.OwnNode, *broker.Resolved) {
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
	src := testQueue(t, r, "lost", 200, nil)
	dst := testQueue(t, r, "moved", 0, nil)
	move := startLadder("move", "--from", src, "--to", "queue:"+dst, "--yes", "--rate", "20/s")
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
	if move.code != exitPartial || !strings.Contains(last, "RabbitMQ at 127.0.0.1:"+brokertest.OwnAMQPPort+" closed the connection: CONNECTION_FORCED - ") {
		t.Errorf("exit %d, last line %q", move.code, last)
	}
	if strings.Contains(last, "could not read") || strings.Contains(last, "not open") {
		t.Errorf("the lost connection is misnamed: %q", last)
	}
	n.Start(t)
	if s, d := depthOf(t, r, src), depthOf(t, r, dst); s+d < 200 {
		t.Errorf("%d in the source and %d in the target: messages lost", s, d)
	}
}
