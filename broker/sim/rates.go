package sim

import (
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

// rateWindow is the span rates are averaged over, like the management
// API's default sample window.
const rateWindow = 10 * time.Second

// keepSamples bounds each queue's history (one sample a second).
const keepSamples = 61

// sample is one second's cumulative counters of a queue.
type sample struct {
	at                                       time.Time
	published, delivered, acked, redelivered int64
	depth                                    int64
}

// sample records every queue's counters at t.
func (s *Sim) sample(t time.Time) {
	for _, q := range s.queues {
		q.samples = append(q.samples, sample{
			at: t, published: q.published, delivered: q.delivered, acked: q.acked,
			redelivered: q.redelivered, depth: int64(len(q.ready)) + q.unacked,
		})
		if n := len(q.samples); n > keepSamples {
			q.samples = append(q.samples[:0], q.samples[n-keepSamples:]...)
		}
	}
}

// rates are per-second averages over the last rateWindow of samples (over
// what there is when the queue is younger). Net is the depth's change, and
// Arrived the depth's change plus what was acked (as the live client
// derives it: dead letters are not counted as publishes there either).
func (q *queue) rates() topology.Rates {
	r := topology.Rates{Known: true}
	n := len(q.samples)
	if n < 2 {
		return r
	}
	last := q.samples[n-1]
	first := q.samples[0]
	for i := n - 2; i >= 0; i-- {
		first = q.samples[i]
		if !first.at.After(last.at.Add(-rateWindow)) {
			break
		}
	}
	secs := last.at.Sub(first.at).Seconds()
	if secs <= 0 {
		return r
	}
	per := func(a, b int64) float64 { return float64(b-a) / secs }
	r.Publish = per(first.published, last.published)
	r.Deliver = per(first.delivered, last.delivered)
	r.Ack = per(first.acked, last.acked)
	r.Redeliver = per(first.redelivered, last.redelivered)
	r.Net, r.NetKnown = per(first.depth, last.depth), true
	r.Arrived, r.ArrivedKnown = max(0, per(first.depth, last.depth)+r.Ack), true
	return r
}
