package analysis

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Memory is what a client remembers between reads, per vhost: what its
// peeks showed (evidence and looks, kept by broker.Evidence) and the
// history of its reads. Clients that share one (a vhost switch's, a
// failover's, ladder serve's sessions and their snapshot reader) show the
// same findings: each read is recorded once, by whoever made it, and
// analysed with everything remembered. Safe for concurrent use.
type Memory struct {
	evidence *broker.Evidence

	mu      sync.Mutex
	history map[string]*History
}

// NewMemory remembers with evidence (a new one when nil).
func NewMemory(evidence *broker.Evidence) *Memory {
	if evidence == nil {
		evidence = &broker.Evidence{}
	}
	return &Memory{evidence: evidence, history: map[string]*History{}}
}

// Evidence is what the memory's peeks showed (note each peek there).
func (m *Memory) Evidence() *broker.Evidence { return m.evidence }

// Snapshot records r in the history of its vhost and returns the analysis
// of it with everything remembered: what every face shows of the read.
// r.Topology is taken as read: the evidence is applied here.
func (m *Memory) Snapshot(r Reading) *broker.Snapshot {
	r.Topology.Queues = slices.Clone(r.Topology.Queues)
	m.evidence.Apply(&r.Topology)
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.record(r.Vhost, r.TakenAt, &r.Topology)
	return Analyze(r, h)
}

// record adds v's depths, read at at, to vhost's history. m.mu is held.
func (m *Memory) record(vhost string, at time.Time, v *topology.Vhost) *History {
	h := m.history[vhost]
	if h == nil {
		h = NewHistory()
		m.history[vhost] = h
	}
	depths := make(map[string]int64, len(v.Queues))
	in := map[string]float64{}
	for _, q := range v.Queues {
		depths[q.Name] = q.Messages
		if q.Rates.Known {
			in[q.Name] = q.Rates.Publish
		}
	}
	h.RecordRates(at, depths, in)
	return h
}

// Overview is the all-vhosts overview of vhosts read at at, the vhost on
// fire first (see SortSummaries): each vhost recorded in its history and
// analysed as its own snapshot would be, so its ladders, findings and DLQ
// growth are what its topology shows.
func (m *Memory) Overview(vhosts []topology.Vhost, version string, at time.Time) []broker.VhostSummary {
	out := make([]broker.VhostSummary, 0, len(vhosts))
	for _, v := range vhosts {
		snap := m.Snapshot(Reading{Vhost: v.Name, BrokerVersion: version, TakenAt: at, Topology: v})
		out = append(out, Summary(snap))
	}
	SortSummaries(out)
	return out
}

// Summary is one vhost's line of the overview, from its snapshot.
func Summary(s *broker.Snapshot) broker.VhostSummary {
	v := &s.Topology
	sum := broker.VhostSummary{Vhost: v.Name, Queues: len(v.Queues), Ladders: len(s.Ladders), Findings: len(s.Findings)}
	if len(s.Findings) > 0 {
		w := s.Findings[0]
		sum.Worst = &w
	}
	var grew int64
	known := false
	for _, name := range topology.DeadLetterQueues(v, s.Ladders) {
		q, ok := v.Queue(name)
		if !ok {
			continue
		}
		sum.DLQs++
		sum.DLQMessages += q.Messages
		if t := s.Trends[name]; t.GrowthKnown {
			grew += t.Growth
			known = true
		}
	}
	if known {
		sum.DLQGrowth = &grew
	}
	return sum
}

// SortSummaries orders the overview: the worst finding's severity (errors
// first), then the DLQs' growth, then their depth, then the name.
func SortSummaries(s []broker.VhostSummary) {
	rank := func(v broker.VhostSummary) int {
		if v.Worst == nil {
			return 3
		}
		return v.Worst.Severity.Rank()
	}
	growth := func(v broker.VhostSummary) int64 {
		if v.DLQGrowth == nil {
			return 0
		}
		return *v.DLQGrowth
	}
	slices.SortStableFunc(s, func(a, b broker.VhostSummary) int {
		return cmp.Or(
			cmp.Compare(rank(a), rank(b)),
			cmp.Compare(growth(b), growth(a)),
			cmp.Compare(b.DLQMessages, a.DLQMessages),
			cmp.Compare(a.Vhost, b.Vhost),
		)
	})
}
