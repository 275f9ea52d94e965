package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/present"
)

// clusterEnv points the commands at every node of the cluster, in a vhost
// of the test's own, and returns that vhost on each node.
func clusterEnv(t *testing.T, c *brokertest.Cluster) []*rabbit.Resolved {
	t.Helper()
	first := brokertest.OwnVhostOn(t, c.Nodes[0].Resolved)
	var amqps, apis, proms []string
	var each []*rabbit.Resolved
	for _, n := range c.Nodes {
		amqps = append(amqps, "amqp://guest:guest@127.0.0.1:"+n.AMQPPort+"/")
		apis = append(apis, "http://127.0.0.1:"+n.APIPort)
		proms = append(proms, n.Resolved.PrometheusURL.String())
		r := *n.Resolved
		r.Vhost = first.Vhost
		each = append(each, &r)
	}
	for _, env := range []string{"LADDER_CA_CERT", "LADDER_INSECURE_SKIP_VERIFY", "LADDER_AUDIT_LOG", "LADDER_READ_ONLY", "LADDER_OUTPUT", "LADDER_CONTEXT"} {
		t.Setenv(env, "")
	}
	t.Setenv("LADDER_AMQP_URL", strings.Join(amqps, ","))
	t.Setenv("LADDER_API_URL", strings.Join(apis, ","))
	t.Setenv("LADDER_PROMETHEUS_URL", strings.Join(proms, ","))
	t.Setenv("LADDER_VHOST", first.Vhost)
	return each
}

// declareOn declares queue through node r (a classic queue lives on the
// node its declaring connection is on; a quorum queue's first leader too).
func declareOn(t *testing.T, r *rabbit.Resolved, queue string, args amqp.Table) {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(queue, true, false, false, false, args); err != nil {
		t.Fatalf("declare %s: %v", queue, err)
	}
}

// clusterFindings runs topology -o json and returns its findings as
// "code subject" lines and the stderr.
func clusterFindings(t *testing.T) ([]string, string) {
	t.Helper()
	code, out, errOut := runLadder(t, "topology", "-o", "json")
	if code != exitOK {
		t.Fatalf("topology: exit %d %s", code, errOut)
	}
	var rep present.TopologyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var fs []string
	for _, f := range rep.Findings {
		about := f.Queue
		if about == "" {
			about = f.Node
		}
		fs = append(fs, f.Code+" "+about)
	}
	return fs, errOut
}

