package retry

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
)

// Reason is why the broker dead-lettered a message.
type Reason string

// Dead-letter reasons; ReasonOther stands for any reason this package does
// not know (Death.RawReason keeps the text).
const (
	ReasonRejected      Reason = "rejected"       // basic.reject / nack with requeue=false
	ReasonExpired       Reason = "expired"        // message or queue TTL
	ReasonMaxlen        Reason = "maxlen"         // x-max-length overflow
	ReasonDeliveryLimit Reason = "delivery_limit" // quorum queue delivery-limit
	ReasonOther         Reason = "other"
)

// Death is one x-death entry: one {queue, reason} pair and how often it
// happened.
type Death struct {
	Queue     string
	Reason    Reason
	RawReason string
	Count     int64
	Exchange  string
	// RoutingKeys the message had when it first died here (CC included).
	RoutingKeys []string
	// Time of the first death for this {queue, reason}.
	Time time.Time
	// OriginalExpiration is the per-message TTL dead-lettering removed, when
	// HasOriginalExpiration.
	OriginalExpiration    time.Duration
	HasOriginalExpiration bool
	// Carried: the entry comes from x-ladder-deaths, the history ladder
	// carried across a move or replay (4.x brokers restart x-death on a
	// re-published message), not from the broker's x-death.
	Carried bool
}

// MarshalJSON writes time as RFC 3339 (null when absent), the expiration as
// original_expiration_ms (null when absent), and raw_reason only when it
// differs from reason.
func (d Death) MarshalJSON() ([]byte, error) {
	var t *string
	if !d.Time.IsZero() {
		s := d.Time.Format(time.RFC3339)
		t = &s
	}
	var exp *int64
	if d.HasOriginalExpiration {
		ms := d.OriginalExpiration.Milliseconds()
		exp = &ms
	}
	raw := d.RawReason
	if raw == string(d.Reason) {
		raw = ""
	}
	keys := d.RoutingKeys
	if keys == nil {
		keys = []string{}
	}
	return json.Marshal(struct {
		Queue       string   `json:"queue"`
		Reason      Reason   `json:"reason"`
		RawReason   string   `json:"raw_reason,omitempty"`
		Count       int64    `json:"count"`
		Exchange    string   `json:"exchange"`
		RoutingKeys []string `json:"routing_keys"`
		Time        *string  `json:"time"`
		OrigExpMS   *int64   `json:"original_expiration_ms"`
		Carried     bool     `json:"carried,omitempty"`
	}{d.Queue, d.Reason, raw, d.Count, d.Exchange, keys, t, exp, d.Carried})
}

// DeathPoint is the x-first-death-* or x-last-death-* triple.
type DeathPoint struct {
	Reason   string `json:"reason"`
	Queue    string `json:"queue"`
	Exchange string `json:"exchange"`
}

// XDeath is a message's decoded dead-letter history.
type XDeath struct {
	// Deaths are most recent first, as the broker keeps them.
	Deaths []Death `json:"deaths"`
	// First is x-first-death-* (RabbitMQ 3.7+, never changes afterwards).
	First DeathPoint `json:"first_death,omitzero"`
	// Last is x-last-death-* (RabbitMQ 3.13+).
	Last DeathPoint `json:"last_death,omitzero"`
	// Errors lists every value that could not be read; what could be read
	// is still in Deaths.
	Errors []FieldError `json:"errors,omitempty"`
}

// Origin is where a message was published before it was first dead-lettered.
type Origin struct {
	Exchange   string `json:"exchange"`
	RoutingKey string `json:"routing_key"`
	// By names the framework header the origin was read from; empty when
	// it is the broker's x-death.
	By string `json:"by,omitempty"`
}

const hdrXDeath = "x-death"

// HeaderCarriedDeaths is the history ladder carries on a message it moves
// or replays to a 4.x broker (which restarts x-death on a re-published
// message): the x-death entries as they were then (types kept), then the
// earlier carried ones. The decoder adds them after the broker's own.
const HeaderCarriedDeaths = "x-ladder-deaths"

// DecodeXDeath decodes the x-death header and the x-first-death-* and
// x-last-death-* headers. It never panics: a malformed value yields an error
// in Errors and a zero field, and the rest is still read. Integers of any
// width and integral floats are read silently (clients re-encode numbers;
// JSON from the management API has only floats). Shapes with one clear
// reading (a single table for x-death, a string for routing-keys) are read
// and reported.
func DecodeXDeath(h Headers) XDeath {
	x := XDeath{Deaths: []Death{}} // JSON [] rather than null; no allocation
	if v, ok := h[hdrXDeath]; ok {
		x.Deaths = decodeDeaths(v, hdrXDeath, &x.Errors)
	}
	if v, ok := h[HeaderCarriedDeaths]; ok {
		// Older than anything the broker has: ladder moved x-death here
		// when it re-published the message.
		for _, c := range decodeDeaths(v, HeaderCarriedDeaths, &x.Errors) {
			c.Carried = true
			x.Deaths = append(x.Deaths, c)
		}
	}
	x.First = DeathPoint{
		Reason:   pointField(h, "x-first-death-reason", &x.Errors),
		Queue:    pointField(h, "x-first-death-queue", &x.Errors),
		Exchange: pointField(h, "x-first-death-exchange", &x.Errors),
	}
	x.Last = DeathPoint{
		Reason:   pointField(h, "x-last-death-reason", &x.Errors),
		Queue:    pointField(h, "x-last-death-queue", &x.Errors),
		Exchange: pointField(h, "x-last-death-exchange", &x.Errors),
	}
	return x
}

