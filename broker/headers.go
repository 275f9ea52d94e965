package broker

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/retry"
)

// fromTable adapts an AMQP table to the engine's plain values, keeping every
// field's Go type (int32 stays int32) so it can be written back unchanged.
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
		// Rare in headers; the engine has no decimal type, so keep it exact as text.
		return decimalString(x)
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
	case int:
		// amqp091 sends a Go int as int32 and fails above it: be explicit.
		return int64(x)
	case uint:
		return int64(x)
	default:
		return v
	}
}

func decimalString(d amqp.Decimal) string {
	s := []byte{}
	v := d.Value
	neg := v < 0
	if neg {
		v = -v
	}
	digits := []byte{}
	for v > 0 || len(digits) <= int(d.Scale) {
		digits = append([]byte{byte('0' + v%10)}, digits...)
		v /= 10
	}
	if d.Scale > 0 {
		i := len(digits) - int(d.Scale)
		digits = append(digits[:i], append([]byte{'.'}, digits[i:]...)...)
	}
	if neg {
		s = append(s, '-')
	}
	return string(append(s, digits...))
}
