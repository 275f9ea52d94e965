package sim

import (
	"context"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/analysis"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Snapshot describes the vhost the way the live client does: every queue
// with depth, consumers and rates, the exchanges (the default one included)
// and bindings, analysed with what the simulation remembers (its peeks'
// evidence, its earlier snapshots) as the live client's are.
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
	// Read under the lock, analysed under it too: the simulated clock
	// moves with each call.
	return s.memory.Snapshot(analysis.Reading{
		Vhost: VhostName, BrokerVersion: s.opt.BrokerVersion, TakenAt: s.now, Topology: v,
	}), nil
}

// AllVhosts implements broker.AllVhostsReader: the simulation's one vhost.
func (s *Sim) AllVhosts(ctx context.Context) ([]broker.VhostSummary, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	sum := analysis.Summary(snap)
	return []broker.VhostSummary{sum}, nil
}
