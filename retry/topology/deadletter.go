package topology

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// QueueSettings are a queue's effective retry-relevant settings after
// RabbitMQ's argument-versus-policy resolution. Each value has a Has flag:
// "no TTL" and "TTL 0" are different things to the broker.
type QueueSettings struct {
	DeadLetterExchange    string // "" is the default exchange when HasDeadLetterExchange
	HasDeadLetterExchange bool
	// DeadLetterRoutingKey replaces the message's routing keys when set;
	// without it dead letters keep their original keys.
	DeadLetterRoutingKey    string
	HasDeadLetterRoutingKey bool

	MessageTTL    time.Duration
	HasMessageTTL bool
	Expires       time.Duration // queue auto-delete after idle
	HasExpires    bool

	MaxLength         int64
	HasMaxLength      bool
	MaxLengthBytes    int64
	HasMaxLengthBytes bool
	// Overflow is "drop-head" (the default, dead-letters the head),
	// "reject-publish" or "reject-publish-dlx"; "" when not set.
	Overflow string
	// DeadLetterStrategy is a quorum queue's "at-most-once" (the default)
	// or "at-least-once"; "" when not set.
	DeadLetterStrategy string

	// DeliveryLimit applies to quorum queues only: after this many
	// returns a message is dead-lettered (or dropped).
	DeliveryLimit    int64
	HasDeliveryLimit bool

	// DelayedRetry is RabbitMQ 4.3's built-in delayed retry of quorum
	// queues (x-delayed-retry-type/min/max or the policy keys
	// delayed-retry-type/min/max); nil when off.
	DelayedRetry *retry.DelayedRetry
}

// Values of QueueSettings.Overflow and DeadLetterStrategy.
const (
	OverflowDropHead         = "drop-head"
	OverflowRejectPublish    = "reject-publish"
	OverflowRejectPublishDLX = "reject-publish-dlx"
	DeadLetterAtLeastOnce    = "at-least-once"
)

// EffectiveSettings resolves q's arguments against its effective policy the
// way the broker does (rabbit_amqqueue_process / rabbit_quorum_queue):
//   - dead-letter exchange, dead-letter routing key and overflow: the
//     x-argument wins over the policy key, each key on its own (a policy can
//     supply the routing key for an argument's exchange);
//   - message TTL, expires, max-length(-bytes), delivery limit: the smaller
//     of argument and policy.
//
// Streams neither expire messages by TTL nor dead-letter, so their
// dead-letter and TTL settings are left unset. Values of a type that is not a
// number (or string, for names) are ignored: the broker would have refused them.
func EffectiveSettings(q *Queue) QueueSettings {
	var s QueueSettings
	a, p := q.Arguments, q.Policy
	stream := q.Type == QueueStream
	if !stream {
		s.DeadLetterExchange, s.HasDeadLetterExchange = dlArgWins(a, "x-dead-letter-exchange", p, "dead-letter-exchange")
		s.DeadLetterRoutingKey, s.HasDeadLetterRoutingKey = dlArgWins(a, "x-dead-letter-routing-key", p, "dead-letter-routing-key")
		if ms, ok := dlMin(a, "x-message-ttl", p, "message-ttl"); ok {
			s.MessageTTL, s.HasMessageTTL = time.Duration(ms)*time.Millisecond, true
		}
	}
	if ms, ok := dlMin(a, "x-expires", p, "expires"); ok {
		s.Expires, s.HasExpires = time.Duration(ms)*time.Millisecond, true
	}
	s.MaxLength, s.HasMaxLength = dlMin(a, "x-max-length", p, "max-length")
	s.MaxLengthBytes, s.HasMaxLengthBytes = dlMin(a, "x-max-length-bytes", p, "max-length-bytes")
	s.Overflow, _ = dlArgWins(a, "x-overflow", p, "overflow")
	if q.Type == QueueQuorum {
		s.DeadLetterStrategy, _ = dlArgWins(a, "x-dead-letter-strategy", p, "dead-letter-strategy")
	}
	if q.Type == QueueQuorum {
		// 4.x: a negative limit means "no limit" (DeliveryLimit -1, set).
		if n, ok := dlMin(a, "x-delivery-limit", p, "delivery-limit"); ok && n >= 0 {
			s.DeliveryLimit, s.HasDeliveryLimit = n, true
		} else if dlNegative(a["x-delivery-limit"]) || dlNegative(p["delivery-limit"]) {
			s.DeliveryLimit, s.HasDeliveryLimit = -1, true
		}
		if typ, ok := dlArgWins(a, "x-delayed-retry-type", p, "delayed-retry-type"); ok && typ != "" && typ != "disabled" {
			d := &retry.DelayedRetry{Type: typ}
			if ms, ok := dlArgOr(a, "x-delayed-retry-min", p, "delayed-retry-min"); ok {
				d.Min = time.Duration(ms) * time.Millisecond
			}
			if ms, ok := dlArgOr(a, "x-delayed-retry-max", p, "delayed-retry-max"); ok {
				d.Max = time.Duration(ms) * time.Millisecond
			}
			s.DelayedRetry = d
		}
	}
	return s
}