// decodeDeaths reads an array of x-death tables (from header name).
func decodeDeaths(v any, name string, errs *[]FieldError) []Death {
	var out []Death
	if arr, ok := amqpfield.Array(v); ok {
		out = make([]Death, 0, len(arr))
		var keys []string // entries' routing keys share backing arrays: fewer allocations
		for i, e := range arr {
			m, ok := amqpfield.Table(e)
			if !ok {
				*errs = append(*errs, FieldError{Path: deathPathIn(name, i, ""), Err: fmt.Errorf("want a table, got %s", amqpfield.TypeName(e))})
				continue
			}
			out = out[:len(out)+1]
			keys = decodeDeathIn(name, &out[len(out)-1], m, i, errs, keys, len(arr)-i)
		}
	} else if m, ok := amqpfield.Table(v); ok {
		*errs = append(*errs, FieldError{Path: name, Err: errors.New("want an array of tables, got one table")})
		out = make([]Death, 1)
		decodeDeathIn(name, &out[0], m, 0, errs, nil, 1)
	} else {
		*errs = append(*errs, FieldError{Path: name, Err: fmt.Errorf("want an array of tables, got %s", amqpfield.TypeName(v))})
	}
	if out == nil {
		out = []Death{}
	}
	return out
}

// CarryDeaths is the value of HeaderCarriedDeaths for a message about to be
// re-published to a broker that no longer carries x-death on (4.x): its
// x-death entries as they are (types kept), then what was carried before.
// The caller drops x-death itself, so no entry is ever in both. ok is false
// when there is no history to carry.
func CarryDeaths(h Headers) (value []any, ok bool) {
	for _, name := range []string{hdrXDeath, HeaderCarriedDeaths} {
		if arr, isArr := amqpfield.Array(h[name]); isArr {
			value = append(value, arr...)
		} else if m, isTable := amqpfield.Table(h[name]); isTable {
			value = append(value, m) // one table, as the decoder reads it too
		}
	}
	return value, len(value) > 0
}

func pointField(h Headers, key string, errs *[]FieldError) string {
	v, ok := h[key]
	if !ok {
		return ""
	}
	s, err := amqpfield.Text(v)
	if err != nil {
		*errs = append(*errs, FieldError{Path: key, Err: err})
	}
	return s
}

func deathPathIn(name string, i int, field string) string {
	p := name + "[" + strconv.Itoa(i) + "]"
	if field != "" {
		p += "." + field
	}
	return p
}

// decodeDeathIn fills d from entry i of the header name. Routing keys are
// appended to keys, whose spare capacity is shared with later entries (left
// more to come); it returns keys for the next entry.
func decodeDeathIn(name string, d *Death, m map[string]any, i int, errs *[]FieldError, keys []string, left int) []string {
	fail := func(field string, err error) {
		*errs = append(*errs, FieldError{Path: deathPathIn(name, i, field), Err: err})
	}
	str := func(field string) string {
		v, ok := m[field]
		if !ok {
			fail(field, errMissing)
			return ""
		}
		s, err := amqpfield.Text(v)
		if err != nil {
			fail(field, err)
		}
		return s
	}
	d.Queue = str("queue")
	d.RawReason = str("reason")
	d.Reason = parseReason(d.RawReason)
	d.Exchange = str("exchange")

	if v, ok := m["count"]; !ok {
		fail("count", errMissing)
	} else if n, _, err := amqpfield.Count(v); err != nil {
		fail("count", err)
	} else {
		d.Count = n
	}

	if v, ok := m["routing-keys"]; !ok {
		fail("routing-keys", errMissing)
	} else {
		d.RoutingKeys, keys = routingKeys(v, keys, left, fail)
	}

	if v, ok := m["time"]; !ok {
		fail("time", errMissing)
	} else if t, err := timeValue(v); err != nil {
		fail("time", err)
	} else {
		d.Time = t
	}

	if v, ok := m["original-expiration"]; ok {
		if n, _, err := amqpfield.Count(v); err != nil {
			fail("original-expiration", err)
		} else {
			d.OriginalExpiration = mulSat(time.Millisecond, float64(n))
			d.HasOriginalExpiration = true
		}
	}
	return keys
}

