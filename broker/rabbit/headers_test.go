package rabbit

import (
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/wire"
	"github.com/ladder-tui/ladder/retry"
)

// everyType is a header table with every AMQP field type amqp091 decodes.
func everyType() amqp.Table {
	ts := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return amqp.Table{
		"b": true, "i8": int8(-3), "u8": uint8(3), "i16": int16(-300), "u16": uint16(300),
		"i32": int32(-70000), "u32": uint32(70000), "i64": int64(1) << 40,
		"f32": float32(1.5), "f64": 2.25, "dec": amqp.Decimal{Scale: 2, Value: -425},
		"s": "text", "x": []byte{0, 1, 0xff}, "t": ts, "v": nil,
		"arr":    []interface{}{int32(1), "two", amqp.Table{"deep": amqp.Decimal{Scale: 0, Value: 4}}},
		"nested": amqp.Table{"k": []interface{}{uint8(1)}},
	}
}

// The headers contract: what broker hands the engine and the UI is plain
// values only, and it writes back as the very same AMQP table.
func TestHeadersArePlainValuesAndRoundTrip(t *testing.T) {
	in := everyType()
	h := fromTable(in)
	for k, v := range h {
		if !wire.PlainHeaderValue(v) {
			t.Errorf("%s: %T is not a plain header value", k, v)
		}
	}
	if d, ok := h["dec"].(retry.Decimal); !ok || d.String() != "-4.25" {
		t.Errorf("decimal %#v", h["dec"])
	}
	if out := toTable(h); !reflect.DeepEqual(out, in) {
		t.Errorf("round trip changed the table:\n in  %#v\n out %#v", in, out)
	}
	if wire.PlainHeaderValue(amqp.Table{}) || wire.PlainHeaderValue([]interface{}{amqp.Decimal{}}) || wire.PlainHeaderValue(struct{}{}) {
		t.Error("a client library type passes as plain")
	}
}

// ValidHeaders is written without amqp091: it refuses exactly the tables
// amqp091's Validate refuses, in its words, once converted for publishing.
func TestValidHeadersIsAMQP091sValidate(t *testing.T) {
	for _, h := range []retry.Headers{
		nil, {}, fromTable(everyType()),
		{"i": 1, "u": uint(2)}, {"u64": uint64(1)}, {"s": []string{"a"}},
		{"arr": []any{int8(1), uint64(2)}}, {"m": map[string]any{"deep": []any{map[string]any{"x": struct{}{}}}}},
		{"h": retry.Headers{"u": uint64(3)}}, {"d": retry.Decimal{Scale: 1, Value: 2}},
	} {
		want, got := toTable(h).Validate(), wire.ValidHeaders(h)
		if (want == nil) != (got == nil) || want != nil && want.Error() != got.Error() {
			t.Errorf("%#v: ValidHeaders %v, amqp091 %v", h, got, want)
		}
	}
}
