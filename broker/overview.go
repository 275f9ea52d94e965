package broker

import (
	"context"

	"github.com/ladder-tui/ladder/retry/topology"
)

// AllVhostsReader reads every vhost the user can see at once: the
// all-vhosts overview (topology --all-vhosts, the TUI's vhost switcher), at
// the cost of one listing of all queues (and of exchanges and bindings),
// whatever the number of vhosts. Each vhost is analysed as its own
// snapshot is (broker/analysis), the vhost on fire first.
type AllVhostsReader interface {
	AllVhosts(ctx context.Context) ([]VhostSummary, error)
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
	// DLQGrowth is how much they grew over the reads of the last
	// topology.DLQGrowingWindow (topology --all-vhosts --over, the TUI's
	// refreshes); null with one read.
	DLQGrowth *int64 `json:"dlq_growth"`
	// Findings counts its findings; Worst is the first of them (errors
	// first), null when there is none.
	Findings int               `json:"findings"`
	Worst    *topology.Finding `json:"worst_finding"`
}
