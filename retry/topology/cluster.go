package topology

import (
	"fmt"
	"slices"
	"strings"
)

// Node is one RabbitMQ node of the cluster, as the management API lists
// it (GET /api/nodes).
type Node struct {
	Name    string `json:"name"`
	Running bool   `json:"running"`
	// MemAlarm and DiskAlarm: a resource alarm, which blocks publishing
	// connections cluster-wide.
	MemAlarm  bool `json:"mem_alarm"`
	DiskAlarm bool `json:"disk_free_alarm"`
	// Partitions are the nodes this one cannot see.
	Partitions []string `json:"partitions"`
	// Version is its RabbitMQ version ("" for a node that is down).
	Version string `json:"version,omitempty"`
}

// Where a queue lives, as the queue listing says (no request per queue):
// a classic queue's node; a quorum queue's leader, members and the members
// online (Queue.Node, Members, Online).

// Cluster finding codes.
const (
	CodeNodeDown      = "node-down"
	CodeResourceAlarm = "resource-alarm"
	CodePartition     = "partition"
	CodeQuorumLost    = "quorum-lost"
	CodeMemberDown    = "member-down"
	CodeQueueNodeDown = "queue-node-down"
)

// ClusterFindings are what the nodes say, in lines an on-call engineer
// understands at once: a node down; a resource alarm (publishes blocked
// cluster-wide); a partition; and per queue of v, a quorum queue below
// quorum (unavailable) or with a member down (available, redundancy
// lost), a classic queue on a down node (unavailable). Nothing without
// nodes (a broker that did not say, or the simulation).
func ClusterFindings(v *Vhost) []Finding {
	if len(v.Nodes) == 0 {
		return nil
	}
	var out []Finding
	down := map[string]bool{}
	for _, n := range v.Nodes {
		if !n.Running {
			down[n.Name] = true
			out = append(out, Finding{Code: CodeNodeDown, Severity: SeverityError, Node: n.Name, Message: fmt.Sprintf(
				"node %s is down: classic queues on it are unavailable, quorum queues lost a member", n.Name)})
			continue
		}
		var alarms []string
		if n.MemAlarm {
			alarms = append(alarms, "memory")
		}
		if n.DiskAlarm {
			alarms = append(alarms, "disk")
		}
		if len(alarms) > 0 {
			out = append(out, Finding{Code: CodeResourceAlarm, Severity: SeverityError, Node: n.Name, Message: fmt.Sprintf(
				"node %s has a %s alarm: publishes are blocked on every node of the cluster", n.Name, strings.Join(alarms, " and "))})
		}
		if len(n.Partitions) > 0 {
			out = append(out, Finding{Code: CodePartition, Severity: SeverityError, Node: n.Name, Message: fmt.Sprintf(
				"node %s cannot see %s: the cluster is partitioned", n.Name, strings.Join(n.Partitions, ", "))})
		}
	}
	for _, q := range v.Queues {
		switch {
		case q.Type == QueueQuorum && len(q.Members) > 0:
			// A member is online when the queue says so and its node
			// runs: below quorum there is no leader to update the queue's
			// own figures, so the nodes tell first.
			online := 0
			need := len(q.Members)/2 + 1
			var gone []string
			for _, m := range q.Members {
				if slices.Contains(q.Online, m) && !down[m] {
					online++
				} else {
					gone = append(gone, m)
				}
			}
			switch {
			case online < need:
				out = append(out, Finding{Code: CodeQuorumLost, Severity: SeverityError, Queue: q.Name, Message: fmt.Sprintf(
					"%d of %d members online, below quorum (%d): unavailable, it takes and delivers nothing until %s returns",
					online, len(q.Members), need, strings.Join(gone, ", "))})
			case len(gone) > 0:
				out = append(out, Finding{Code: CodeMemberDown, Severity: SeverityWarning, Queue: q.Name, Message: fmt.Sprintf(
					"%d of %d members online (%s down): still available, but one more loss makes it unavailable",
					online, len(q.Members), strings.Join(gone, ", "))})
			}
		case q.Type != QueueQuorum && q.Node != "" && down[q.Node]:
			out = append(out, Finding{Code: CodeQueueNodeDown, Severity: SeverityError, Queue: q.Name, Node: q.Node, Message: fmt.Sprintf(
				"lives on %s, which is down: unavailable until that node returns", q.Node)})
		}
	}
	return out
}

// NodesUp counts the running nodes of v's cluster, of all it lists.
func NodesUp(v *Vhost) (up, total int) {
	for _, n := range v.Nodes {
		if n.Running {
			up++
		}
	}
	return up, len(v.Nodes)
}