func dlNegative(v any) bool {
	n, ok := dlInt(v)
	return ok && n < 0
}

// dlArgOr is the argument's non-negative integer, else the policy's.
func dlArgOr(args map[string]any, argKey string, pol map[string]any, polKey string) (int64, bool) {
	if v, ok := dlInt(args[argKey]); ok && v >= 0 {
		return v, true
	}
	if v, ok := dlInt(pol[polKey]); ok && v >= 0 {
		return v, true
	}
	return 0, false
}

// dlArgWins returns the argument's string value when present, else the policy's.
func dlArgWins(args map[string]any, argKey string, pol map[string]any, polKey string) (string, bool) {
	if v, ok := dlString(args[argKey]); ok {
		return v, true
	}
	return dlString(pol[polKey])
}

// dlMin returns the smaller non-negative integer of argument and policy.
func dlMin(args map[string]any, argKey string, pol map[string]any, polKey string) (int64, bool) {
	av, aok := dlInt(args[argKey])
	aok = aok && av >= 0
	pv, pok := dlInt(pol[polKey])
	pok = pok && pv >= 0
	switch {
	case aok && pok:
		return min(av, pv), true
	case aok:
		return av, true
	case pok:
		return pv, true
	}
	return 0, false
}

// dlString reads a name-like field value (longstr arrives as string or []byte).
func dlString(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case []byte:
		return string(s), true
	}
	return "", false
}

// dlInt reads any integer-ish field value: every Go integer type, floats
// (management JSON), and json.Number. Fractions are truncated; values out of
// int64 range saturate; NaN and infinities are rejected.
func dlInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint:
		return dlUint(uint64(n)), true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		return dlUint(n), true
	case float32:
		return dlFloatInt(float64(n))
	case float64:
		return dlFloatInt(n)
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, true
		}
		if f, err := strconv.ParseFloat(string(n), 64); err == nil {
			return dlFloatInt(f)
		}
	}
	return 0, false
}

func dlUint(n uint64) int64 {
	if n > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(n)
}

func dlFloatInt(f float64) (int64, bool) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, false
	case f >= math.MaxInt64:
		return math.MaxInt64, true
	case f <= math.MinInt64:
		return math.MinInt64, true
	}
	return int64(f), true
}

// dlFloat reads any numeric field value as float64.
func dlFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float32:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil
	}
	if i, ok := dlInt(v); ok {
		if u, isU := v.(uint64); isU {
			return float64(u), true
		}
		return float64(i), true
	}
	return 0, false
}

// DeadLetterRoute is where one queue's dead letters go.
type DeadLetterRoute struct {
	Queue string
	// Configured is false when the queue has no dead-letter exchange: its
	// rejected and expired messages are dropped.
	Configured bool
	Exchange   string // "" = default exchange
	// RoutingKey is the dead-letter routing key; with KeepsRoutingKey the
	// message keeps its original keys instead.
	RoutingKey      string
	KeepsRoutingKey bool
	ExchangeExists  bool
	// Queues reached, sorted; never the queue itself (see deadLetterTargets).
	Queues []string
	// Approximate: "may reach" (original keys, headers or exchange kind unknown).
	Approximate bool
}

