package moveplan

import (
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
	"github.com/ladder-tui/ladder/retry/topology"
	"slices"
	"strings"
)

// Failure is where a message failed: the queue it was rejected in (or
// expired or overflowed in) before it came to the queue it is in now, and the
// routes that had brought it there.
type Failure struct {
	// Queue is the queue it failed in: a work queue, never a wait tier.
	Queue string
	// Routes are the exchange and routing key pairs that brought it to
	// Queue, as recorded, most telling first (the oldest x-death entry's
	// exchange with each of its keys, CC keys included, then later ones).
	// They may reach other queues as well, or none any more.
	Routes []retry.Origin
	// By names the record the answer rests on, for notes: "x-death", or a
	// framework's headers.
	By string
}

// Spring AMQP's RepublishMessageRecoverer (and Spring Cloud Stream's
// republishToDlq) publish a failed message to the dead-letter exchange
// themselves: no x-death, but these headers name where it came from.
const (
	HeaderSpringOriginalExchange   = "x-original-exchange"
	HeaderSpringOriginalRoutingKey = "x-original-routingKey"
)

// failedIn says where the message with headers h, now in queue in, failed,
// from what it carries. This is the one place that answers it (move and
// replay --to origin, the UI); a framework convention that records it its
// own way is read here.
//
//   - x-death (most recent entry first): the first queue other than in
//     itself. A wait queue there (a tier of a ladder, a wait queue, ladder's
//     own delay queues) is not where it failed but on its way back to work:
//     the failure is in the queue it dead-letters into (its ladder's main
//     queue), which the message was then taken from.
//   - Spring's republished dead letters (no x-death): x-original-exchange and
//     x-original-routingKey route to the consumer queues of the
//     destination; the one that failed is the one whose dead letters come to
//     in (Spring republishes through the queue's own dead-letter exchange
//     and key), else in's name without ".dlq".
//   - x-first-death-* alone (a client kept only those).
//
// ok is false when nothing says.
func failedIn(r *topology.Router, ladders []retry.Ladder, in string, h retry.Headers) (Failure, bool) {
	x := retry.DecodeXDeath(h)
	for _, d := range x.Deaths {
		if d.Queue == "" || d.Queue == in {
			continue
		}
		if isWaitQueue(ladders, d.Queue) {
			if f, ok := failedAfterWait(r, ladders, in, d, x.Deaths); ok {
				return f, true
			}
			continue // a wait queue whose work queue is not known: look further back
		}
		return Failure{Queue: d.Queue, Routes: deathRoutes(x.Deaths, d.Queue), By: "x-death"}, true
	}
	if f, ok := springFailedIn(r, in, h); ok {
		return f, true
	}
	if q := x.First.Queue; q != "" && q != in {
		f := Failure{Queue: q, Routes: deathRoutes(x.Deaths, q), By: "x-first-death-queue"}
		if len(f.Routes) == 0 {
			if o, ok := x.Origin(); ok {
				f.Routes = []retry.Origin{o}
			}
		}
		return f, true
	}
	return Failure{}, false
}

// failedAfterWait: d is a death in a wait queue (a ladder's tier, wait or
// delay queue, or one of ladder's own): the message failed in the work
// queue that wait queue returns it to. Its routes are that queue's own
// x-death entries, then the wait queue's dead-letter route.
func failedAfterWait(r *topology.Router, ladders []retry.Ladder, in string, d retry.Death, deaths []retry.Death) (Failure, bool) {
	main := ""
	for i := range ladders {
		l := &ladders[i]
		if l.Main != d.Queue && (slices.ContainsFunc(l.Tiers, func(t retry.Tier) bool { return t.Queue == d.Queue }) ||
			slices.Contains(l.WaitQueues, d.Queue) || slices.Contains(l.DelayQueues, d.Queue)) {
			main = l.Main
			break
		}
	}
	dl := r.DeadLetters(d.Queue)
	if main == "" && retry.OwnedByLadder(d.Queue) && !dl.Approximate && len(dl.Queues) == 1 {
		main = dl.Queues[0] // ladder's own wait queue, returning to a queue of no ladder
	}
	if main == "" || main == in {
		return Failure{}, false
	}
	f := Failure{Queue: main, Routes: deathRoutes(deaths, main), By: "x-death"}
	if dl.Configured {
		keys := []string{dl.RoutingKey}
		if dl.KeepsRoutingKey {
			keys = d.RoutingKeys
		}
		for _, k := range keys {
			f.Routes = addOrigin(f.Routes, retry.Origin{Exchange: dl.Exchange, RoutingKey: k})
		}
	}
	return f, true
}

// isWaitQueue says whether q waits on a ladder's way back to work.
func isWaitQueue(ladders []retry.Ladder, q string) bool {
	if retry.OwnedByLadder(q) {
		return true
	}
	for i := range ladders {
		l := &ladders[i]
		if l.Main != q && (slices.ContainsFunc(l.Tiers, func(t retry.Tier) bool { return t.Queue == q }) || slices.Contains(l.WaitQueues, q)) {
			return true
		}
	}
	return false
}

// deathRoutes are the exchange and key pairs of every x-death entry for
// queue, oldest entry first (its exchange is where the message was first
// published from), each entry's keys in order.
func deathRoutes(deaths []retry.Death, queue string) []retry.Origin {
	var out []retry.Origin
	for i := len(deaths) - 1; i >= 0; i-- {
		d := deaths[i]
		if d.Queue != queue {
			continue
		}
		for _, k := range d.RoutingKeys {
			out = addOrigin(out, retry.Origin{Exchange: d.Exchange, RoutingKey: k})
		}
	}
	return out
}

func addOrigin(out []retry.Origin, o retry.Origin) []retry.Origin {
	if slices.Contains(out, o) {
		return out
	}
	return append(out, o)
}

// springFailedIn reads Spring's republished dead letters.
func springFailedIn(r *topology.Router, in string, h retry.Headers) (Failure, bool) {
	ex, okx := h[HeaderSpringOriginalExchange]
	key, okk := h[HeaderSpringOriginalRoutingKey]
	if !okx || !okk {
		return Failure{}, false
	}
	exchange, err1 := amqpfield.Text(ex)
	rk, err2 := amqpfield.Text(key)
	if err1 != nil || err2 != nil {
		return Failure{}, false
	}
	f := Failure{Routes: []retry.Origin{{Exchange: exchange, RoutingKey: rk}}, By: HeaderSpringOriginalExchange + "/" + HeaderSpringOriginalRoutingKey}
	reached := r.RouteKeys(exchange, []string{rk}, h)
	var feeding []string
	for _, q := range reached.Queues {
		if q != in && slices.Contains(r.DeadLetters(q).Queues, in) {
			feeding = append(feeding, q)
		}
	}
	switch {
	case len(feeding) == 1:
		f.Queue = feeding[0]
	case strings.HasSuffix(in, ".dlq") && r.QueueIndex(strings.TrimSuffix(in, ".dlq")) >= 0:
		// Spring's naming: the DLQ of group queue Q is Q.dlq.
		f.Queue = strings.TrimSuffix(in, ".dlq")
	case len(reached.Queues) == 1 && reached.Queues[0] != in:
		f.Queue = reached.Queues[0]
	default:
		return Failure{}, false
	}
	return f, true
}
