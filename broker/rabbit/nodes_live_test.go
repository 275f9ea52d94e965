package rabbit_test

import (
	"context"
	"slices"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A snapshot lists the cluster's nodes, and where each queue lives comes
// with the queue listing: a classic queue's node, a quorum queue's leader,
// members and those online.
func TestSnapshotSaysWhereQueuesLive(t *testing.T) {
	t.Parallel()
	f := newVhostFixture(t)
	f.declareQueue("classic", nil)
	f.declareQueue("quorum", amqp.Table{"x-queue-type": "quorum"})
	snap, err := f.live(true).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v := snap.Topology
	if len(v.Nodes) == 0 || !v.Nodes[0].Running || v.ClusterName == "" || v.Nodes[0].Version != snap.BrokerVersion {
		t.Fatalf("nodes %+v, cluster %q: want this node, running, its version %s, and the cluster's name", v.Nodes, v.ClusterName, snap.BrokerVersion)
	}
	node := v.Nodes[0].Name
	c, _ := v.Queue("classic")
	q, _ := v.Queue("quorum")
	if c.Node != node {
		t.Errorf("classic queue on %q, want %q", c.Node, node)
	}
	if q.Node != node || !slices.Equal(q.Members, []string{node}) || !slices.Equal(q.Online, []string{node}) {
		t.Errorf("quorum queue: leader %q, members %q, online %q; want %s for each", q.Node, q.Members, q.Online, node)
	}
	for _, fd := range snap.Findings {
		if fd.Node != "" {
			t.Errorf("a healthy node has a finding: %+v", fd)
		}
	}
}
