package broker

import (
	"cmp"
	"context"
	"slices"

	"github.com/ladder-tui/ladder/retry/topology"
)

// AllVhostsReader reads every vhost the user can see at once: what the
// all-vhosts overview (topology --all-vhosts, the TUI's vhost switcher)
// reads, at the cost of one listing of all queues (and of exchanges and
// bindings), whatever the number of vhosts.
type AllVhostsReader interface {
	AllVhosts(ctx context.Context) ([]topology.Vhost, error)
}

// VhostSummary is one vhost in the all-vhosts overview: enough to find the
// vhost on fire without knowing its name.
type VhostSummary struct {
	Vhost   string `json:"vhost"`
	Queues  int    `json:"queues"`
	Ladders int    `json:"ladders"`
	// DLQs are the dead-letter and error queues of its ladders (and the
	// targets of its dead-letter routes); DLQMessages what they hold.
	DLQs        int   `json:"dlqs"`
	DLQMessages int64 `json:"dlq_messages"`
	// DLQGrowth is how much they grew between two reads (topology
	// --all-vhosts --over, the TUI's refreshes); null with one read.
	DLQGrowth *int64 `json:"dlq_growth"`
	// Findings counts its findings; Worst is the first of them (errors
	// first), null when there is none.
	Findings int               `json:"findings"`
	Worst    *topology.Finding `json:"worst_finding"`
}

// Summarize is the overview of vhosts, the vhost on fire first (see
// SortSummaries). Each vhost's ladders and findings are the retry
// engine's, as its own topology would show them.
func Summarize(vhosts []topology.Vhost) []VhostSummary {
	out := make([]VhostSummary, 0, len(vhosts))
	for i := range vhosts {
		v := &vhosts[i]
		topology.Inflow(v)
		ladders := topology.Discover(v)
		fs := topology.Findings(v, ladders)
		topology.SortFindings(fs)
		s := VhostSummary{Vhost: v.Name, Queues: len(v.Queues), Ladders: len(ladders), Findings: len(fs)}
		if len(fs) > 0 {
			w := fs[0]
			s.Worst = &w
		}
		for _, name := range topology.DeadLetterQueues(v, ladders) {
			if q, ok := v.Queue(name); ok {
				s.DLQs++
				s.DLQMessages += q.Messages
			}
		}
		out = append(out, s)
	}
	SortSummaries(out)
	return out
}

// WithGrowth sets each of now's DLQGrowth from before (an earlier read of
// the same vhosts), and sorts again: growth is what is on fire.
func WithGrowth(before, now []VhostSummary) {
	was := make(map[string]int64, len(before))
	for _, s := range before {
		was[s.Vhost] = s.DLQMessages
	}
	for i := range now {
		if w, ok := was[now[i].Vhost]; ok {
			g := now[i].DLQMessages - w
			now[i].DLQGrowth = &g
		}
	}
	SortSummaries(now)
}

// SortSummaries orders the overview: the worst finding's severity (errors
// first), then the DLQs' growth, then their depth, then the name.
func SortSummaries(s []VhostSummary) {
	rank := func(v VhostSummary) int {
		if v.Worst == nil {
			return 3
		}
		return v.Worst.Severity.Rank()
	}
	growth := func(v VhostSummary) int64 {
		if v.DLQGrowth == nil {
			return 0
		}
		return *v.DLQGrowth
	}
	slices.SortStableFunc(s, func(a, b VhostSummary) int {
		return cmp.Or(
			cmp.Compare(rank(a), rank(b)),
			cmp.Compare(growth(b), growth(a)),
			cmp.Compare(b.DLQMessages, a.DLQMessages),
			cmp.Compare(a.Vhost, b.Vhost),
		)
	})
}
