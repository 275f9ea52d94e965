package retry

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
)

// ActionKind is what to do with a failed (or replayed) message.
type ActionKind string

// Action kinds.
const (
	// ActionTier: publish to Exchange with RoutingKey (the tier's
	// Tier.Exchange, else the default exchange, with the tier's name) so
	// the message lands in the tier Queue; its TTL returns it to the main
	// queue.
	ActionTier ActionKind = "tier"
	// ActionDelayedExchange: publish to Exchange with RoutingKey (the
	// message's own, PlanOptions.RoutingKey); Headers carry x-delay.
	ActionDelayedExchange ActionKind = "delayed_exchange"
	// ActionDelayQueue: declare Queue with QueueArgs (redeclare before every
	// publish: it renews x-expires), then publish to it through the default
	// exchange (Exchange "", RoutingKey Queue). It dead-letters to the main
	// queue.
	ActionDelayQueue ActionKind = "delay_queue"
	// ActionPark: retries are exhausted; the message belongs in the DLQ
	// Queue: publish it there (Exchange "", RoutingKey Queue) and ack, or
	// nack with requeue=false when the main queue dead-letters there.
	ActionPark ActionKind = "park"
	// ActionDrop: retries are exhausted and there is no DLQ.
	ActionDrop ActionKind = "drop"
)

// MaxXDelay is the largest x-delay the delayed-message exchange honours (ms);
// it routes anything outside (0, MaxXDelay] at once.
const MaxXDelay = 1<<32 - 1

// Action is a planned step for one message: everything a worker needs to
// publish it (Exchange, RoutingKey, Headers; Queue and QueueArgs to declare
// a per-delay wait queue first) and then ack the delivery.
type Action struct {
	Kind ActionKind
	// Attempt is the retry this action makes (1 for the first retry); 0 for
	// replays, park and drop.
	Attempt int
	// Delay is how long the message will wait: a tier's TTL, else the
	// wanted delay. Wanted is the delay the policy drew (or was asked for).
	Delay, Wanted time.Duration
	// Queue is the tier, the per-delay wait queue, or the DLQ.
	Queue string
	// Exchange and RoutingKey are what to publish with: the delayed
	// exchange, the tier's exchange, or "" (the default exchange, which
	// routes by queue name). Both are "" for drop.
	Exchange   string
	RoutingKey string
	// Match says how the tier fits Wanted.
	Match TierMatch
	// Headers is the whole header table to publish with (a copy of the
	// input); nil for drop.
	Headers Headers
	// QueueArgs are the arguments to declare a per-delay wait queue with.
	QueueArgs Headers
}

// MarshalJSON writes durations as integer milliseconds.
func (a Action) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Kind      ActionKind `json:"kind"`
		Attempt   int        `json:"attempt,omitempty"`
		DelayMS   int64      `json:"delay_ms"`
		WantedMS  int64      `json:"wanted_ms"`
		Queue     string     `json:"queue,omitempty"`
		Exchange  string     `json:"exchange,omitempty"`
		Key       string     `json:"routing_key,omitempty"`
		Match     TierMatch  `json:"tier_match,omitempty"`
		Headers   Headers    `json:"headers,omitempty"`
		QueueArgs Headers    `json:"queue_args,omitempty"`
	}{a.Kind, a.Attempt, a.Delay.Milliseconds(), a.Wanted.Milliseconds(), a.Queue, a.Exchange, a.RoutingKey, a.Match, a.Headers, a.QueueArgs})
}

// PlanOptions configure Plan.
type PlanOptions struct {
	Policy Policy
	// MaxAttempts is how many retries a message gets; once its count reaches
	// it the message is parked (or dropped). 0 means never retry.
	MaxAttempts int
	Ladder      *Ladder
	// RoutingKey is the routing key the failed message was delivered with:
	// a delayed exchange routes the retry by it.
	RoutingKey string
	// Rand is jitter's random source; nil uses math/rand/v2.
	Rand Rand
}

