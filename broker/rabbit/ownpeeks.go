package rabbit

import (
	"sync"
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
	vhost string
	queue string
	at    time.Time
	n     int
}

// ownPeeks is the redeliveries of recent peeks, kept by every client that
// shares the memory (see Live.ShareMemory): ladder serve's snapshot reader
// then keeps every session's peeks out of the rates all sessions see.
type ownPeeks struct {
	mu   sync.Mutex
	list []ownRedeliveries
}

// peeks is the client's ownPeeks, made on first use.
func (l *Live) peeks() *ownPeeks {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.own == nil {
		l.own = &ownPeeks{}
	}
	return l.own
}

// vhostName is the client's vhost ("" for a client made bare, in tests).
func (l *Live) vhostName() string {
	if l.r == nil {
		return ""
	}
	return l.r.Vhost
}

// noteOwn records that a peek of queue redelivered n messages.
func (l *Live) noteOwn(queue string, n int) {
	if n <= 0 {
		return
	}
	now := time.Now()
	o := l.peeks()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = append(pruneOwn(o.list, now), ownRedeliveries{vhost: l.vhostName(), queue: queue, at: now, n: n})
}

// ownSince returns the recent peeks' redeliveries in the client's vhost.
func (l *Live) ownSince(now time.Time) []ownRedeliveries {
	o := l.peeks()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = pruneOwn(o.list, now)
	var out []ownRedeliveries
	for _, r := range o.list {
		if r.vhost == l.vhostName() {
			out = append(out, r)
		}
	}
	return out
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