// routingKeys reads an entry's routing keys into buf's spare capacity
// (growing it for left entries of about this size when short) and returns
// them capped, so appending to one entry's keys never touches another's.
func routingKeys(v any, buf []string, left int, fail func(string, error)) (got, rest []string) {
	switch x := v.(type) {
	case []string:
		return x, buf
	case string:
		fail("routing-keys", errors.New("want an array, got a string (read as one key)"))
		return []string{x}, buf
	}
	arr, ok := amqpfield.Array(v)
	if !ok {
		fail("routing-keys", fmt.Errorf("want an array of strings, got %s", amqpfield.TypeName(v)))
		return nil, buf
	}
	if cap(buf)-len(buf) < len(arr) {
		buf = make([]string, 0, len(arr)*left)
	}
	start := len(buf)
	for j, k := range arr {
		s, err := amqpfield.Text(k)
		if err != nil {
			fail("routing-keys["+strconv.Itoa(j)+"]", err)
			continue
		}
		buf = append(buf, s)
	}
	return buf[start:len(buf):len(buf)], buf
}

func parseReason(s string) Reason {
	switch r := Reason(s); r {
	case ReasonRejected, ReasonExpired, ReasonMaxlen, ReasonDeliveryLimit:
		return r
	}
	return ReasonOther
}

// Origin is where the message was published before its first death: the
// exchange from x-first-death-exchange and the first routing key of the
// oldest entry for x-first-death-queue (preferring the one whose reason is
// x-first-death-reason). Without x-first-death-* (before 3.7, or stripped by
// a client) it answers only when every entry agrees on exchange and first
// routing key: entries move to the front when they repeat, so the oldest
// entry is not necessarily the first death. ok is false when the origin is
// unknown; fields that are known are still filled. Spring AMQP's own record
// of the origin is RetryState.OriginalExchange/OriginalRoutingKey.
func (x XDeath) Origin() (Origin, bool) {
	if x.First.Queue != "" {
		match := -1
		for i := len(x.Deaths) - 1; i >= 0; i-- {
			d := x.Deaths[i]
			if d.Queue != x.First.Queue {
				continue
			}
			if string(d.Reason) == x.First.Reason || d.RawReason == x.First.Reason {
				match = i
				break
			}
			if match < 0 {
				match = i
			}
		}
		o := Origin{Exchange: x.First.Exchange}
		if match < 0 {
			return o, false
		}
		d := x.Deaths[match]
		if o.Exchange == "" {
			// x-first-death-exchange is "" for the default exchange, and
			// then the entry says "" too; the entry fills in when the
			// header is missing.
			o.Exchange = d.Exchange
		}
		if len(d.RoutingKeys) == 0 {
			return o, false
		}
		o.RoutingKey = d.RoutingKeys[0]
		return o, true
	}
	if len(x.Deaths) == 0 {
		return Origin{}, false
	}
	oldest := x.Deaths[len(x.Deaths)-1]
	if len(oldest.RoutingKeys) == 0 {
		return Origin{}, false
	}
	for _, d := range x.Deaths {
		if d.Exchange != oldest.Exchange || len(d.RoutingKeys) == 0 || d.RoutingKeys[0] != oldest.RoutingKeys[0] {
			return Origin{}, false
		}
	}
	return Origin{Exchange: oldest.Exchange, RoutingKey: oldest.RoutingKeys[0]}, true
}

// OriginIn is where to send a message back to one of the given queues
// (usually the vhost's ladder main queues): the exchange and first routing
// key of its x-death entry for the first such queue it died in, since it
// was published there. A message that went main → tier → main → DLQ first
// died in a tier, entered through the retry exchange; its main-queue entry
// names the exchange that feeds the main queue. Without such an entry it is
// x-first-death's Origin.
func OriginIn(x XDeath, queues map[string]bool) (Origin, bool) {
	// Entries are most recent first; the oldest matching one is last.
	for i := len(x.Deaths) - 1; i >= 0; i-- {
		d := x.Deaths[i]
		if queues[d.Queue] && len(d.RoutingKeys) > 0 {
			return Origin{Exchange: d.Exchange, RoutingKey: d.RoutingKeys[0]}, true
		}
	}
	return x.Origin()
}

// OriginOf is where a message came from: the one answer the inspector, the
// browser, peek, --where and the move planner's recorded routes all use.
// x-death comes first (OriginIn over queues): the broker recorded the queue
// the message failed in. Without it, what the message's framework recorded
// (st is ReadState of the same headers): the exchange and key it had been
// published with (Spring's x-original-*, rascal's originalExchange), else
// the queue it failed in (NServiceBus.FailedQ, MassTransit's input address,
// rascal's originalQueue), reached through the default exchange. ok is
// false when nothing says; what x-death knew is still returned then.
func OriginOf(x XDeath, st RetryState, queues map[string]bool) (Origin, bool) {
	o, ok := OriginIn(x, queues)
	if ok {
		return o, true
	}
	switch {
	case st.OriginalSource != "":
		return Origin{Exchange: st.OriginalExchange, RoutingKey: st.OriginalRoutingKey, By: st.OriginalSource}, true
	case st.FailedQueue != "":
		return Origin{RoutingKey: st.FailedQueue, By: st.FailedQueueSource}, true
	}
	return o, false
}
