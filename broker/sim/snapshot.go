package sim

import (
	"context"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Snapshot describes the vhost the way the live client does: every queue
// with depth, consumers and rates, the exchanges (the default one included)
// and bindings, and the ladders and findings the retry engine derives.
func (s *Sim) Snapshot(ctx context.Context) (*broker.Snapshot, error) {
	defer s.mu.Unlock() // enter locks, even when it fails
	if err := s.enter(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v := topology.Vhost{Name: VhostName}
	for _, q := range s.queues {
		qi := q.info()
		qi.Rates = q.rates()
		v.Queues = append(v.Queues, qi)
	}
	v.Exchanges = append(v.Exchanges, topology.Exchange{Name: "", Type: topology.ExchangeDirect, MessagesDelayed: -1})
	for _, x := range s.exchanges {
		x.Arguments = cloneTable(x.Arguments)
		v.Exchanges = append(v.Exchanges, x)
	}
	for _, b := range s.bindings {
		b.Arguments = cloneTable(b.Arguments)
		v.Bindings = append(v.Bindings, b)
	}
	topology.Inflow(&v)
	s.evidence.Apply(&v)
	ladders := topology.Discover(&v)
	return &broker.Snapshot{
		Vhost:         VhostName,
		BrokerVersion: s.opt.BrokerVersion,
		TakenAt:       s.now,
		Topology:      v,
		Ladders:       ladders,
		Findings:      topology.Findings(&v, ladders),
	}, nil
}

// AllVhosts implements broker.AllVhostsReader: the simulation's one vhost.
func (s *Sim) AllVhosts(ctx context.Context) ([]topology.Vhost, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return []topology.Vhost{snap.Topology}, nil
}