// Plan decides what to do with a message that just failed, given its headers
// and the state ReadState read from them: retry through the tier fitting the
// drawn delay (exact, else the next longer one), else through the ladder's
// delayed exchange, else through a per-delay wait queue; or, once Count has
// reached MaxAttempts, park it in the DLQ or drop it. The returned headers
// carry the incremented count in the state's convention (see SetCount),
// x-delay for the delayed exchange, and x-retry-delay updated when present.
func Plan(h Headers, st RetryState, o PlanOptions) (Action, error) {
	if o.Ladder == nil {
		return Action{}, errors.New("retry: plan: no ladder")
	}
	if err := o.Policy.check(); err != nil {
		return Action{}, fmt.Errorf("retry: plan: policy: %w", err)
	}
	if o.MaxAttempts < 0 {
		return Action{}, fmt.Errorf("retry: plan: max attempts %d is negative", o.MaxAttempts)
	}
	if st.Count >= int64(o.MaxAttempts) {
		if o.Ladder.DLQ != "" {
			return Action{Kind: ActionPark, Queue: o.Ladder.DLQ, RoutingKey: o.Ladder.DLQ, Headers: h.Clone()}, nil
		}
		return Action{Kind: ActionDrop}, nil
	}
	next := int(st.Count) + 1
	want := o.Policy.Delay(next, st.LastDelay, o.Rand)
	a, err := route(o.Ladder, want, o.RoutingKey, SetCount(h, st, int64(next)))
	if err != nil {
		return Action{}, fmt.Errorf("retry: plan attempt %d: %w", next, err)
	}
	a.Attempt = next
	if v, ok := h[hdrPyRetryDelay]; ok {
		// Keep the Python seed's record of the delay, in the type it had.
		_, kind, _ := amqpfield.Int(v)
		a.Headers[hdrPyRetryDelay] = amqpfield.EncodeCount(kind, a.Delay.Milliseconds())
	}
	return a, nil
}

// route picks tier, delayed exchange or per-delay queue for want; key is the
// message's routing key; out is the caller's copy of the headers, modified
// in place.
func route(l *Ladder, want time.Duration, key string, out Headers) (Action, error) {
	if t, m, ok := chooseTier(l, want); ok {
		return Action{Kind: ActionTier, Delay: t.TTL, Wanted: want, Queue: t.Queue, Exchange: t.Exchange, RoutingKey: t.Queue, Match: m, Headers: out}, nil
	}
	// The broker counts whole milliseconds.
	ms := want.Milliseconds()
	wait := time.Duration(ms) * time.Millisecond
	if len(l.DelayedExchanges) > 0 && ms > 0 && ms <= MaxXDelay {
		// int64: values above 2^31−1 are valid and would overflow an int32.
		out[hdrDelay] = ms
		return Action{Kind: ActionDelayedExchange, Delay: wait, Wanted: want, Exchange: l.DelayedExchanges[0].Name, RoutingKey: key, Headers: out}, nil
	}
	if l.Main == "" {
		return Action{}, fmt.Errorf("no tier or delayed exchange fits %v and the ladder has no main queue to wait for", want)
	}
	name := delayQueueName(l.Main, ms)
	return Action{
		Kind: ActionDelayQueue, Delay: wait, Wanted: want, Queue: name, RoutingKey: name, Headers: out,
		QueueArgs: Headers{
			"x-message-ttl":             ms,
			"x-dead-letter-exchange":    "",
			"x-dead-letter-routing-key": l.Main,
			// Unused wait queues vanish WaitQueueLinger after their last
			// message could have left, unlike enqueue's per-delay queues
			// that pile up; every publish redeclares and so renews it.
			"x-expires": ms + WaitQueueLinger.Milliseconds(),
		},
	}, nil
}

// WaitQueueLinger is how long a per-delay wait queue outlives its delay
// after its last declare before its x-expires deletes it. x-expires deletes
// a queue unused that long whatever it still holds, so a broker down (or a
// target gone) for longer than this after the delay ran out loses what was
// still waiting: with a minute, a RabbitMQ 4.3 node that took 66 s to
// restart under load lost 17,194 of 20,000 moved messages. A day covers a
// restart, an outage of hours, a target declared again the next morning;
// the cost is an empty queue that stays a day.
const WaitQueueLinger = 24 * time.Hour

// delayQueueName names the per-delay wait queue that returns messages to
// the queue main after ms: the queue a replay to main through the default
// exchange uses (ReplayQueueName), so retries and replays share one queue
// declared with the same arguments. It names main because the queue
// dead-letters to that one queue.
func delayQueueName(main string, ms int64) string {
	return ReplayQueueName("", main, ms)
}
