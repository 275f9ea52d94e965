package rabbit

import (
	"context"
	"maps"
	"net/url"

	"github.com/ladder-tui/ladder/retry/topology"
)

// The cluster's nodes, read once a snapshot; where each queue lives comes
// with the queue listing (queueColumns).

// Nodes lists the cluster's nodes: running, resource alarms, partitions
// (one request, whatever the number of queues).
func (m *Management) Nodes(ctx context.Context) ([]topology.Node, error) {
	var ns []struct {
		Name       string   `json:"name"`
		Running    bool     `json:"running"`
		MemAlarm   bool     `json:"mem_alarm"`
		DiskAlarm  bool     `json:"disk_free_alarm"`
		Partitions []string `json:"partitions"`
		// The node's version is its rabbit application's.
		Applications []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"applications"`
	}
	q := url.Values{"columns": {"name,running,mem_alarm,disk_free_alarm,partitions,applications"}}
	if err := m.getJSON(ctx, "list nodes", "nodes", q, &ns); err != nil {
		return nil, err
	}
	out := make([]topology.Node, 0, len(ns))
	for _, n := range ns {
		node := topology.Node{Name: n.Name, Running: n.Running, MemAlarm: n.MemAlarm, DiskAlarm: n.DiskAlarm, Partitions: n.Partitions}
		for _, a := range n.Applications {
			if a.Name == "rabbit" {
				node.Version = a.Version
			}
		}
		out = append(out, node)
	}
	return out, nil
}

// ClusterName is the overview's cluster_name, read with the version.
func (m *Management) ClusterName(ctx context.Context) string {
	if _, err := m.BrokerVersion(ctx); err != nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cluster
}

// nodesChanged reports whether nodes run otherwise than at the last call
// (false the first time, and when the broker lists no nodes).
func (l *Live) nodesChanged(nodes []topology.Node) bool {
	if len(nodes) == 0 {
		return false
	}
	now := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		now[n.Name] = n.Running
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	was := l.nodesRunning
	l.nodesRunning = now
	return was != nil && !maps.Equal(was, now)
}