// DeadLetters resolves where queue's dead letters go.
func (r *Router) DeadLetters(queue string) DeadLetterRoute {
	qi := r.QueueIndex(queue)
	if qi < 0 {
		return DeadLetterRoute{Queue: queue}
	}
	set := EffectiveSettings(&r.v.Queues[qi])
	s := r.newScratch()
	rr, idx := r.deadLetterTargets(qi, &set, s)
	out := DeadLetterRoute{
		Queue:           queue,
		Configured:      set.HasDeadLetterExchange,
		Exchange:        set.DeadLetterExchange,
		RoutingKey:      set.DeadLetterRoutingKey,
		KeepsRoutingKey: set.HasDeadLetterExchange && !set.HasDeadLetterRoutingKey,
		ExchangeExists:  rr.ExchangeExists,
		Approximate:     rr.Approximate,
	}
	for _, i := range idx {
		out.Queues = append(out.Queues, r.v.Queues[i].Name)
	}
	sort.Strings(out.Queues)
	return out
}

// deadLetterTargets routes queue qi's dead letters. The returned indices are
// a fresh slice, never including qi itself.
//
// Rules:
//   - No dead-letter routing key ⇒ the message keeps its original routing
//     keys, which we do not know; on a named exchange that is a wildcard that
//     matches every binding ("may reach").
//   - Original keys on the default exchange: a wildcard there would reach
//     every queue in the vhost, which says nothing. A message keeps the key it
//     was published with, and the keys that can bring a message into this
//     queue are its own name (published via the default exchange) and the
//     literal keys of its bindings (direct, or topic patterns without
//     wildcards). So we take the queues named by those keys. Keys of
//     fanout/headers/wildcard bindings are unknown and contribute nothing.
//   - A route back into the dead-lettering queue itself is not a route: for
//     expired and maxlen deaths the broker drops the message as a cycle.
//   - Dead letters keep their headers, so headers bindings "may match".
func (r *Router) deadLetterTargets(qi int, set *QueueSettings, s *rtScratch) (RouteResult, []int) {
	res, out, _ := r.deadLetterTargetsMemo(qi, set, s, nil)
	return res, out
}

// dlMemoKey identifies a dead-letter route that does not depend on the
// dead-lettering queue (everything but original keys on the default exchange).
type dlMemoKey struct {
	exchange, key string
	anyKey        bool
}

type dlMemoVal struct {
	res    RouteResult
	queues []int
}

// deadLetterTargetsMemo is deadLetterTargets with an optional memo (many
// queues share one dead-letter exchange and key). self reports whether the
// route reached the dead-lettering queue itself (dropped as a cycle).
func (r *Router) deadLetterTargetsMemo(qi int, set *QueueSettings, s *rtScratch, memo map[dlMemoKey]dlMemoVal) (res RouteResult, out []int, self bool) {
	if !set.HasDeadLetterExchange {
		return RouteResult{}, nil, false
	}
	q := &r.v.Queues[qi]
	var raw []int
	if set.DeadLetterExchange == "" && !set.HasDeadLetterRoutingKey {
		s.reset()
		res = RouteResult{ExchangeExists: true, Approximate: true}
		for _, bi := range r.intoQueue[q.Name] {
			b := &r.v.Bindings[bi]
			if !r.literalKey(b) {
				continue
			}
			if i := r.QueueIndex(b.RoutingKey); i >= 0 {
				s.addQueue(i)
			}
		}
		raw = s.queues
	} else {
		k := dlMemoKey{set.DeadLetterExchange, set.DeadLetterRoutingKey, !set.HasDeadLetterRoutingKey}
		m, ok := memo[k]
		if !ok {
			m.res = r.routeInto(k.exchange, rtMsg{key: k.key, anyKey: k.anyKey, anyHeaders: true}, s)
			m.queues = append([]int(nil), s.queues...)
			if memo != nil {
				memo[k] = m
			}
		}
		res, raw = m.res, m.queues
	}
	out = make([]int, 0, len(raw))
	for _, i := range raw {
		if i == qi {
			self = true
			continue
		}
		out = append(out, i)
	}
	return res, out, self
}

// literalKey reports whether binding b's key is one concrete routing key a
// message arriving through it must have carried.
func (r *Router) literalKey(b *Binding) bool {
	xi, ok := r.exchanges[b.Source]
	if !ok {
		return false
	}
	switch r.kinds[xi] {
	case ExchangeDirect:
		return true
	case ExchangeTopic:
		return !dlHasTopicWildcard(b.RoutingKey)
	}
	return false
}

func dlHasTopicWildcard(pattern string) bool {
	for i := 0; i < len(pattern); {
		w, next, last := rtWord(pattern, i)
		if w == "*" || w == "#" {
			return true
		}
		if last {
			break
		}
		i = next
	}
	return false
}
