package moveplan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
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
	// framework's headers, or "inferred from the name Q.failure".
	By string
	// Candidates, when Queue is "", are the queues a recorded exchange
	// routes to: several, so none is chosen; --to origin refuses the
	// message and names them all.
	Candidates []string
	// Inferred: the answer rests on the name of the queue the message is
	// in alone, nothing it records (no evidence of where it failed).
	Inferred bool
	// Note is what a plan says of an answer that is not plainly recorded
	// (one inferred from a name, an exchange read as its one queue), so a
	// dry run shows what it rests on; "" when it is recorded.
	Note string
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
// replay --to origin, the UI); what a framework records is read by
// retry.ReadState from the conventions table, the same reading
// retry.OriginOf gives the inspector, peek and --where.
//
//   - x-death (most recent entry first): the first queue other than in
//     itself. A wait queue there (a tier of a ladder, a wait queue, ladder's
//     own delay queues) is not where it failed but on its way back to work:
//     the failure is in the queue it dead-letters into (its ladder's main
//     queue), which the message was then taken from.
//   - the queue its framework says it failed in (NServiceBus.FailedQ,
//     MassTransit's MT-Fault-InputAddress, rascal's originalQueue).
//   - a framework's record of the route it had (Spring's x-original-*,
//     rascal's originalExchange/originalRoutingKey): the consumer queue
//     that route reaches whose dead letters come to in (Spring republishes
//     through the queue's own dead-letter exchange and key), else the
//     queue the framework's naming makes in the dead end of (Q.dlq,
//     Q_error, Q-error), else the one queue the route reaches.
//   - the framework's naming alone (Sneakers' Q-error records no route).
//   - x-first-death-* alone (a client kept only those).
//   - the name of in alone: Q.failure, Q_error, Q.dlq… of an existing Q
//     (retry.ErrorQueueNamings), labelled as inferred from the name.
//
// A queue a framework records that is no queue but an exchange (Watermill's
// topic_poisoned is the topic; with its pub/sub configs that is a fanout
// exchange, the queue topic_suffix) is the one queue that exchange routes
// the message to; when it routes to several, Candidates names them and
// Queue is "". ok is false when nothing says.
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
		if r.QueueIndex(d.Queue) < 0 {
			// A wait queue that is gone, named after its work queue.
			if q, by := queueOfWaitName(r, d.Queue); q != "" && q != in {
				return Failure{Queue: q, Routes: deathRoutes(x.Deaths, q), By: "x-death: " + by}, true
			}
		}
		return Failure{Queue: d.Queue, Routes: deathRoutes(x.Deaths, d.Queue), By: "x-death"}, true
	}
	st := r.Conventions().ReadMessage(h, nil, nil)
	if q := st.FailedQueue; q != "" && q != in {
		if r.QueueIndex(q) < 0 && r.ExchangeExists(q) {
			if f, ok := exchangeFailedIn(r, in, q, x.Deaths, st, h); ok {
				return f, true
			}
		}
		f := Failure{Queue: q, Routes: deathRoutes(x.Deaths, q), By: st.FailedQueueSource}
		if st.IsGuessed(retry.GuessedQueue) {
			f.By += " (guessed)"
		}
		if st.OriginalSource != "" {
			f.Routes = addOrigin(f.Routes, retry.Origin{Exchange: st.OriginalExchange, RoutingKey: st.OriginalRoutingKey})
		}
		return f, true
	}
	if f, ok := recordedRouteFailedIn(r, in, h, st); ok {
		return f, true
	}
	if q := namedWorkQueue(r, in, st.Framework); q != "" {
		// Sneakers records no route: its naming is all there is.
		return Failure{Queue: q, Routes: deathRoutes(x.Deaths, q), By: st.Framework + " naming"}, true
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
	if q, pat := inferredWorkQueue(r, in); q != "" {
		by := "inferred from the name " + in
		return Failure{Queue: q, By: by, Inferred: true, Note: fmt.Sprintf("origin %s %s (%s; nothing recorded where it failed)", q, by, pat)}, true
	}
	return Failure{}, false
}

