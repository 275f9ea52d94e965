package rabbit

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/retry"
)

// fromTable adapts an AMQP table to the engine's plain values, keeping every
// field's Go type (int32 stays int32) so it can be written back unchanged.
//
// The contract every reader of broker headers (the inspector, the engine,
// JSON) relies on: a value is nil, bool, int8, int16, int32, int64, uint8,
// uint16, uint32, uint64, float32, float64, string, []byte, time.Time,
// retry.Decimal, []any or map[string]any of those — never a client
// library's type (see PlainHeaderValue).
func fromTable(t amqp.Table) retry.Headers {
	if t == nil {
		return nil
	}
	h := make(retry.Headers, len(t))
	for k, v := range t {
		h[k] = fromValue(v)
	}
	return h
}

func fromValue(v any) any {
	switch x := v.(type) {
	case amqp.Table:
		return map[string]any(fromTable(x))
	case []interface{}:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromValue(e)
		}
		return out
	case amqp.Decimal:
		return retry.Decimal{Scale: x.Scale, Value: x.Value}
	default:
		return v
	}
}

// toTable is fromTable's inverse for publishing.
func toTable(h retry.Headers) amqp.Table {
	if h == nil {
		return nil
	}
	t := make(amqp.Table, len(h))
	for k, v := range h {
		t[k] = toValue(v)
	}
	return t
}

func toValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return toTable(x)
	case retry.Headers:
		return toTable(x)
	case []any:
		out := make([]interface{}, len(x))
		for i, e := range x {
			out[i] = toValue(e)
		}
		return out
	case time.Time:
		return x
	case retry.Decimal:
		return amqp.Decimal{Scale: x.Scale, Value: x.Value}
	case int:
		// amqp091 sends a Go int as int32 and fails above it: be explicit.
		return int64(x)
	case uint:
		return int64(x)
	default:
		return v
	}
}
