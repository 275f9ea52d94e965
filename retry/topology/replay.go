package topology

import (
	"fmt"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
	"github.com/ladder-tui/ladder/retry/internal/words"
	"math"
	"slices"
	"strings"
	"time"
)

// Via is how a moved or replayed message reaches its target: one spelling
// everywhere (JSON, text, the UI).
type Via string

// The ways a message can take.
const (
	// ViaDirect publishes straight to the target: no delay asked for.
	ViaDirect Via = "direct"
	// ViaTier waits in one of the ladder's own tiers, whose TTL returns it.
	ViaTier Via = "tier"
	// ViaDelayedExchange waits in a delayed-message exchange (x-delay).
	ViaDelayedExchange Via = "delayed_exchange"
	// ViaDelayQueue waits in a per-delay wait queue ladder declares
	// (ReplayQueueName), which dead-letters to the target.
	ViaDelayQueue Via = "delay_queue"
)

// ReplayRoute is how a moved or replayed message reaches its target
// (exchange + routing key) after a delay.
type ReplayRoute struct {
	Via Via
	// Exchange and RoutingKey are what to publish with.
	Exchange   string
	RoutingKey string
	// Mandatory is false only for the delayed-message exchange, which
	// returns every mandatory message as unroutable.
	Mandatory bool
	// Queue is the tier or per-delay wait queue the message waits in.
	Queue string
	// QueueArgs declare the per-delay wait queue (delay_queue only).
	QueueArgs retry.Headers
	// XDelay is the x-delay header value in ms (delayed_exchange only).
	XDelay int64
	Delay  time.Duration
	// SetHeaders are headers the route needs (the match headers of the
	// headers binding that leads into a tier).
	SetHeaders retry.Headers
	// Note says why a tier with the asked-for TTL was passed over, or which
	// header it sets to enter one.
	Note string
}

// PlanReplay decides how a message reaches exchange with routingKey after
// delay, in the vhost r indexes, using the ladders' own machinery when it
// provably lands in the same queues as publishing directly would:
//  1. a tier whose TTL is exactly delay and whose dead letters arrive
//     through the same exchange with the same routing key, as a direct
//     publish would (a tier that keeps routing keys is entered through an
//     exchange that routes routingKey to that tier alone);
//  2. a delayed-message exchange routing routingKey to the same queues;
//  3. otherwise a per-delay wait queue for this target: one TTL per queue,
//     so nothing waits behind a longer message (no head-of-line blocking).
//
// headers are the message's own (they matter to headers exchanges).
func PlanReplay(r *Router, ladders []retry.Ladder, exchange, routingKey string, headers map[string]any, delay time.Duration) (ReplayRoute, error) {
	if delay < 0 {
		return ReplayRoute{}, fmt.Errorf("replay to %s: negative delay %v", words.Target(exchange, routingKey), delay)
	}
	if delay == 0 {
		return ReplayRoute{Via: ViaDirect, Exchange: exchange, RoutingKey: routingKey, Mandatory: true}, nil
	}
	want := r.Route(exchange, routingKey, headers)
	if !want.ExchangeExists {
		return ReplayRoute{}, fmt.Errorf("replay to %s: exchange %q does not exist", words.Target(exchange, routingKey), exchange)
	}
	// A delayed message reaches its target by dead-lettering or from the
	// delayed exchange: nothing can return it then, so it must be known to
	// arrive somewhere before it leaves.
	switch {
	case want.Approximate:
		return ReplayRoute{}, fmt.Errorf("replay to %s: ladder cannot tell which queues it reaches (headers or an exchange type it does not model), and a delayed message that reaches none is dropped; move it without a delay", words.Target(exchange, routingKey))
	case len(want.Queues) == 0:
		return ReplayRoute{}, fmt.Errorf("replay to %s: it routes to no queue, so after the delay it would be dropped", words.Target(exchange, routingKey))
	}
	note := ""
	{
		for i := range ladders {
			l := &ladders[i]
			if !slices.Contains(want.Queues, l.Main) {
				continue
			}
			rt, why, ok := r.viaTier(l, exchange, routingKey, headers, delay, want.Queues)
			if ok {
				return rt, nil
			}
			if why != "" {
				note = why
			}
			if r.noDelayedExchange {
				continue
			}
			if rt, ok := r.viaDelayedExchange(l, want.Queues, routingKey, headers, delay); ok {
				return rt, nil
			}
		}
	}
	ms := delay.Milliseconds()
	if ms <= 0 {
		return ReplayRoute{}, fmt.Errorf("replay to %s: delay %v is shorter than a millisecond", words.Target(exchange, routingKey), delay)
	}
	name := retry.ReplayQueueName(exchange, routingKey, ms)
	return ReplayRoute{
		Via: ViaDelayQueue, Exchange: "", RoutingKey: name, Mandatory: true, Queue: name, Delay: delay, Note: note,
		QueueArgs: DelayQueueArgs(exchange, routingKey, ms, r.quorumDelayQueues),
	}, nil
}

// DelayQueueArgs declare ladder's wait queue for one delay and target: the
// TTL, dead-lettering to the target, and x-expires, so the queue deletes
// itself retry.WaitQueueLinger after its last message could have left.
// With quorum (RabbitMQ 3.10+) it is a quorum queue that dead-letters at
// least once (which wants
// x-overflow reject-publish): a message leaves it only once the target
// confirmed it, so a broker crash during the wait loses nothing. A classic
// queue dead-letters at most once.
func DelayQueueArgs(exchange, routingKey string, ms int64, quorum bool) retry.Headers {
	a := retry.Headers{
		"x-message-ttl":             ms,
		"x-dead-letter-exchange":    exchange,
		"x-dead-letter-routing-key": routingKey,
		"x-expires":                 ms + retry.WaitQueueLinger.Milliseconds(),
	}
	if quorum {
		a["x-queue-type"] = QueueQuorum
		a["x-dead-letter-strategy"] = DeadLetterAtLeastOnce
		a["x-overflow"] = OverflowRejectPublish
	}
	return a
}

