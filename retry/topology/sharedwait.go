package topology

import (
	"slices"
	"strings"

	"github.com/ladder-tui/ladder/retry"
)

// A shared wait is one wait queue serving many work queues by header, not
// by dead-letter route: npm's amqplib-retry (lib/initializer.js,
// lib/amqp_handler_wrapper.js, lib/ready_queue_consumer.js) publishes each
// retry into amqplib-retry.delayed (no TTL: a per-message expiration,
// and a _targetQueue header naming the work queue), which dead-letters into
// amqplib-retry.ready, whose consumer sends each message to the queue its
// header names. Read by the graph alone, the ready queue is a main and the
// delayed queue its wait queue (rule 4), and no work queue has a ladder.
// Only messages tell the truth: those waiting in the wait queue, or in the
// ready queue while its router is down, name queues (Seen.FailedIn) that
// the wait queue's dead letters do not reach. Then the wait queue and its
// ready queues are one delay infrastructure (a retry.Delay with
// PerMessageTTL) of each queue named, and none of them is a main.
type sharedWait struct {
	queues []int          // the wait queue, then its ready queues by name
	to     map[int]string // the queues it returns to: what tied each
}

// findSharedWaits sets t.shared and t.sharedOf (after the delay chains).
func (t *discTopo) findSharedWaits() {
	n := len(t.v.Queues)
	t.sharedOf = make([]int, n)
	for i := range t.sharedOf {
		t.sharedOf[i] = -1
	}
	for w := range n {
		s := &t.set[w]
		if !t.canon[w] || t.inChain(w) || t.sharedOf[w] >= 0 || s.HasMessageTTL || !s.HasDeadLetterExchange {
			continue
		}
		// Messages waited here for their expiration, and no consumer
		// rejected any: a wait queue, by evidence.
		if seen := t.v.Queues[w].Seen; !seen.Expiration || seen.Rejected {
			continue
		}
		var ready []int
		for _, r := range t.dl[w] {
			if !t.inChain(r) && t.sharedOf[r] < 0 && !t.reaches(r, w) {
				ready = append(ready, r)
			}
		}
		if len(ready) == 0 {
			continue
		}
		slices.SortFunc(ready, func(a, b int) int { return strings.Compare(t.v.Queues[a].Name, t.v.Queues[b].Name) })
		sw := sharedWait{queues: append([]int{w}, ready...), to: map[int]string{}}
		for _, in := range sw.queues {
			for _, name := range t.v.Queues[in].Seen.FailedIn {
				m := t.r.QueueIndex(name)
				// A queue the wait queue dead-letters into is its own
				// ladder's (rule 4), not one served by header.
				if m < 0 || !t.canon[m] || slices.Contains(sw.queues, m) || t.reaches(w, m) || t.inChain(m) {
					continue
				}
				if _, ok := sw.to[m]; !ok {
					sw.to[m] = "messages seen in " + t.v.Queues[in].Name + " return to " + name
				}
			}
		}
		if len(sw.to) == 0 {
			continue
		}
		for _, q := range sw.queues {
			t.sharedOf[q] = len(t.shared)
		}
		t.shared = append(t.shared, sw)
	}
}

// infra: qi is part of a shared delay infrastructure (a delay chain or a
// shared wait): never a main, tier or wait queue.
func (t *discTopo) infra(qi int) bool { return t.inChain(qi) || t.sharedOf[qi] >= 0 }

// sharedWaitsInto are the shared waits returning to m, as m's Delays.
func (t *discTopo) sharedWaitsInto(m int) []retry.Delay {
	var out []retry.Delay
	for _, sw := range t.shared {
		from, ok := sw.to[m]
		if !ok {
			continue
		}
		d := retry.Delay{Name: t.v.Queues[sw.queues[0]].Name, PerMessageTTL: true, From: from}
		for _, q := range sw.queues {
			d.Queues = append(d.Queues, t.v.Queues[q].Name)
		}
		out = append(out, d)
	}
	return out
}
