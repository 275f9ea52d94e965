package topology

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"
)

func TestEffectiveSettings(t *testing.T) {
	tests := []struct {
		name string
		q    Queue
		want QueueSettings
	}{
		{"nothing set", Queue{}, QueueSettings{}},
		{"argument beats policy for dead-letter keys",
			Queue{Arguments: map[string]any{"x-dead-letter-exchange": "arg.dlx", "x-dead-letter-routing-key": "arg.key"},
				Policy: map[string]any{"dead-letter-exchange": "pol.dlx", "dead-letter-routing-key": "pol.key"}},
			QueueSettings{DeadLetterExchange: "arg.dlx", HasDeadLetterExchange: true, DeadLetterRoutingKey: "arg.key", HasDeadLetterRoutingKey: true}},
		{"each dead-letter key resolved on its own",
			Queue{Arguments: map[string]any{"x-dead-letter-exchange": "arg.dlx"},
				Policy: map[string]any{"dead-letter-exchange": "pol.dlx", "dead-letter-routing-key": "pol.key"}},
			QueueSettings{DeadLetterExchange: "arg.dlx", HasDeadLetterExchange: true, DeadLetterRoutingKey: "pol.key", HasDeadLetterRoutingKey: true}},
		{"policy only",
			Queue{Policy: map[string]any{"dead-letter-exchange": "pol.dlx", "message-ttl": float64(5000)}},
			QueueSettings{DeadLetterExchange: "pol.dlx", HasDeadLetterExchange: true, MessageTTL: 5 * time.Second, HasMessageTTL: true}},
		{"empty dead-letter exchange is the default exchange",
			Queue{Arguments: map[string]any{"x-dead-letter-exchange": []byte("")}},
			QueueSettings{HasDeadLetterExchange: true}},
		{"TTL is the minimum, argument smaller",
			Queue{Arguments: map[string]any{"x-message-ttl": int32(1000)}, Policy: map[string]any{"message-ttl": float64(5000)}},
			QueueSettings{MessageTTL: time.Second, HasMessageTTL: true}},
		{"TTL is the minimum, policy smaller",
			Queue{Arguments: map[string]any{"x-message-ttl": int64(60000)}, Policy: map[string]any{"message-ttl": json.Number("30000")}},
			QueueSettings{MessageTTL: 30 * time.Second, HasMessageTTL: true}},
		{"TTL 0 is a TTL",
			Queue{Arguments: map[string]any{"x-message-ttl": uint8(0)}},
			QueueSettings{HasMessageTTL: true}},
		{"negative TTL ignored, policy used",
			Queue{Arguments: map[string]any{"x-message-ttl": int16(-5)}, Policy: map[string]any{"message-ttl": uint32(700)}},
			QueueSettings{MessageTTL: 700 * time.Millisecond, HasMessageTTL: true}},
		{"string TTL ignored (broker refuses it)",
			Queue{Arguments: map[string]any{"x-message-ttl": "5000"}},
			QueueSettings{}},
		{"expires, max-length(-bytes) are minimums; overflow argument wins",
			Queue{Arguments: map[string]any{"x-expires": int32(90000), "x-max-length": int64(10), "x-max-length-bytes": 1e6, "x-overflow": "reject-publish"},
				Policy: map[string]any{"expires": float64(60000), "max-length": float64(100), "overflow": "drop-head"}},
			QueueSettings{Expires: time.Minute, HasExpires: true, MaxLength: 10, HasMaxLength: true,
				MaxLengthBytes: 1e6, HasMaxLengthBytes: true, Overflow: "reject-publish"}},
		{"overflow from policy",
			Queue{Policy: map[string]any{"overflow": "reject-publish-dlx"}},
			QueueSettings{Overflow: "reject-publish-dlx"}},
		{"delivery limit on quorum: minimum",
			Queue{Type: QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int32(20)}, Policy: map[string]any{"delivery-limit": float64(5)}},
			QueueSettings{DeliveryLimit: 5, HasDeliveryLimit: true}},
		{"delivery limit ignored on classic",
			Queue{Type: QueueClassic, Arguments: map[string]any{"x-delivery-limit": int32(20)}},
			QueueSettings{}},
		{"negative delivery limit is no limit (set: no default of 20 either)",
			Queue{Type: QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int64(-1)}},
			QueueSettings{DeliveryLimit: -1, HasDeliveryLimit: true}},
		{"streams neither dead-letter nor take a TTL",
			Queue{Type: QueueStream, Arguments: map[string]any{"x-dead-letter-exchange": "dlx", "x-message-ttl": int32(5)}},
			QueueSettings{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EffectiveSettings(&tt.q); got != tt.want {
				t.Errorf("EffectiveSettings =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestDLIntTypes(t *testing.T) {
	for _, v := range []any{int(7), int8(7), int16(7), int32(7), int64(7), uint(7), uint8(7), uint16(7),
		uint32(7), uint64(7), float32(7), float64(7.9), json.Number("7"), json.Number("7.5")} {
		if n, ok := dlInt(v); !ok || n != 7 {
			t.Errorf("dlInt(%T %v) = %d, %v", v, v, n, ok)
		}
	}
	for _, v := range []any{nil, "7", true, math.NaN(), math.Inf(1), json.Number("x"), []byte("7")} {
		if _, ok := dlInt(v); ok {
			t.Errorf("dlInt(%T %v) accepted", v, v)
		}
	}
	if n, _ := dlInt(uint64(math.MaxUint64)); n != math.MaxInt64 {
		t.Errorf("uint64 max = %d, want saturation", n)
	}
	if n, _ := dlInt(1e300); n != math.MaxInt64 {
		t.Errorf("1e300 = %d, want saturation", n)
	}
}

func TestDeadLetters(t *testing.T) {
	v := &Vhost{
		Queues: []Queue{
			// Published via direct exchange "in" with key "work" and via the
			// default exchange; dead letters keep that key on "".
			{Name: "a", Arguments: map[string]any{"x-dead-letter-exchange": ""}},
			{Name: "work"},
			{Name: "b", Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "b"}},
			{Name: "c", Arguments: map[string]any{"x-dead-letter-exchange": "fan"}},
			{Name: "d", Arguments: map[string]any{"x-dead-letter-exchange": "tx"}},
			{Name: "e", Arguments: map[string]any{"x-dead-letter-exchange": "hx", "x-dead-letter-routing-key": "whatever"}},
			{Name: "plain"},
		},
		Exchanges: []Exchange{
			{Name: "in", Type: ExchangeDirect},
			{Name: "tin", Type: ExchangeTopic},
			{Name: "fan", Type: ExchangeFanout},
			{Name: "tx", Type: ExchangeTopic},
			{Name: "hx", Type: ExchangeHeaders},
		},
		Bindings: []Binding{
			{Source: "in", Destination: "a", DestinationType: "queue", RoutingKey: "work"},
			{Source: "tin", Destination: "a", DestinationType: "queue", RoutingKey: "plain.#"}, // key unknown
			{Source: "tin", Destination: "a", DestinationType: "queue", RoutingKey: "nosuchqueue"},
			{Source: "fan", Destination: "c", DestinationType: "queue"},
			{Source: "fan", Destination: "work", DestinationType: "queue"},
			{Source: "tx", Destination: "work", DestinationType: "queue", RoutingKey: "only.this"},
			{Source: "hx", Destination: "plain", DestinationType: "queue", Arguments: map[string]any{"x-match": "all", "k": "v"}},
		},
	}
	r := NewRouter(v)
	tests := []struct {
		queue string
		want  []string
		keeps bool
	}{
		// Original keys on the default exchange: the literal key "work" of its
		// direct binding names a queue; "plain.#" is a pattern, and the
		// queue's own name would only bring the message back (a cycle).
		{"a", []string{"work"}, true},
		{"b", nil, false},               // explicit key naming itself: a cycle, not a route
		{"c", []string{"work"}, true},   // fanout back to itself is dropped, "work" stays
		{"d", []string{"work"}, true},   // original keys: every topic binding may match
		{"e", []string{"plain"}, false}, // dead letters keep their headers: may match
		{"plain", nil, false},           // no dead-letter exchange
		{"nosuch", nil, false},          // unknown queue
	}
	for _, tt := range tests {
		got := r.DeadLetters(tt.queue)
		if !slices.Equal(got.Queues, tt.want) || got.KeepsRoutingKey != tt.keeps {
			t.Errorf("DeadLetters(%q) = %+v, want queues %v keeps %v", tt.queue, got, tt.want, tt.keeps)
		}
	}
	if got := r.DeadLetters("e"); !got.Configured || !got.Approximate || got.Exchange != "hx" || got.RoutingKey != "whatever" {
		t.Errorf("DeadLetters(e) = %+v", got)
	}
}
