package ui

import (
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// Every message the UI passes around, in one place. Results of broker calls
// carry the generation or request id they were asked for, so a late answer
// to an old question is recognised and dropped.

// --- polling and connection ---

// pollMsg asks for a snapshot; gen must match the root's current generation
// or the tick is stale (a manual refresh or a vhost switch started a newer
// loop) and is dropped, so there is never more than one polling loop.
type pollMsg struct{ gen int }

// countdownMsg redraws "reconnecting in Ns" each second while disconnected
// and polls when the wait is over.
type countdownMsg struct{ gen int }

// snapshotMsg is the result of Client.Snapshot.
type snapshotMsg struct {
	gen  int
	snap *broker.Snapshot
	err  error
	at   time.Time
}

// pendingMsg ticks each second while a snapshot is in flight: the title
// counts how long the management API has not answered, and past slowAfter
// AMQP is asked for depths.
type pendingMsg struct{ gen int }

// probeMsg is what AMQP told while the management API was slow: the
// depths of the queues the UI knew (or err).
type probeMsg struct {
	gen    int
	depths map[string]int64
	err    error
	at     time.Time
}

// refreshMsg asks the root for a snapshot now (the home screen's r).
type refreshMsg struct{}

// --- queue browser ---

// peekMsg is the result of Client.Peek for request id. rows are the
// browser's rows, rendered in the command at cols so a big peek does not
// stall the UI goroutine.
type peekMsg struct {
	id    int
	queue string
	res   *broker.PeekResult
	err   error
	at    time.Time
	rows  []browserRow
	cols  browserCols
}

// --- move ---

// --- vhosts ---

// vhostsMsg is what a switcher of kind lists (kindVhost, kindContext).
type vhostsMsg struct {
	kind   string
	vhosts []string
	// summaries, when the client read every vhost at once, are the
	// vhosts' (in vhosts' order).
	summaries []broker.VhostSummary
	err       error
}

// switchVhostMsg asks the root to open a client for vhost.
type switchVhostMsg struct{ vhost string }

// switchContextMsg asks the root to open a client for the context name.
type switchContextMsg struct{ name string }

// clientOpenedMsg is the result of Options.Open for the vhost switcher
// (vhost set) or of Options.OpenContext for the context switcher
// (context set).
type clientOpenedMsg struct {
	vhost   string
	context string
	client  broker.Client
	err     error
}

func (m clientOpenedMsg) kind() string {
	if m.context != "" {
		return kindContext
	}
	return kindVhost
}

// --- navigation: screens ask the root to change focus ---

// openQueueMsg opens the browser on queue, which peeks it. A peek someone
// else feels (consumers, a delivery limit) is asked first; confirmed is the
// answer, so the root opens at once. force: the answer accepted a delivery
// counted toward a delivery limit, for the peek it opens with.
type openQueueMsg struct {
	queue     string
	confirmed bool
	force     bool
}

type openMessageMsg struct {
	queue   string
	message *broker.Message
	ladder  *retry.Ladder
	peeked  time.Time
	// spec is what m in the inspector opens the move dialog on: the
	// browser's own spec (depth, ladder, marks and their ids) with the
	// message as the cursor.
	spec movedialog.Spec
}

// openMoveMsg opens the move dialog; the root refuses it in read-only mode
// (the one place mutations are checked).
type openMoveMsg struct{ spec movedialog.Spec }

// backMsg closes the focused screen.
type backMsg struct{}

// statusMsg puts a line in the footer.
type statusMsg struct {
	text string
	err  bool
}
