package sim

import (
	"context"
	"errors"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Peek browses the first ready messages of a queue without removing them,
// by the live client's rules for the queue's type and the simulated
// version (TestPeekSimulationAndLiveBrokerAgree holds them to it):
//   - a classic queue, as a consume-and-close peek: redelivered is set;
//   - a quorum queue on 4.3+, as the AMQP 1.0 browse: x-acquired-count
//     rises, the delivery count does not, the order stays;
//   - a quorum queue before 4.3: refused before anything is touched under
//     read-only mode, and unless forced when it counts toward a delivery
//     limit; forced, x-delivery-count rises, and a message delivered as
//     often as the limit before is dead-lettered (or dropped) by the
//     return, as RabbitMQ does, and reported.
//
// Peeks are not counted in the queue's rates.
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
		return nil, s.errorf("peek: queue %q in vhost %s: %w", name, VhostName, broker.ErrNotFound)
	}
	if opt.Limit <= 0 {
		opt.Limit = broker.DefaultPeekLimit
	}
	if opt.BodyPreview <= 0 {
		opt.BodyPreview = broker.DefaultBodyPreview
	}
	info := q.info()
	version := s.opt.BrokerVersion
	if r := broker.PeekRefusal(info, version, s.readCost(q), s.opt.ReadOnly, opt.Force, ""); r != nil {
		r.Limit = opt.Limit
		return nil, r
	}
	mode := broker.PeekModeOf(info, version)
	// As RabbitMQ, which expires only its head: a reader that takes the
	// head uncovers the overdue messages behind it, and they leave at once.
	released := s.releaseOnRead(q, opt.Limit)
	res := &broker.PeekResult{
		Queue: name, Type: info.Type, Total: info.Messages, Ready: info.Ready,
		SideEffects: broker.PeekSideEffectsVia(broker.PeekModeOf(topology.Queue{Type: info.Type}, version), info.Type, version), Messages: []broker.Message{}, PeekedAt: s.now,
	}
	// As the live broker: at most the ready messages there are now, handed
	// to Each or kept, with the same progress and bounds (BrowseRun).
	run := broker.NewBrowseRun(res, opt, min(opt.Limit, len(q.ready)))
	defer run.Finish()
	if run.Done() {
		res.SideEffects = []string{} // nothing delivered, nothing changed
		broker.NotePartial(res)
		return res, nil
	}
	dec := decode.NewDecoder(&s.topology().vhost, s.topology().ladders, name)
	n := run.Want()
	var again []*message
	if mode == broker.PeekReleased {
		again = restoreOrderTakes(q, n)
	}
	browsed := q.ready[:n]
	taken := 0
	for _, m := range browsed {
		// Position is given by the run: queue order.
		err := run.Take(decodeSim(m, run.Read(), opt.BodyPreview, dec, version))
		m.redelivered = true
		taken++
		if q.typ == topology.QueueQuorum {
			m.acquiredCount++ // a quorum queue counts every acquisition (shown from 4.3)
			if mode != broker.PeekReleased {
				m.deliveryCount++ // a return counts a delivery
			}
		}
		if errors.Is(err, broker.ErrStopBrowse) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	browsed = browsed[:taken]
	for _, m := range again {
		m.acquiredCount++
	}
	if q.typ == topology.QueueQuorum && mode != broker.PeekReleased {
		broker.NoteDeadLettered(res, info, version)
		s.deadLetterPastLimit(q, browsed, info, version)
	}
	broker.NoteLeft(res, info, broker.OthersSeen{ConsumersBefore: q.consumers, ConsumersAfter: q.consumers, Unacked: q.unacked}, int64(released), s.now)
	decode.AnnotateHoL(res, q.set, s.now)
	broker.NotePartial(res)
	if s.evidence.Note(VhostName, res) {
		s.topo = nil // discovery weighs what this peek showed
	}
	return res, nil
}

// readCost is what a read of q costs on the simulated broker, by the live
// client's rules: its version's (PeekCostOf) and, where q's messages carry
// their own TTLs, the overdue ones a read may release (WithReleases, from
// the evidence and the ladders discovery sees). Callers hold mu.
func (s *Sim) readCost(q *queue) broker.PeekCost {
	info := q.info()
	topo := s.topology()
	if tq, ok := topo.vhost.Queue(q.name); ok {
		info.Seen = tq.Seen
	}
	return broker.WithReleases(broker.PeekCostOf(info, s.opt.BrokerVersion), info, &topo.vhost, topo.ladders)
}

