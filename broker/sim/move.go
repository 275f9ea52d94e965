package sim

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// moveBatch is how many messages move per lock hold; progress is reported
// after each batch, with the lock released so the UI can keep polling.
const moveBatch = 100

// MovedFromHeader records where a moved message came from.
const MovedFromHeader = "x-ladder-moved-from"

// Via values of a MoveReport.
const (
	ViaDirect          = "direct"
	ViaTier            = "tier"
	ViaDelayedExchange = "delayed-exchange"
	ViaDelayQueue      = "delay-queue"
)

// hop is one message's planned move: the publish that starts it, and what
// happens after.
type hop struct {
	m        *message
	pos      int
	exchange string // first publish
	key      string
	headers  retry.Headers
	via      string
	declare  *declaration // per-delay queue to (re)declare first
	note     string
	skip     bool // no origin: left in the source
	returned bool // the target route reaches no queue: left in the source
}

type declaration struct {
	name string
	args map[string]any
}

// Move moves ready messages of req.From loss-free: a message leaves the
// source only once its publish reached a queue. Targets: a queue (default
// exchange), an exchange with a routing key, or each message's origin from
// x-death (messages without one are skipped). A delay goes through the
// source ladder's tier with exactly that TTL when the tier's return reaches
// the same queues as the target, else through a per-delay wait queue that
// dead-letters to the target and expires when unused.
func (s *Sim) Move(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	// A dry run changes nothing, so read-only mode allows it.
	if s.opt.ReadOnly && !req.DryRun {
		return nil, s.errorf("move from %s refused: the client is read-only", req.From)
	}
	start := time.Now()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	s.catchUp()
	rep, hops, err := s.planMove(req)
	s.mu.Unlock()
	if err != nil || req.DryRun {
		return rep, err
	}
	report := func() {
		if progress != nil {
			progress(broker.MoveProgress{
				Total: rep.Requested, Done: rep.Moved + rep.Failed + rep.Returned + rep.Skipped,
				Moved: rep.Moved, Failed: rep.Failed, Elapsed: time.Since(start),
			})
		}
	}
	vias := map[string]bool{}
	gone := 0
	for len(hops) > 0 {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("sim: move from %s: %w", req.From, err)
		}
		n := min(moveBatch, len(hops))
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return rep, ErrClosed
		}
		gone += s.moveBatch(req.From, hops[:n], rep, vias)
		s.mu.Unlock()
		hops = hops[n:]
		report()
	}
	if gone > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d %s left %s before %s could be moved (consumed or expired); counted as failed",
			gone, plural(gone, "message", "messages"), req.From, plural(gone, "it", "they")))
	}
	if len(vias) > 1 {
		rep.Notes = append(rep.Notes, "messages took different ways: "+joinKeys(vias))
	}
	return rep, nil
}

// moveBatch publishes the batch's messages still in the source and removes
// them; it returns how many had already left. Callers hold mu.
func (s *Sim) moveBatch(from string, batch []hop, rep *broker.MoveReport, vias map[string]bool) (gone int) {
	src := s.byName[from]
	want := map[*message]bool{}
	for _, h := range batch {
		if !h.skip && !h.returned {
			want[h.m] = true
		}
	}
	present := map[*message]bool{}
	if src != nil {
		for _, m := range src.remove(want) {
			present[m] = true
		}
	}
	for _, h := range batch {
		switch {
		case h.skip:
			rep.Skipped++
			continue
		case h.returned:
			rep.Returned++
			continue
		case !present[h.m]:
			rep.Failed++
			gone++
			continue
		}
		if h.declare != nil {
			if err := s.declareQueue(h.declare.name, h.declare.args); err != nil {
				s.putBack(src, h.m)
				rep.Failed++
				rep.Notes = append(rep.Notes, err.Error())
				continue
			}
		}
		qs, err := s.publish(h.exchange, h.key, h.m.props, h.headers, h.m.body)
		if err != nil || len(qs) == 0 {
			s.putBack(src, h.m)
			rep.Failed++
			continue
		}
		rep.Moved++
		vias[h.via] = true
	}
	return gone
}

// putBack returns a message whose publish failed to the head of the source,
// the place a requeued delivery goes (its original position is lost, as
// with basic.nack requeue=true after other messages were taken).
func (s *Sim) putBack(src *queue, m *message) {
	if src == nil {
		return
	}
	m.redelivered = true
	src.ready = slices.Insert(src.ready, 0, m)
}
