package sim

import (
	"context"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/broker/wire"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Topology implements broker.Client.
func (s *Sim) Topology(ctx context.Context) (topology.Vhost, error) {
	defer s.mu.Unlock()
	if err := s.enter(); err != nil {
		return topology.Vhost{}, err
	}
	v := s.topology().vhost
	out := topology.Vhost{Name: v.Name}
	out.Queues = append(out.Queues, v.Queues...)
	out.Exchanges = append(out.Exchanges, v.Exchanges...)
	out.Bindings = append(out.Bindings, v.Bindings...)
	return out, ctx.Err()
}

// Publish implements broker.Client: a message that reaches no queue is
// returned when mandatory, as the broker does.
func (s *Sim) Publish(ctx context.Context, batch []broker.Outgoing) ([]broker.Outcome, error) {
	if s.opt.ReadOnly {
		return nil, s.errorf("publish: %w", broker.ErrReadOnly)
	}
	defer s.mu.Unlock()
	if err := s.enter(); err != nil {
		return nil, err
	}
	out := make([]broker.Outcome, len(batch))
	for i, o := range batch {
		if err := ctx.Err(); err != nil {
			out[i].Err = err
			continue
		}
		if err := wire.ValidHeaders(o.Headers); err != nil {
			out[i] = broker.Outcome{NotSent: true, Err: err}
			continue
		}
		if o.WaitQueue != "" {
			if err := s.declareQueue(o.WaitQueue, map[string]any(o.WaitQueueArgs)); err != nil {
				out[i].Err = err
				continue
			}
		}
		qs, err := s.publish(o.Exchange, o.RoutingKey, o.Properties, o.Headers.Clone(), o.Body)
		switch {
		case err != nil:
			out[i].Err = err
		case len(qs) == 0 && o.Mandatory:
			out[i].Returned = true
		default:
			out[i].Confirmed = true
		}
	}
	return out, nil
}

// Drain implements broker.Client.
func (s *Sim) Drain(ctx context.Context, queue string, limit int, handle func(*broker.Message) (bool, error)) (int, error) {
	if s.opt.ReadOnly {
		return 0, s.errorf("drain %s: %w", queue, broker.ErrReadOnly)
	}
	if err := s.enter(); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	q := s.byName[queue]
	if q == nil {
		s.mu.Unlock()
		return 0, s.errorf("drain: queue %q in vhost %s: %w", queue, VhostName, broker.ErrNotFound)
	}
	// Take the messages ready now; hand them over without the lock held.
	msgs := append([]*message(nil), q.ready...)
	mains := retry.MainQueues(s.topology().ladders)
	s.mu.Unlock()
	taken := 0
	for pos, m := range msgs {
		if limit > 0 && taken >= limit {
			break
		}
		if err := ctx.Err(); err != nil {
			return taken, err
		}
		d := decodeSim(m, pos, 1<<30, &decode.Decoder{DeathQueues: map[string]bool{queue: true}, Mains: mains}, s.opt.BrokerVersion)
		take, err := handle(&d)
		if err != nil {
			return taken, err
		}
		if take {
			s.mu.Lock()
			if src := s.byName[queue]; src != nil {
				src.remove(map[*message]bool{m: true})
			}
			s.mu.Unlock()
			taken++
		}
	}
	return taken, nil
}

// PublishLimits: the simulation takes any message.
func (s *Sim) PublishLimits(context.Context) (broker.PublishLimits, error) {
	return broker.PublishLimits{}, nil
}
