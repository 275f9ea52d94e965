package rabbit

import (
	"context"
	"errors"
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

// A full read (queues with ladder's columns, exchanges, bindings) makes the
// broker compute every queue's stats: on 4.3 about as much as the plain
// GET /api/queues it is meant to beat. Prometheus' /metrics/detailed with
// a vhost and two or four families costs it a tenth of that. So Vhost, the
// steady refresh, reads fully only on the first poll, when the last full
// read is older than topologyTTL, when Prometheus' queue names differ from
// the full read's (a queue appeared or vanished) or when Prometheus fails;
// in between it lays Prometheus' depths, consumers and counters over the
// last full read. VhostFresh (before a move) always reads fully.
//
// What Prometheus lacks keeps the last full read's value, at most
// topologyTTL old: arguments, policies, types, head_message_timestamp,
// messages_dlx, exchanges (and their messages_delayed) and bindings
// (Vhost.FullReadAt says when). Rates are Prometheus counter deltas once
// two polls had them, on full reads too, so they do not jump when one
// comes between; before that (the second poll) they are the last full
// read's server rates.

// fullRead is what the last full read returned, for steady refreshes.
type fullRead struct {
	vhost     string
	at        time.Time
	queues    []apiQueue
	exchanges []apiExchange
	bindings  []topology.Binding
}

// promTimeout bounds a Prometheus read of the steady refresh: an endpoint
// that does not answer costs a refresh this much once per topologyTTL.
const promTimeout = 5 * time.Second

// errPromCluster: the Prometheus endpoint answers for another broker (the
// default URL is the API host on 15692, which may be another node's).
var errPromCluster = errors.New("prometheus reports another cluster")

// promUsable tells whether a poll may read Prometheus now: after the first
// poll, unless the endpoint failed within topologyTTL. m.mu is held.
//
// On 3.x with stats on only for a big vhost (BigFor3x): its Prometheus has
// no counters (queue_delivery_metrics and queue_exchange_metrics are 4.0+),
// so its steady refreshes keep the last full read's smoothed rates — the
// ack and redeliver rates a redelivery storm is seen by, up to a full-read
// interval old — and take only depths (and consumers where listed) from it.
// On a small vhost a full read every refresh is cheap enough to keep them
// fresh.
func (m *Management) promUsable(now time.Time) bool {
	if !m.promCounters() && (m.last == nil || !BigFor3x(len(m.last.queues))) {
		return false
	}
	return !m.prevAt.IsZero() && m.r.PrometheusURL != nil && !now.Before(m.promDownUntil)
}

// promCounters: the Prometheus endpoint has the per-queue counters rates
// are taken from (4.0+), or they are needed from it (stats off). m.mu is
// held.
func (m *Management) promCounters() bool {
	return m.noStats || topology.VersionAtLeast(m.version, 4, 0)
}

// promFailed makes the next polls full reads for topologyTTL.
func (m *Management) promFailed(now time.Time) {
	m.mu.Lock()
	m.promDownUntil = now.Add(topologyTTL)
	m.mu.Unlock()
}

// steadyProm reads vhost's queues from Prometheus for a steady refresh,
// bounded by promTimeout, and checks the endpoint is this broker's.
func (m *Management) steadyProm(ctx context.Context, vhost string) (map[string]*promQueue, error) {
	m.mu.Lock()
	cluster := m.cluster
	m.mu.Unlock()
	if cluster == "" {
		if _, err := m.BrokerVersion(ctx); err != nil {
			return nil, err
		}
		m.mu.Lock()
		cluster = m.cluster
		m.mu.Unlock()
	}
	pctx, cancel := context.WithTimeout(ctx, promTimeout)
	defer cancel()
	qs, got, err := m.prometheusScrape(pctx, vhost)
	if err != nil {
		return nil, err
	}
	if got == "" || got != cluster {
		return nil, errPromCluster
	}
	return qs, nil
}

// steady is Vhost's refresh between full reads; ok is false when a full
// read must be made instead.
func (m *Management) steady(ctx context.Context, vhost string) (topology.Vhost, bool, error) {
	m.mu.Lock()
	needVersion := m.last != nil && m.version == ""
	m.mu.Unlock()
	if needVersion { // promUsable needs it (cached after the first ask)
		if _, err := m.BrokerVersion(ctx); err != nil {
			return topology.Vhost{}, false, nil
		}
	}
	now := time.Now()
	m.mu.Lock()
	last := m.last
	ok := last != nil && last.vhost == vhost && now.Sub(last.at) < FullEvery(len(last.queues)) && m.promUsable(now)
	m.mu.Unlock()
	if !ok {
		return topology.Vhost{}, false, nil
	}
	prom, err := m.steadyProm(ctx, vhost)
	if err != nil {
		if ctx.Err() != nil {
			return topology.Vhost{}, false, ctx.Err()
		}
		m.promFailed(now)
		return topology.Vhost{}, false, nil
	}
	if len(prom) == 0 && len(last.queues) > 0 {
		m.promFailed(now) // an answer without queues: not a usable endpoint
		return topology.Vhost{}, false, nil
	}
	if !sameQueues(prom, last.queues) {
		return topology.Vhost{}, false, nil // a queue appeared or vanished
	}
	now = time.Now()

	v := topology.Vhost{Name: vhost, Bindings: last.bindings, FullReadAt: last.at, Exchanges: adaptExchanges(last.exchanges)}
	m.mu.Lock()
	defer m.mu.Unlock()
	counters := m.promCounters()
	v.RatesFrom = topology.RatesFromManagement
	if m.noStats || m.prevProm && counters {
		v.RatesFrom = topology.RatesFromPrometheus
	}
	prev, prevAt := m.prev, m.prevAt
	next := make(map[string]queueCounters, len(last.queues))
	for _, aq := range last.queues {
		q, c := adaptQueue(aq)
		p := prom[aq.Name]
		if p.hasDepth {
			q.Messages, q.Ready, q.Unacked = p.messages, p.ready, p.unacked
		}
		if counters {
			q, c = withPrometheus(q, queueCounters{}, p)
		} else {
			// 3.x: the full read's counters and smoothed rates stay (its
			// Prometheus has none); depths and the consumers it lists are
			// new. Removals are as old as the full read: arrivals between
			// full reads are the depth's change alone.
			c.messages, c.removedKnown = q.Messages, false
			if p.hasConsumers {
				q.Consumers = p.consumers
			}
		}
		pc, seen := prev[aq.Name]
		q.Rates = rates(serverRates(aq, c, pc, seen), c, pc, seen, now.Sub(prevAt))
		q.Rates.Arrived, q.Rates.ArrivedKnown = arrived(m.polls, aq.Name, c, now)
		next[aq.Name] = c
		v.Queues = append(v.Queues, q)
	}
	m.remember(next, now)
	m.prevProm = counters
	return v, true, nil
}

// serverRates is the row whose server rates rates() prefers: without them
// once this poll's and the previous one's counters are both Prometheus',
// whose deltas are then the rates (full read or not, so they stay
// continuous); with them (the last full read's) until then.
func serverRates(aq apiQueue, cur, prev queueCounters, seen bool) apiQueue {
	if seen && cur.fromProm && prev.fromProm {
		aq.MessageStats = nil
	}
	return aq
}

// sameQueues: Prometheus lists exactly the queues of the full read.
func sameQueues(prom map[string]*promQueue, queues []apiQueue) bool {
	if len(prom) != len(queues) {
		return false
	}
	for _, q := range queues {
		if prom[q.Name] == nil {
			return false
		}
	}
	return true
}

func adaptExchanges(exchanges []apiExchange) []topology.Exchange {
	var out []topology.Exchange
	for _, e := range exchanges {
		x := topology.Exchange{Name: e.Name, Type: e.Type, Arguments: e.Arguments, MessagesDelayed: -1}
		if e.MessagesDelayed != nil {
			x.MessagesDelayed = *e.MessagesDelayed
		}
		out = append(out, x)
	}
	return out
}
