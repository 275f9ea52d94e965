package rabbit

import (
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

// A peek redelivers what earlier deliveries (peeks among them) returned,
// and the broker counts those in the queue's redeliver rate — the rate the
// requeue-storm finding reads. So that ladder's own peeks never show as a
// storm, a client remembers its peeks' redeliveries for ownWindow and takes
// them out of the rates it reports. The broker's rates are averages over 5
// s samples, or counter deltas between polls of 2 s or so: counting each
// redelivery as if it filled one second over-corrects, never under.
const (
	ownWindow = 15 * time.Second
	ownSpread = time.Second
)

// ownRedeliveries is what one peek redelivered, and when.
type ownRedeliveries struct {
	queue string
	at    time.Time
	n     int
}

// noteOwn records that a peek of queue redelivered n messages.
func (l *Live) noteOwn(queue string, n int) {
	if n <= 0 {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.own = append(pruneOwn(l.own, now), ownRedeliveries{queue: queue, at: now, n: n})
}

// ownSince returns the client's recent peeks' redeliveries.
func (l *Live) ownSince(now time.Time) []ownRedeliveries {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.own = pruneOwn(l.own, now)
	return append([]ownRedeliveries(nil), l.own...)
}

func pruneOwn(own []ownRedeliveries, now time.Time) []ownRedeliveries {
	keep := own[:0]
	for _, o := range own {
		if now.Sub(o.at) < ownWindow {
			keep = append(keep, o)
		}
	}
	return keep
}

// discountOwn takes the client's own recent redeliveries out of each
// queue's redeliver rate.
func discountOwn(v *topology.Vhost, own []ownRedeliveries) {
	if len(own) == 0 {
		return
	}
	per := map[string]int{}
	for _, o := range own {
		per[o.queue] += o.n
	}
	for i := range v.Queues {
		q := &v.Queues[i]
		if n := per[q.Name]; n > 0 && q.Rates.Known {
			q.Rates.Redeliver = max(0, q.Rates.Redeliver-float64(n)/ownSpread.Seconds())
		}
	}
}