// viaTier finds a tier whose TTL is delay and whose dead letters arrive
// exactly as a direct publish would: through the same exchange with the same
// routing key (consumers see both). A tier that rewrites the key must rewrite
// it to this key; one that keeps the key is entered with it, through an
// exchange that routes it to that tier alone. note says why a tier with the
// right TTL could not be used.
func (r *Router) viaTier(l *retry.Ladder, exchange, key string, headers map[string]any, delay time.Duration, want []string) (rt ReplayRoute, note string, ok bool) {
	for _, t := range l.Tiers {
		if t.TTL != delay {
			continue
		}
		if t.ReturnExchange != exchange || (!t.KeepsRoutingKey && t.ReturnRoutingKey != key) {
			note = fmt.Sprintf("tier %s waits %s but returns messages to %s, not %s: using a wait queue of ladder's own", t.Queue, retry.FormatDelay(delay), words.Target(t.ReturnExchange, t.ReturnRoutingKey), words.Target(exchange, key))
			continue
		}
		if !t.KeepsRoutingKey {
			// The tier sets the key on the way back: enter it directly.
			return ReplayRoute{Via: ViaTier, Exchange: "", RoutingKey: t.Queue, Mandatory: true, Queue: t.Queue, Delay: delay}, "", true
		}
		// The tier returns the message with the key it entered with, so it
		// must enter with the target's key through an exchange that routes
		// that key to the tier alone. Through a headers binding it enters
		// with the binding's match headers set (the tier's own selector,
		// as the ladder's workers set it).
		why := ""
		for _, bi := range r.intoQueue[t.Queue] {
			b := &r.v.Bindings[bi]
			if b.Source == "" {
				continue
			}
			try, set := headers, retry.Headers(nil)
			if xi, ok := r.exchanges[b.Source]; ok && r.kinds[xi] == ExchangeHeaders {
				set = bindingMatchHeaders(b.Arguments, headers)
				if len(set) > 0 {
					try = retry.Headers(headers).Clone()
					for k, v := range set {
						try[k] = v
					}
				}
			}
			in := r.Route(b.Source, key, try)
			if in.Approximate || len(in.Queues) != 1 || in.Queues[0] != t.Queue {
				continue
			}
			// Back from the tier it carries the headers set to enter it:
			// it must still land where a direct publish would.
			if len(set) > 0 {
				if back := r.Route(exchange, key, try); back.Approximate || !slices.Equal(back.Queues, want) {
					why = fmt.Sprintf("tier %s waits %s, but with the header it needs (%s) the message would return to other queues: using a wait queue of ladder's own", t.Queue, retry.FormatDelay(delay), headerList(set))
					continue
				}
			}
			rt := ReplayRoute{Via: ViaTier, Exchange: b.Source, RoutingKey: key, Mandatory: true, Queue: t.Queue, Delay: delay, SetHeaders: set}
			if len(set) > 0 {
				rt.Note = fmt.Sprintf("enters tier %s through headers exchange %s with %s", t.Queue, b.Source, headerList(set))
			}
			return rt, "", true
		}
		if why == "" {
			why = fmt.Sprintf("tier %s waits %s but no exchange routes key %q to it alone (it is entered another way, e.g. by a header): using a wait queue of ladder's own", t.Queue, retry.FormatDelay(delay), key)
		}
		note = why
	}
	return ReplayRoute{}, note, false
}

// bindingMatchHeaders are the headers a message needs to match a headers
// binding that it does not carry already (x-match itself excluded). A
// number is written in the type of the message's own header of that name
// (else int32, or int64 when it does not fit): binding arguments read from
// the management API are JSON numbers, and a worker reading an int header
// must not find a double there.
func bindingMatchHeaders(args, have map[string]any) retry.Headers {
	var out retry.Headers
	for k, v := range args {
		if k == "x-match" || v == nil {
			continue
		}
		if old, ok := have[k]; ok && rtValueEqual(old, v) {
			continue
		}
		if out == nil {
			out = retry.Headers{}
		}
		out[k] = headerLike(v, have[k])
	}
	return out
}

// headerLike writes a whole number v in like's integer type, else int32 or
// int64; anything else as it is.
func headerLike(v, like any) any {
	n, _, err := amqpfield.Int(v)
	if err != nil {
		return v
	}
	if _, isStr := v.(string); isStr {
		return v
	}
	if _, kind, err := amqpfield.Int(like); err == nil && like != nil {
		if _, isStr := like.(string); !isStr {
			return amqpfield.EncodeCount(kind, n)
		}
	}
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return int32(n)
	}
	return n
}

// headerList is "k1=v1, k2=v2", sorted.
func headerList(h retry.Headers) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s=%v", k, h[k])
	}
	return strings.Join(keys, ", ")
}

func (r *Router) viaDelayedExchange(l *retry.Ladder, want []string, key string, headers map[string]any, delay time.Duration) (ReplayRoute, bool) {
	ms := delay.Milliseconds()
	if ms <= 0 || ms > retry.MaxXDelay {
		return ReplayRoute{}, false
	}
	for _, dx := range l.DelayedExchanges {
		got := r.Route(dx.Name, key, headers)
		if !got.Approximate && slices.Equal(got.Queues, want) {
			return ReplayRoute{Via: ViaDelayedExchange, Exchange: dx.Name, RoutingKey: key, Mandatory: false, XDelay: ms, Delay: delay}, true
		}
	}
	return ReplayRoute{}, false
}
