package retry

import (
	"slices"
	"strings"
	"time"
)

// Ladder is one discovered retry ladder: a main queue, the wait tiers whose
// dead letters come back to it, delayed exchanges that route to it, and the
// terminal queue its own dead letters reach.
type Ladder struct {
	Main string
	// Tiers sorted by TTL, shortest first.
	Tiers []Tier
	// WaitQueues dead-letter into the main queue but have no queue TTL and
	// no consumers: messages leave them only by per-message expiration (and
	// may be blocked behind a longer one), or never. Findings say which.
	WaitQueues []string
	// InferredFrom says what discovery rested on where it had to guess
	// which side of a dead-letter route waits (WaitQueues); nil when the
	// topology said so plainly (a queue TTL, a delayed exchange).
	InferredFrom     []string
	DelayedExchanges []DelayedExchange
	// DLQ is the terminal queue reached from the main queue's dead-letter
	// route; "" when there is none.
	DLQ string
	// DelayQueues are ladder's own per-delay wait queues (OwnedByLadder)
	// that dead-letter into the main queue: never tiers, never in findings.
	DelayQueues []string
	// DelayedRetry is the main queue's built-in delayed retry (RabbitMQ
	// 4.3 quorum queues): the queue is its own wait tier.
	DelayedRetry *DelayedRetry
	// Delays are delay infrastructures that deliver into the main queue:
	// chains of TTL queues dead-lettering into one another (NServiceBus's
	// delay levels), one mechanism for every queue they reach, and queues
	// a framework's workers hold messages in until due (Dramatiq's
	// {queue}.DQ); never tiers and never ladders of their own.
	Delays []Delay
	// DLQFrom says how DLQ was found: "" when it is on the main queue's
	// dead-letter route, else the framework naming it follows
	// ("MassTransit: {queue}_error") or the messages seen in it ("messages
	// seen: they failed in orders"): an error queue the framework
	// publishes failures into.
	DLQFrom string
	// ErrorQueues are further dead ends of the main queue by a framework's
	// naming (MassTransit's {queue}_skipped, Spring's {queue}.parkingLot)
	// or by the messages seen in them, fed by publishing, sorted by name.
	ErrorQueues []string
	// RetriesInConsumer: nothing makes messages wait (no tier, wait queue,
	// delayed exchange, delay infrastructure or delayed retry): failures go
	// straight to the dead end, so any retrying happens in the consumer.
	RetriesInConsumer bool
}

// Delay is a delay infrastructure shared by the queues it delivers into: a
// chain of TTL queues (Queues, sorted by name) whose dead letters go down
// the chain to their destination; or, HeldByConsumers, one queue a
// framework's workers consume and hold each message in until it is due
// (Dramatiq's {queue}.DQ: no TTL).
type Delay struct {
	// Name reads the queues as one ("nsb.v2.delay-level-00…27").
	Name            string
	Queues          []string
	MinTTL, MaxTTL  time.Duration
	HeldByConsumers bool
	// Levels are a chain's queues whose dead letters reach the main
	// queue, each with its TTL, shortest first: the delays this queue can
	// be given (NServiceBus sums the levels of a delay's binary digits).
	Levels []DelayLevel
	// PerMessageTTL: a wait queue without a TTL (messages wait for their
	// own expiration) and the ready queue it dead-letters into, from which
	// a router sends each message back to the queue a header names
	// (amqplib-retry's _targetQueue): shared by every queue it returns
	// to, and tied to this one only by the messages seen (From).
	PerMessageTTL bool
	// From says what tied the delay to the main queue when no dead-letter
	// route does ("messages seen in amqplib-retry.delayed return to
	// orders"); "" when its route does.
	From string
}

// DelayLevel is one level of a delay chain: a queue and its TTL.
type DelayLevel struct {
	Queue string
	TTL   time.Duration
}

// OwnedByLadder reports whether a queue is one ladder declared for itself
// (a per-delay wait queue of a delayed move, ReplayQueueName).
func OwnedByLadder(queue string) bool { return strings.HasPrefix(queue, replayQueuePrefix) }

// Tier is a wait queue with a TTL that dead-letters back to the main queue.
type Tier struct {
	Queue string
	TTL   time.Duration
	// Return is how its dead letters travel back (exchange + routing key; a
	// routing key of "" with KeepsRoutingKey means the message's own keys).
	ReturnExchange   string
	ReturnRoutingKey string
	KeepsRoutingKey  bool
	// Exchange is where a worker publishes, with the tier's name as routing
	// key, to reach the tier: an exchange bound to it by that name (the Go
	// seed's orders.retry), or "" for the default exchange. Discovery
	// leaves it "": a worker that declared its ladder knows it.
	Exchange string
}

// DelayedExchange is an x-delayed-message exchange that routes to the main queue.
type DelayedExchange struct {
	Name            string
	MessagesDelayed int64 // -1 when unknown
}

// DelayedRetry holds a quorum queue's returned messages back before
// redelivery: delay = min(Min × delivery count, Max). Type says which
// returns: all, failed or returned.
type DelayedRetry struct {
	Type     string
	Min, Max time.Duration
}

// Has reports whether q is one of l's queues: its main, a tier, a wait
// queue, its DLQ or an error queue.
func (l *Ladder) Has(q string) bool { return ladderHas(l, q) }

func ladderHas(l *Ladder, q string) bool {
	return l.Main == q || l.DLQ == q || slices.Contains(l.WaitQueues, q) || slices.Contains(l.ErrorQueues, q) ||
		slices.ContainsFunc(l.Tiers, func(t Tier) bool { return t.Queue == q })
}

// Explains reports whether q is a queue ladder shows in l: one of its own
// (Has), ladder's own delay queues for it, or a queue of its delay
// infrastructure.
func (l *Ladder) Explains(q string) bool {
	return l.Has(q) || slices.Contains(l.DelayQueues, q) ||
		slices.ContainsFunc(l.Delays, func(d Delay) bool { return slices.Contains(d.Queues, q) })
}

// MainQueues is the set of the ladders' main queues, for OriginIn.
func MainQueues(ladders []Ladder) map[string]bool {
	out := make(map[string]bool, len(ladders))
	for _, l := range ladders {
		out[l.Main] = true
	}
	return out
}

// Delay is the wait before the n-th redelivery.
func (d DelayedRetry) Delay(n int) time.Duration {
	w := d.Min * time.Duration(n)
	if d.Max > 0 && w > d.Max {
		return d.Max
	}
	return w
}

// Policy is the backoff that gives the same delays (schedule previews it).
func (d DelayedRetry) Policy() Policy {
	return Policy{Backoff: BackoffLinear, Base: d.Min, Cap: d.Max}
}

// LadderOf returns the ladder queue belongs to, as main, tier, wait queue,
// DLQ or error queue (Has).
func LadderOf(ladders []Ladder, queue string) (Ladder, bool) {
	for _, l := range ladders {
		if l.Has(queue) {
			return l, true
		}
	}
	return Ladder{}, false
}
