package topology

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func clusterVhost() *Vhost {
	return &Vhost{Name: "/", Nodes: []Node{
		{Name: "rabbit@a", Running: true}, {Name: "rabbit@b", Running: true}, {Name: "rabbit@c", Running: true},
	}, Queues: []Queue{
		{Name: "orders.dlq", Type: QueueQuorum, Node: "rabbit@a", Members: []string{"rabbit@a", "rabbit@b", "rabbit@c"}, Online: []string{"rabbit@a", "rabbit@b", "rabbit@c"}},
		{Name: "audit", Type: QueueClassic, Node: "rabbit@b"},
	}}
}

func clusterCodes(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		about := f.Queue
		if about == "" {
			about = f.Node
		}
		out = append(out, string(f.Severity)+" "+f.Code+" "+about)
	}
	return out
}

func TestClusterFindings(t *testing.T) {
	if fs := ClusterFindings(clusterVhost()); len(fs) != 0 {
		t.Fatalf("a healthy cluster: %q", clusterCodes(fs))
	}
	if fs := ClusterFindings(&Vhost{Queues: clusterVhost().Queues}); fs != nil {
		t.Fatalf("no nodes listed (a user without the monitoring tag): %q", clusterCodes(fs))
	}

	// The leader's node stopped: the leader moved, 2 of 3 online.
	v := clusterVhost()
	v.Nodes[0].Running = false
	v.Queues[0].Node, v.Queues[0].Online = "rabbit@b", []string{"rabbit@b", "rabbit@c"}
	fs := Findings(v, Discover(v))
	if want := []string{"error node-down rabbit@a", "warning member-down orders.dlq"}; !reflect.DeepEqual(clusterCodes(fs), want) {
		t.Errorf("one node down: %q, want %q", clusterCodes(fs), want)
	}
	for _, f := range fs {
		if f.Code == CodeMemberDown && !strings.Contains(f.Message, "2 of 3 members online (rabbit@a down): still available") {
			t.Errorf("member-down says %q", f.Message)
		}
	}

	// A second: below quorum; the classic queue's node is down too.
	v.Nodes[1].Running = false
	v.Queues[0].Online = []string{"rabbit@c"}
	fs = Findings(v, Discover(v))
	want := []string{"error node-down rabbit@a", "error node-down rabbit@b", "error queue-node-down audit", "error quorum-lost orders.dlq"}
	got := clusterCodes(fs)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("two nodes down: %q, want %q", got, want)
	}
	for _, f := range fs {
		if f.Code == CodeQuorumLost && !strings.Contains(f.Message, "1 of 3 members online, below quorum (2): unavailable") {
			t.Errorf("quorum-lost says %q", f.Message)
		}
	}

	// Below quorum there is no leader to update the queue's figures: a
	// member whose node is down is not online, whatever they still say.
	v = clusterVhost()
	v.Nodes[0].Running, v.Nodes[1].Running = false, false
	v.Queues[0].Online = []string{"rabbit@b", "rabbit@c"} // stale: b went down after
	if got := clusterCodes(ClusterFindings(v)); !slices.Contains(got, "error quorum-lost orders.dlq") {
		t.Errorf("stale online list, two nodes down: %q, want quorum-lost", got)
	}

	// Alarms and partitions, each named by its node.
	v = clusterVhost()
	v.Nodes[1].MemAlarm, v.Nodes[2].DiskAlarm, v.Nodes[2].Partitions = true, true, []string{"rabbit@a"}
	if got, want := clusterCodes(ClusterFindings(v)), []string{"error resource-alarm rabbit@b", "error resource-alarm rabbit@c", "error partition rabbit@c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("alarms: %q, want %q", got, want)
	}
	if up, total := NodesUp(v); up != 3 || total != 3 {
		t.Errorf("NodesUp = %d/%d", up, total)
	}
}
