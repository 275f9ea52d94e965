package rabbit

import (
	"reflect"
	"strings"
	"testing"
	"time"

	amqp1 "github.com/Azure/go-amqp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/broker/wire"
)

func strp(s string) *string { return &s }

// sameMessage compares two decoded messages as a reader of them does:
// everything but the redelivered flag (AMQP 1.0 says first-acquirer).
func sameMessage(t *testing.T, name string, got, want broker.Message) {
	t.Helper()
	got.Redelivered, want.Redelivered = false, false
	if !reflect.DeepEqual(got, want) {
		gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
		for i := 0; i < gv.NumField(); i++ {
			if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
				t.Errorf("%s: %s\n got  %#v\n want %#v", name, gv.Type().Field(i).Name, gv.Field(i).Interface(), wv.Field(i).Interface())
			}
		}
	}
}

// A 0-9-1 message as a 0-9-1 peek delivers it, and as RabbitMQ 4.3 sends
// the same message over AMQP 1.0 (the conversion seen on 4.3.6): both
// decode to one Message.
func TestDecodeAMQP1AsAMQP091(t *testing.T) {
	ts := time.Unix(1767225600, 0)
	first := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	death := amqp.Table{"count": int64(2), "reason": "rejected", "queue": "orders.process", "time": time.Unix(first.Unix(), 0),
		"exchange": "orders", "routing-keys": []interface{}{"orders.created"}, "original-expiration": "5000"}
	d := amqp.Delivery{
		Exchange: "orders", RoutingKey: "orders.dlq", Redelivered: true,
		MessageId: "m-1", CorrelationId: "urn:uuid:01020304-0506-0708-090a-0b0c0d0e0f10", ReplyTo: "reply queue/1",
		ContentType: "application/json", ContentEncoding: "gzip", DeliveryMode: 2, Priority: 7, Expiration: "60000",
		Timestamp: ts, Type: "order.created", UserId: "guest", AppId: "shop",
		Headers: amqp.Table{
			"x-retry-count": int32(2), "b": true, "i8": int8(-3), "u8": uint8(200), "i16": int16(-300), "u16": uint16(60000),
			"i32": int32(-70000), "u32": uint32(4000000000), "i64": int64(1) << 40, "f32": float32(1.5), "f64": 2.25,
			"s": "text", "bin": []byte{0, 1, 0xff}, "t": time.Unix(1700000000, 0), "v": nil,
			"x-table": amqp.Table{"k": int16(1), "deep": amqp.Table{"x": "y"}}, "x-arr": []interface{}{"a", int32(2)},
			"x-exception-message": "boom", "x-delivery-count": int64(1), "x-acquired-count": int64(4),
			"x-first-death-queue": "orders.process", "x-first-death-reason": "rejected", "x-first-death-exchange": "orders",
			"x-last-death-queue": "orders.process", "x-last-death-reason": "rejected", "x-last-death-exchange": "orders",
			"x-death": []interface{}{death},
		},
		Body: []byte(`{"id":1}`),
	}
	m := &amqp1.Message{
		Header: &amqp1.MessageHeader{Durable: true, Priority: 7, TTL: time.Minute, FirstAcquirer: false},
		Properties: &amqp1.MessageProperties{
			MessageID: "m-1", CorrelationID: amqp1.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
			ReplyTo: strp("/queues/reply%20queue%2F1"), UserID: []byte("guest"),
			ContentType: strp("application/json"), ContentEncoding: strp("gzip"),
			CreationTime: func() *time.Time { t := ts.UTC(); return &t }(), GroupID: strp("shop"),
		},
		ApplicationProperties: map[string]any{
			"b": true, "i8": int8(-3), "u8": uint8(200), "i16": int16(-300), "u16": uint16(60000),
			"i32": int32(-70000), "u32": uint32(4000000000), "i64": int64(1) << 40, "f32": float32(1.5), "f64": 2.25,
			"s": "text", "bin": []byte{0, 1, 0xff}, "t": time.UnixMilli(1700000000000).UTC(), "v": nil,
		},
		Annotations: amqp1.Annotations{
			"x-exchange": "orders", "x-routing-key": "orders.dlq", "x-basic-type": "order.created",
			"x-retry-count": int32(2), "x-table": map[string]any{"k": int16(1), "deep": map[string]any{"x": "y"}}, "x-arr": []any{"a", int32(2)},
			"x-exception-message": "boom", "x-delivery-count": uint64(1), "x-acquired-count": uint64(4),
			"x-first-death-queue": "orders.process", "x-first-death-reason": "rejected", "x-first-death-exchange": "orders",
			"x-last-death-queue": "orders.process", "x-last-death-reason": "rejected", "x-last-death-exchange": "orders",
			"x-opt-deaths": []map[any]any{{
				"ttl": uint32(5000), "queue": "orders.process", "reason": amqp1.Symbol("rejected"), "count": uint64(2),
				"first-time": first, "last-time": first.Add(time.Minute), "exchange": "orders", "routing-keys": []string{"orders.created"},
			}},
		},
		Data: [][]byte{[]byte(`{"id`), []byte(`":1}`)},
	}
	deathQueues := map[string]bool{"orders.process": true}
	mains := map[string]bool{"orders.process": true}
	want := decodeDelivery(&d, 3, 64, &decode.Decoder{DeathQueues: deathQueues, Mains: mains})
	got := decodeAMQP1(m, 3, 64, &decode.Decoder{DeathQueues: deathQueues, Mains: mains})
	sameMessage(t, "0-9-1 published", got, want)
	if got.Retry.Count != 2 || len(got.Deaths) != 1 || got.Deaths[0].Count != 2 || got.Origin == nil {
		t.Errorf("retry %+v deaths %+v origin %+v", got.Retry, got.Deaths, got.Origin)
	}
	for k, v := range got.Headers {
		if !wire.PlainHeaderValue(v) {
			t.Errorf("header %s: %T is not a plain value", k, v)
		}
	}
	if !got.Redelivered {
		t.Error("first-acquirer false reads as redelivered")
	}
}

