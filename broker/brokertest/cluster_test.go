package brokertest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"
)

// quorumState is what the management API says of a quorum queue's members.
type quorumState struct {
	Leader  string   `json:"leader"`
	Members []string `json:"members"`
	Online  []string `json:"online"`
}

func getQuorum(t *testing.T, n ClusterNode, vhost, queue string) (quorumState, error) {
	t.Helper()
	var q quorumState
	err := APIGet(n.Resolved, "queues/"+url.PathEscape(vhost)+"/"+url.PathEscape(queue), &q)
	return q, err
}

// TestClusterLeaderMoves proves RequireCluster, Stop and Start: a quorum
// queue's leader moves off a stopped node, which the other nodes' APIs
// report (online two of three members), and all come back after Start.
func TestClusterLeaderMoves(t *testing.T) {
	c := RequireCluster(t)
	r := OwnVhostOn(t, c.Nodes[0].Resolved)
	queue := Name(t, "qq")
	body, _ := json.Marshal(map[string]any{"durable": true, "arguments": map[string]any{"x-queue-type": "quorum"}})
	if err := API(r, http.MethodPut, "queues/"+url.PathEscape(r.Vhost)+"/"+url.PathEscape(queue), body); err != nil {
		t.Fatal(err)
	}

	var q quorumState
	var err error
	if !WaitFor(30*time.Second, func() bool {
		q, err = getQuorum(t, c.Nodes[0], r.Vhost, queue)
		return err == nil && q.Leader != "" && len(q.Online) == ClusterSize
	}) {
		t.Fatalf("quorum queue %s: no leader with %d members online: %+v, %v", queue, ClusterSize, q, err)
	}
	leader := slices.IndexFunc(c.Nodes, func(n ClusterNode) bool { return n.Name == q.Leader })
	if leader < 0 {
		t.Fatalf("leader %q is none of the cluster's nodes", q.Leader)
	}
	other := c.Nodes[(leader+1)%len(c.Nodes)]

	c.Stop(t, leader)
	if !WaitFor(time.Minute, func() bool {
		q, err = getQuorum(t, other, r.Vhost, queue)
		return err == nil && q.Leader != "" && q.Leader != c.Nodes[leader].Name && len(q.Online) == ClusterSize-1
	}) {
		t.Fatalf("after stopping %s, %s says: %+v, %v (want another leader, %d online)", c.Nodes[leader].Name, other.Name, q, err, ClusterSize-1)
	}
	if len(q.Members) != ClusterSize || slices.Contains(q.Online, c.Nodes[leader].Name) {
		t.Errorf("after stopping %s: members %v (want all %d), online %v (want it not)", c.Nodes[leader].Name, q.Members, ClusterSize, q.Online)
	}
	t.Logf("leader %s → %s; online %v", c.Nodes[leader].Name, q.Leader, q.Online)

	c.Start(t, leader)
	if !WaitFor(time.Minute, func() bool {
		q, err = getQuorum(t, other, r.Vhost, queue)
		return err == nil && len(q.Online) == ClusterSize
	}) {
		t.Fatalf("after starting %s again: %+v, %v (want %d online)", c.Nodes[leader].Name, q, err, ClusterSize)
	}
}