// releaseOnRead dead-letters (or drops) the overdue messages a read of up
// to limit messages of q uncovers, as RabbitMQ does: it expires only its
// head, so a message whose TTL ran out behind a longer-lived one waits
// until a reader takes the one ahead, and then leaves at once, and so do
// the overdue ones right behind the last message the read takes. It
// returns how many left.
func (s *Sim) releaseOnRead(q *queue, limit int) int {
	gone := map[*message]bool{}
	taken := 0
	for _, m := range q.ready {
		if due, ok := q.due(m); ok && !due.After(s.now) {
			gone[m] = true
			continue
		}
		if taken == limit {
			break
		}
		taken++
	}
	if len(gone) == 0 {
		return 0
	}
	for _, m := range q.remove(gone) {
		s.deadLetter(q, m, retry.ReasonExpired)
	}
	return len(gone)
}

// restoreOrderTakes is what the live browse's second pass takes again
// (rabbit.amqp1Receiver.restoreOrder): a quorum queue delivers the messages
// returned to it first, in the order returned, so a browse of the first n
// that ends before the returned ones do would leave them behind the rest;
// the browse takes messages again, in rounds of doubling credit, until it
// has its own back, and releases them in the queue's order. The order
// stays (here it never changes); every message taken again counts one more
// acquisition. Read before the browse counts its own.
func restoreOrderTakes(q *queue, n int) []*message {
	if q.typ != topology.QueueQuorum || n >= len(q.ready) {
		return nil
	}
	if first := q.ready[0]; first.acquiredCount == 0 && first.deliveryCount == 0 {
		return nil // nothing was returned before: nothing to go ahead of
	}
	returned := 0 // the returned messages, delivered first
	for returned < len(q.ready) && (q.ready[returned].acquiredCount > 0 || q.ready[returned].deliveryCount > 0) {
		returned++
	}
	// After the browse's release the broker holds the other returned
	// ones, then the browsed, then the rest.
	order := make([]*message, 0, len(q.ready))
	if returned > n {
		order = append(order, q.ready[n:returned]...)
	}
	order = append(order, q.ready[:n]...)
	order = append(order, q.ready[max(n, returned):]...)
	ours := make(map[*message]bool, n)
	for _, m := range q.ready[:n] {
		ours[m] = true
	}
	pos, found, others := 0, 0, 0
	for found < n && pos < len(order) {
		end := min(pos+max(n-found, found+others), len(order))
		for _, m := range order[pos:end] {
			if ours[m] {
				found++
			} else {
				others++
			}
		}
		pos = end
	}
	return order[:pos]
}

// deadLetterPastLimit takes out of q the browsed messages whose return
// passed the delivery limit (delivered more often than it) and
// dead-letters them with reason delivery_limit.
func (s *Sim) deadLetterPastLimit(q *queue, browsed []*message, info topology.Queue, version string) {
	c := broker.PeekCostOf(info, version)
	if !c.Limited {
		return
	}
	var gone []*message
	for _, m := range browsed {
		if m.deliveryCount > c.DeliveryLimit {
			gone = append(gone, m)
		}
	}
	if len(gone) == 0 {
		return
	}
	set := make(map[*message]bool, len(gone))
	for _, m := range gone {
		set[m] = true
	}
	q.remove(set)
	for _, m := range gone {
		s.deadLetter(q, m, retry.ReasonDeliveryLimit)
	}
}

// decode turns a queued message into what a peek reports, through the
// same decoder as the live broker. A quorum queue's counters show as the
// broker shows them, once not zero: x-delivery-count, and from 4.3
// x-acquired-count.
func decodeSim(m *message, pos, preview int, dec *decode.Decoder, version string) broker.Message {
	out := broker.Message{
		Position:    pos,
		Exchange:    m.exchange,
		RoutingKey:  m.routingKey,
		Redelivered: m.redelivered,
		Properties:  m.props,
		Headers:     cloneHeaders(m.headers),
	}
	if m.deliveryCount > 0 || m.acquiredCount > 0 {
		h := out.Headers.Clone()
		if m.deliveryCount > 0 {
			h["x-delivery-count"] = m.deliveryCount
		}
		if m.acquiredCount > 0 && topology.VersionAtLeast(version, 4, 3) {
			h["x-acquired-count"] = m.acquiredCount
		}
		out.Headers = h
	}
	if m.props.Timestamp != nil {
		t := *m.props.Timestamp
		out.Properties.Timestamp = &t
	}
	dec.Decode(&out, m.body, preview)
	return out
}