// A transient message without priority: AMQP 1.0 only says not durable
// (no delivery mode, the transient default) and gives the default priority
// 4 (none).
func TestDecodeAMQP1TransientDefaults(t *testing.T) {
	d := amqp.Delivery{MessageId: "t", Body: []byte("x")}
	m := &amqp1.Message{Header: &amqp1.MessageHeader{Priority: 4, FirstAcquirer: true},
		Properties: &amqp1.MessageProperties{MessageID: "t"}, Data: [][]byte{[]byte("x")}}
	sameMessage(t, "transient", decodeAMQP1(m, 0, 10, nil), decodeDelivery(&d, 0, 10, nil))
}

// Messages published over AMQP 1.0, as RabbitMQ 4.3.6 gives them to a 0-9-1
// consumer (seen in TestAMQP1BrowseDecodesAMQP1Published): ids that are not
// short strings, an amqp-value body, x-cc, the received-time annotation.
func TestDecodeAMQP1PublishedOverAMQP1(t *testing.T) {
	long := strings.Repeat("M", 300)
	value := "an amqp-value string"
	encoded, _ := (&amqp1.Message{Value: value}).MarshalBinary()
	recv := time.UnixMilli(1767225600123)
	for _, tc := range []struct {
		name string
		m    *amqp1.Message
		d    amqp.Delivery
	}{
		{"ulong id", &amqp1.Message{Properties: &amqp1.MessageProperties{MessageID: uint64(7)}, Data: [][]byte{[]byte("p1"), []byte("p2")}},
			amqp.Delivery{MessageId: "7", Body: []byte("p1p2")}},
		{"uuid id, binary correlation, amqp-value body", &amqp1.Message{Properties: &amqp1.MessageProperties{
			MessageID: amqp1.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, CorrelationID: []byte{1, 2}}, Value: value},
			amqp.Delivery{MessageId: "urn:uuid:01020304-0506-0708-090a-0b0c0d0e0f10", Type: "amqp-1.0",
				Headers: amqp.Table{"x-correlation-id": []byte{1, 2}}, Body: encoded}},
		{"long id", &amqp1.Message{Properties: &amqp1.MessageProperties{MessageID: long}},
			amqp.Delivery{Headers: amqp.Table{"x-message-id": long}}},
		{"binary id", &amqp1.Message{Properties: &amqp1.MessageProperties{MessageID: []byte{9, 9}}},
			amqp.Delivery{Headers: amqp.Table{"x-message-id": []byte{9, 9}}}},
		{"reply-to an exchange, ulong header, CC, received time", &amqp1.Message{
			Properties:            &amqp1.MessageProperties{ReplyTo: strp("/exchanges/e/k")},
			ApplicationProperties: map[string]any{"u64": uint64(1) << 63, "sym": amqp1.Symbol("s")},
			Annotations:           amqp1.Annotations{"x-cc": []string{"a", "b"}, "x-opt-rabbitmq-received-time": recv, "x-custom": amqp1.Symbol("ann")}},
			amqp.Delivery{ReplyTo: "/exchanges/e/k", Headers: amqp.Table{"u64": int64(-1) << 63, "sym": "s",
				"CC": []interface{}{"a", "b"}, "timestamp_in_ms": recv.UnixMilli(), "x-custom": "ann"}}},
	} {
		sameMessage(t, tc.name, decodeAMQP1(tc.m, 0, 4096, nil), decodeDelivery(&tc.d, 0, 4096, nil))
	}
}

