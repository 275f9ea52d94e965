package sim

import (
	"context"
	"errors"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// Peek browses the first ready messages of a queue without removing them.
// Like a real consume-and-close peek it sets their redelivered flag, so the
// next peek (and the worker) sees them redelivered. Peeks are not counted in
// the queue's rates.
func (s *Sim) Peek(ctx context.Context, name string, opt broker.PeekOptions) (*broker.PeekResult, error) {
	defer s.mu.Unlock() // enter locks, even when it fails
	if err := s.enter(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q := s.byName[name]
	if q == nil {
		return nil, s.errorf("peek %s: NOT_FOUND - no queue %q in vhost %q", name, name, VhostName)
	}
	if opt.Limit <= 0 {
		opt.Limit = broker.DefaultPeekLimit
	}
	if opt.BodyPreview <= 0 {
		opt.BodyPreview = broker.DefaultBodyPreview
	}
	info := q.info()
	res := &broker.PeekResult{
		Queue: name, Type: info.Type, Total: info.Messages, Ready: info.Ready,
		// A consume-and-close peek of a classic queue; the simulation sets
		// the redelivered flags too.
		SideEffects: broker.PeekSideEffects(retry.QueueClassic, s.opt.BrokerVersion), Messages: []broker.Message{}, PeekedAt: s.now,
	}
	// As the live broker: at most the ready messages there are now, handed
	// to Each or kept, with the same progress and bounds (BrowseRun).
	run := broker.NewBrowseRun(res, opt, min(opt.Limit, len(q.ready)))
	defer run.Finish()
	if run.Done() {
		res.SideEffects = []string{} // nothing delivered, nothing changed
		return res, nil
	}
	deathQueues := retry.DeathQueuesOf(s.topology().ladders, name)
	mains := retry.MainQueues(s.topology().ladders)
	for _, m := range q.ready[:run.Want()] {
		// Position is given by the run: queue order.
		err := run.Take(decode(m, run.Read(), opt.BodyPreview, deathQueues, mains))
		m.redelivered = true
		if errors.Is(err, broker.ErrStopBrowse) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	broker.AnnotateHoL(res, q.set, s.now)
	return res, nil
}

// decode turns a queued message into what a peek reports, through the
// same decoder as the live broker.
func decode(m *message, pos, preview int, deathQueues, mains map[string]bool) broker.Message {
	out := broker.Message{
		Position:    pos,
		Exchange:    m.exchange,
		RoutingKey:  m.routingKey,
		Redelivered: m.redelivered,
		Properties:  m.props,
		Headers:     cloneHeaders(m.headers),
	}
	if m.props.Timestamp != nil {
		t := *m.props.Timestamp
		out.Properties.Timestamp = &t
	}
	broker.DecodeMessage(&out, m.body, preview, deathQueues, mains)
	return out
}