// On the 3-node cluster: the leader's node of a quorum DLQ stops →
// topology names the node down and the queue's lost redundancy; a second
// node stops → below quorum, and the classic queue on it unavailable;
// both back → the findings clear. With the first node of --amqp-url
// stopped, ladder says it used the next.
func TestClusterNodesDownInTopology(t *testing.T) {
	c := brokertest.RequireCluster(t)
	nodes := clusterEnv(t, c)
	quorum := amqp.Table{"x-queue-type": "quorum"}
	declareOn(t, nodes[0], "orders.dlq", quorum)
	declareOn(t, nodes[0], "orders", amqp.Table{"x-queue-type": "quorum", "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	declareOn(t, nodes[1], "audit", nil) // classic, on node 2

	// Bounded: the API lists a new queue's members within seconds.
	waitFor := func(what string, ok func([]string) bool) []string {
		t.Helper()
		var fs []string
		if !brokertest.WaitFor(60*time.Second, func() bool { fs, _ = clusterFindings(t); return ok(fs) }) {
			t.Fatalf("%s: findings %q", what, fs)
		}
		return fs
	}
	clusterOnly := func(fs []string) []string {
		return slices.DeleteFunc(slices.Clone(fs), func(f string) bool {
			return !strings.HasPrefix(f, "node-down") && !strings.HasPrefix(f, "member-down") && !strings.HasPrefix(f, "quorum-lost") && !strings.HasPrefix(f, "queue-node-down")
		})
	}
	waitFor("all up", func(fs []string) bool { return len(clusterOnly(fs)) == 0 })

	c.Stop(t, 0) // the leader's node of orders.dlq and orders
	fs, errOut := clusterFindings(t)
	down0 := "node-down " + c.Nodes[0].Name
	if !slices.Contains(fs, down0) {
		t.Errorf("one refresh after %s stopped: findings %q, want %q", c.Nodes[0].Name, fs, down0)
	}
	if want := "ladder: using 127.0.0.1:" + c.Nodes[1].AMQPPort + " (passed over 127.0.0.1:" + c.Nodes[0].AMQPPort + " (AMQP): connection refused)"; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	// Its members online come with the queue listing, which the node's
	// change made ladder read in full: the same read says it.
	if !slices.Contains(fs, "member-down orders.dlq") {
		t.Errorf("one refresh after %s stopped: findings %q, want member-down orders.dlq", c.Nodes[0].Name, fs)
	}
	t.Logf("one node down: %q", clusterOnly(fs))

	c.Stop(t, 1)
	fs, _ = clusterFindings(t)
	for _, want := range []string{"quorum-lost orders.dlq", "queue-node-down audit"} {
		if !slices.Contains(fs, want) {
			t.Errorf("one refresh after %s stopped too: findings %q, want %q", c.Nodes[1].Name, fs, want)
		}
	}
	t.Logf("two nodes down: %q", clusterOnly(fs))
	for _, n := range c.Nodes[:2] {
		if !slices.Contains(fs, "node-down "+n.Name) {
			t.Errorf("findings %q lack node-down %s", fs, n.Name)
		}
	}

	c.Start(t, 0)
	c.Start(t, 1)
	waitFor("all back", func(fs []string) bool { return len(clusterOnly(fs)) == 0 })
}

// Stop the node a move is connected to, in the middle of 50,000
// persistent messages between two quorum queues: the move finishes through
// another node; every id is in the target; duplicates are no more than
// the report says.
func TestClusterMoveGoesOnWhenItsNodeStops(t *testing.T) {
	c := brokertest.RequireCluster(t)
	nodes := clusterEnv(t, c)
	quorum := amqp.Table{"x-queue-type": "quorum"}
	// Their leaders on node 2: the queues outlive node 1, which ladder
	// connects to first.
	declareOn(t, nodes[1], "src", quorum)
	declareOn(t, nodes[1], "dst", quorum)
	const n = 50000
	conn, err := nodes[1].DialAMQP(context.Background(), "test cluster publish")
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
	for i := 0; i < n; i += 1000 {
		var msgs []amqp.Publishing
		for j := i; j < min(n, i+1000); j++ {
			msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprintf("m-%d", j), DeliveryMode: amqp.Persistent, Body: []byte(fmt.Sprintf(`{"n":%d}`, j))})
		}
		if err := brokertest.PublishConfirmed(context.Background(), ch, "", "src", msgs); err != nil {
			t.Fatal(err)
		}
	}
	audit := t.TempDir() + "/audit.jsonl"
	move := startLadder("move", "--from", "src", "--to", "queue:dst", "--yes", "--audit-log", audit, "-o", "json")
	if !brokertest.WaitFor(2*time.Minute, func() bool { return move.finished() || depthOn(t, nodes[1], "dst") >= 5000 }) {
		t.Fatalf("the move did not get going; stderr %q", move.stderr.String())
	}
	if move.finished() {
		t.Fatalf("the move ended before its node could stop: %s %s", move.stdout.String(), move.stderr.String())
	}
	c.Stop(t, 0)
	select {
	case <-move.done:
	case <-time.After(5 * time.Minute):
		t.Fatalf("the move did not end 5 minutes after its node stopped; stderr %q", move.stderr.String())
	}
	var rep broker.MoveReport
	if err := json.Unmarshal([]byte(move.stdout.String()), &rep); err != nil {
		t.Fatalf("move exit %d: %v\n%s\n%s", move.code, err, move.stdout.String(), move.stderr.String())
	}
	if move.code != exitOK {
		t.Errorf("move exit %d, want 0 (it went on through another node): %s; notes %q", move.code, move.stderr.String(), rep.Notes)
	}
	if !slices.ContainsFunc(rep.Notes, func(s string) bool { return strings.Contains(s, "the move went on through") }) {
		t.Errorf("notes %q: nothing says the move went on through another node", rep.Notes)
	}
	// Every id on the broker, counted through node 2.
	seen := map[string]int{}
	for _, q := range []string{"dst", "src"} {
		for id, k := range consumeIDs(t, nodes[1], q) {
			seen[id+"@"+q] += k
		}
	}
	missing, dups := 0, 0
	for i := range n {
		id := fmt.Sprintf("m-%d", i)
		switch d, s := seen[id+"@dst"], seen[id+"@src"]; {
		case d == 0 && s == 0:
			missing++
		case d == 0:
			t.Errorf("%s left in the source", id)
		default:
			dups += d - 1 + s
		}
	}
	t.Logf("moved %d, %d duplicates, at most %d reported; notes %q", rep.Moved, dups, rep.DuplicatesAtMost, rep.Notes)
	if missing > 0 {
		t.Fatalf("%d messages lost", missing)
	}
	if dups > rep.DuplicatesAtMost {
		t.Errorf("%d duplicates, the report says at most %d", dups, rep.DuplicatesAtMost)
	}
	// The audit log's done line carries the same report.
	if b := readFile(t, audit); !strings.Contains(b, `"duplicates_at_most":`+fmt.Sprint(rep.DuplicatesAtMost)) {
		t.Errorf("audit log lacks the report's duplicates_at_most %d:\n%s", rep.DuplicatesAtMost, b)
	}
}

func depthOn(t *testing.T, r *rabbit.Resolved, queue string) int {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test depth")
	if err != nil {
		return 0
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return 0
	}
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		return 0
	}
	return q.Messages
}

// consumeIDs takes every message of queue (acked) and counts each id.
func consumeIDs(t *testing.T, r *rabbit.Resolved, queue string) map[string]int {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test count ids")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Qos(2000, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(queue, "", true, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume %s: %v", queue, err)
	}
	out := map[string]int{}
	for {
		select {
		case d := <-ds:
			out[d.MessageId]++
			continue
		case <-time.After(2 * time.Second):
		}
		if depthOn(t, r, queue) == 0 {
			return out
		}
	}
}