// exchangeFailedIn: the queue a framework says the message failed in is
// named x, which is an exchange: the queue x routes the message to (other
// than in) is where it was consumed. The keys are those it was recorded
// with (x-death, the framework's original key), else "" (a fanout
// exchange, Watermill's pub/sub configs, needs none); never the key it
// came to in with, which is that of the framework's publish to its error
// topic, not the original's. ok is false when x routes it nowhere else
// or ladder cannot tell where.
func exchangeFailedIn(r *topology.Router, in, x string, deaths []retry.Death, st retry.RetryState, h retry.Headers) (Failure, bool) {
	var keys []string
	for _, d := range deaths {
		for _, k := range d.RoutingKeys {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	if st.OriginalSource != "" && st.OriginalExchange == x && !slices.Contains(keys, st.OriginalRoutingKey) {
		keys = append(keys, st.OriginalRoutingKey)
	}
	if len(keys) == 0 {
		keys = []string{""}
	}
	res := r.RouteKeys(x, keys, h)
	qs := slices.DeleteFunc(slices.Clone(res.Queues), func(q string) bool { return q == in })
	if res.Approximate || len(qs) == 0 {
		return Failure{}, false
	}
	var routes []retry.Origin
	for _, k := range keys {
		routes = append(routes, retry.Origin{Exchange: x, RoutingKey: k})
	}
	if len(qs) == 1 {
		by := fmt.Sprintf("%s names exchange %s, which routes to queue %s only", st.FailedQueueSource, x, qs[0])
		return Failure{Queue: qs[0], Routes: routes, By: by, Note: "origin " + qs[0] + ": " + by}, true
	}
	return Failure{Candidates: qs, Routes: routes,
		By: fmt.Sprintf("%s names exchange %s, which routes to queues %s", st.FailedQueueSource, x, strings.Join(qs, ", "))}, true
}

// inferredWorkQueue is the existing queue other than in that in is named
// after as its dead end (retry.ErrorQueueNamings: orders for
// orders.failure), and that naming; "" when none. Only a name: the last
// resort, after everything a message records.
func inferredWorkQueue(r *topology.Router, in string) (queue, pattern string) {
	for _, n := range r.Conventions().ErrorQueueNamings() {
		if q := n.NamedAfter(in); q != "" && q != in && r.QueueIndex(q) >= 0 {
			return q, n.Pattern
		}
	}
	return "", ""
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

// isWaitQueue says whether q waits on a ladder's way back to work: a tier,
// a wait queue, or a queue of a delay infrastructure (a delay chain, a
// shared wait queue and its ready queue), which serves many queues, so
// its x-death entry says nothing of which one the message failed in.
func isWaitQueue(ladders []retry.Ladder, q string) bool {
	if retry.OwnedByLadder(q) {
		return true
	}
	for i := range ladders {
		l := &ladders[i]
		if l.Main != q && (slices.ContainsFunc(l.Tiers, func(t retry.Tier) bool { return t.Queue == q }) || slices.Contains(l.WaitQueues, q) ||
			slices.ContainsFunc(l.Delays, func(d retry.Delay) bool { return slices.Contains(d.Queues, q) })) {
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

// recordedRouteFailedIn reads a framework's record of the route the
// message had before it was republished into in (st.Original*).
func recordedRouteFailedIn(r *topology.Router, in string, h retry.Headers, st retry.RetryState) (Failure, bool) {
	if st.OriginalSource == "" {
		return Failure{}, false
	}
	exchange, rk := st.OriginalExchange, st.OriginalRoutingKey
	by := st.OriginalSource
	if by == HeaderSpringOriginalExchange {
		by += "/" + HeaderSpringOriginalRoutingKey
	}
	if st.IsGuessed(retry.GuessedExchange) {
		by += " (guessed)"
	}
	f := Failure{Routes: []retry.Origin{{Exchange: exchange, RoutingKey: rk}}, By: by}
	reached := r.RouteKeys(exchange, []string{rk}, h)
	var feeding []string
	for _, q := range reached.Queues {
		if q != in && slices.Contains(r.DeadLetters(q).Queues, in) {
			feeding = append(feeding, q)
		}
	}
	if len(feeding) == 1 {
		f.Queue = feeding[0]
		return f, true
	}
	if q := namedWorkQueue(r, in, st.Framework); q != "" {
		f.Queue = q
		return f, true
	}
	if len(reached.Queues) == 1 && reached.Queues[0] != in {
		f.Queue = reached.Queues[0]
		return f, true
	}
	return Failure{}, false
}

// namedWorkQueue is the existing queue whose dead end in is by the naming
// of the framework the message carries the headers of ("" when none):
// Spring's Q.dlq, MassTransit's Q_error, Sneakers' Q-error.
func namedWorkQueue(r *topology.Router, in, framework string) string {
	if framework == "" {
		return ""
	}
	for _, n := range r.Conventions().ErrorQueueNamings() {
		if n.Framework != framework {
			continue
		}
		if q := n.NamedAfter(in); q != "" && r.QueueIndex(q) >= 0 {
			return q
		}
	}
	return ""
}

// FailedIn is failedIn for readers that show a message before anything
// moves it (a peek's origin), so what they show is where --to origin sends
// it: r and ladders are the vhost's, in the queue the message is in.
func FailedIn(r *topology.Router, ladders []retry.Ladder, in string, h retry.Headers) (Failure, bool) {
	return failedIn(r, ladders, in, h)
}

// InferredWorkQueue is the existing queue that queue in is named after as
// its dead end (orders for orders.failure), "" when none: what failedIn
// answers, inferred, for a message there that records nothing. One
// answer a queue, so a reader may ask once and skip failedIn otherwise.
func InferredWorkQueue(r *topology.Router, in string) string {
	q, _ := inferredWorkQueue(r, in)
	return q
}

// queueOfWaitName is the existing queue a wait queue called name was named
// after by a convention's WaitQueues ("delay_{exchange}_{queue}_{ms}_retry"),
// and that naming; "" when none. An exchange's name may hold the separator
// too: the shortest exchange naming an existing queue wins.
func queueOfWaitName(r *topology.Router, name string) (queue, by string) {
	for _, c := range r.Conventions().All() {
		for _, pat := range c.WaitQueues {
			pre, rest, ok1 := strings.Cut(pat, "{exchange}")
			sep, rest, ok2 := strings.Cut(rest, "{queue}")
			mid, post, ok3 := strings.Cut(rest, "{ms}")
			s, ok4 := strings.CutPrefix(name, pre)
			s, ok5 := strings.CutSuffix(s, post)
			if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
				continue
			}
			i := len(s)
			for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
				i--
			}
			if i == len(s) {
				continue // no {ms}
			}
			s, ok := strings.CutSuffix(s[:i], mid)
			if !ok {
				continue
			}
			for j := 0; j+len(sep) <= len(s); j++ {
				if q := s[j+len(sep):]; strings.HasPrefix(s[j:], sep) && q != "" && r.QueueIndex(q) >= 0 {
					return q, c.Name + " naming of " + name
				}
			}
		}
	}
	return "", ""
}