func TestAMQP1ReplyTo(t *testing.T) {
	for in, want := range map[string]string{
		"/queues/rq": "rq", "/queues/a%20b%25c": "a b%c", "/queues/%2Fqueues%2Fx": "/queues/x",
		"/exchanges/e/k": "/exchanges/e/k", "plain": "plain", "/queues/a/b": "/queues/a/b", "/queues/%zz": "/queues/%zz",
	} {
		if got := amqp1ReplyTo(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// Every AMQP 1.0 value maps to fromTable's plain values.
func TestAMQP1ValuePlain(t *testing.T) {
	at := time.UnixMilli(1700000000999)
	for _, tc := range []struct {
		in, want any
	}{
		{amqp1.Symbol("s"), "s"},
		{uint64(5), int64(5)},
		{at, time.Unix(1700000000, 0)},
		{[]string{"a"}, []any{"a"}},
		{[]amqp1.Symbol{"a"}, []any{"a"}},
		{[]int32{1, 2}, []any{int32(1), int32(2)}},
		{map[any]any{amqp1.Symbol("k"): uint64(1), int64(2): "two"}, map[string]any{"k": int64(1), "2": "two"}},
		{amqp1.UUID{15: 1}, "urn:uuid:00000000-0000-0000-0000-000000000001"},
		{[]any{map[string]any{"x": amqp1.Symbol("y")}}, []any{map[string]any{"x": "y"}}},
	} {
		got := amqp1Value(tc.in)
		if !reflect.DeepEqual(got, tc.want) || !wire.PlainHeaderValue(got) {
			t.Errorf("%#v: %#v, want %#v", tc.in, got, tc.want)
		}
	}
	if _, ok := amqp1Deaths("not a list"); ok {
		t.Error("a malformed x-opt-deaths was read")
	}
	h := amqp1Headers(&amqp1.Message{Annotations: amqp1.Annotations{"x-opt-deaths": []any{"bad"}, "x-death": "client's"}})
	if _, ok := h["x-death"]; ok {
		t.Errorf("x-death from a malformed x-opt-deaths or an x-death annotation: %v", h)
	}
}
