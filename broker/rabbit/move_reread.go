package rabbit

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// A running move reads the queues it reaches again: a length limit a
// policy added, or a queue filled from elsewhere, stops it before anything
// drops. The reads (the vhost's policies from the management API, each
// queue's ready count by a passive declare) run off the move's loop, which
// keeps taking, publishing and acking meanwhile: a slow API must not
// stall the move. The loop takes the result when it comes.

// rereadEvery is how often a running move starts a read of the queues it
// reaches (when none is under way); rereadMax bounds the queues read per
// round (a move to many origins reads them in turn).
const (
	rereadEvery = time.Second
	rereadMax   = 16
	// policiesWait bounds one listing of the vhost's policies.
	policiesWait = 5 * time.Second
	// policiesBackoffMax: after a failed listing the next waits twice as
	// long as the last, up to this.
	policiesBackoffMax = 30 * time.Second
)

// rereads is a move's state of its target reads: the loop's own.
type rereads struct {
	// results hears from the read under way (buffered: one that ends
	// after the move does not block).
	results chan rereadResult
	// run is the read under way, nil when none.
	run *rereadRun
	// next is the first of the reached queues the next read takes.
	next int
	// policyWait is the pause after a failed policies listing (0 after one
	// answered); none is made before policyDue.
	policyWait time.Duration
	policyDue  time.Time
	// policyNoted: the report says once that they could not be read.
	policyNoted bool
}

// rereadRun is a read under way.
type rereadRun struct {
	// names are the queues it reads, in order.
	names []string
	// pending counts, per queue, the messages in flight to it when the
	// read began and those published to it since: the ready count it
	// reads may not hold them yet (counting one twice errs on the side of
	// stopping early, never of dropping).
	pending map[string]int64
}

func (r *rereadRun) count(route moveplan.Route) {
	for _, q := range route.Reaches {
		r.pending[q]++
	}
	if route.Via == topology.ViaTier {
		r.pending[route.Queue]++
	}
}

// rereadResult is what a read found: each queue's ready count (a queue it
// could not read is left out, read again next round) and, when it listed
// them, the policies or why not.
type rereadResult struct {
	ready    map[string]int64
	listed   bool
	user, op []topology.PolicyDef
	err      error
}

// listPolicies lists the vhost's policies, bounded by policiesWait.
func listPolicies(ctx context.Context, l *Live) (user, op []topology.PolicyDef, err error) {
	ctx, cancel := context.WithTimeout(ctx, policiesWait)
	defer cancel()
	return l.mgmt.Policies(ctx, l.r.Vhost)
}

// readPolicies lists the vhost's policies before the move starts (see
// policiesRead).
func (m *mover) readPolicies(ctx context.Context) {
	user, op, err := listPolicies(ctx, m.l)
	m.policiesRead(user, op, err, time.Now(), false)
}

// policiesRead keeps a listing of the policies; a failed one keeps the
// last (or the vhost read's effective policies) and puts the next off,
// twice as long each time up to policiesBackoffMax (a user the API
// refuses is not asked every second). During the move the report says so
// once: a limit a policy adds meanwhile may go unseen.
func (m *mover) policiesRead(user, op []topology.PolicyDef, err error, now time.Time, moving bool) {
	rr := &m.rereads
	if err == nil {
		m.policies, m.opPolicies, m.havePolicies = user, op, true
		rr.policyWait, rr.policyDue = 0, time.Time{}
		return
	}
	rr.policyWait = min(max(2*rr.policyWait, 2*rereadEvery), policiesBackoffMax)
	rr.policyDue = now.Add(rr.policyWait)
	if moving && !rr.policyNoted {
		rr.policyNoted = true
		m.rep.Note(fmt.Sprintf("the vhost's policies could not be read during the move (%s): a length limit a policy added meanwhile may have gone unseen (asked again at most every %s)", broker.Describe(err), policiesBackoffMax))
	}
}

// startReread begins a read of the next few queues the move reached, off
// the loop, unless one is under way. Its result comes on rereads.results
// (applyReread).
func (m *mover) startReread(ctx context.Context, p *pipeline, now time.Time) {
	rr := &m.rereads
	qs := m.planner.ReachedQueues()
	if rr.run != nil || len(qs) == 0 {
		return
	}
	n := min(len(qs), rereadMax)
	run := &rereadRun{names: make([]string, n), pending: map[string]int64{}}
	for i := range run.names {
		run.names[i] = qs[(rr.next+i)%len(qs)]
	}
	rr.next = (rr.next + n) % len(qs)
	for _, pd := range p.inflight {
		run.count(pd.route)
	}
	rr.run = run
	if rr.results == nil {
		rr.results = make(chan rereadResult, 1)
	}
	list := !now.Before(rr.policyDue)
	go readTargets(ctx, m.l, m.conn, run.names, list, rr.results)
}

// readTargets reads, off the loop, the policies (when list) and the ready
// count of each of names, and posts the result.
func readTargets(ctx context.Context, l *Live, conn *amqp.Connection, names []string, list bool, results chan<- rereadResult) {
	res := rereadResult{ready: map[string]int64{}, listed: list}
	if list {
		res.user, res.op, res.err = listPolicies(ctx, l)
	}
	for _, name := range names {
		if ctx.Err() != nil {
			break
		}
		if ready, err := passiveDepth(conn, name); err == nil {
			res.ready[name] = int64(ready)
		}
	}
	results <- res
}

// rereadSent counts a publish the loop made while a read is under way
// (see rereadRun.pending).
func (m *mover) rereadSent(pd pending) {
	if m.rereads.run != nil {
		m.rereads.run.count(pd.route)
	}
}

// applyReread takes a read's result in the loop: the policies (or the
// pause after a failed listing), then each queue it read, with what was
// pending to it, for the planner, which stops the move before a limit.
func (m *mover) applyReread(res rereadResult, now time.Time) {
	run := m.rereads.run
	m.rereads.run = nil
	if res.listed {
		m.policiesRead(res.user, res.op, res.err, now, true)
	}
	if run == nil {
		return
	}
	for _, name := range run.names {
		if ready, ok := res.ready[name]; ok {
			m.planner.Reread(name, ready, run.pending[name])
		}
	}
}
