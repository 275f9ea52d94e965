// Package wire holds AMQP 0-9-1's wire rules for headers and properties,
// as amqp091-go applies them, written out here so the live client and the
// simulation refuse the same tables and a replay sizes a frame without a
// client library.
package wire

import (
	"fmt"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// PlainHeaderValue reports whether v is a plain header value: nil, bool,
// int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32,
// float64, string, []byte, time.Time, retry.Decimal, []any or
// map[string]any of those — never a client library's type. Every reader
// of broker headers (the inspector, the engine, JSON) relies on it; the
// live client's table conversion keeps it.
func PlainHeaderValue(v any) bool {
	switch x := v.(type) {
	case nil, bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, string, []byte, time.Time, retry.Decimal:
		return true
	case []any:
		for _, e := range x {
			if !PlainHeaderValue(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !PlainHeaderValue(e) {
				return false
			}
		}
		return true
	}
	return false
}

// ValidHeaders says whether h can be published (amqp091's field types):
// the live broker and the simulation refuse the same tables. Its errors
// are amqp091's Table.Validate words.
func ValidHeaders(h retry.Headers) error {
	if h == nil {
		return nil
	}
	return validateField(map[string]any(h))
}

// validateField is amqp091's validateField applied to a plain value as the
// live client converts it for publishing (int and uint go as int64).
func validateField(v any) error {
	switch x := v.(type) {
	case nil, bool, uint8, int8, int, uint, int16, int32, int64, uint16, uint32, float32, float64, string, []byte, retry.Decimal, time.Time:
		return nil
	case []any:
		for _, e := range x {
			if err := validateField(e); err != nil {
				return fmt.Errorf("in array %s", err)
			}
		}
		return nil
	case map[string]any:
		return validateTable(x)
	case retry.Headers:
		return validateTable(x)
	}
	return fmt.Errorf("value %T not supported", v)
}

func validateTable(t map[string]any) error {
	for k, e := range t {
		if err := validateField(e); err != nil {
			return fmt.Errorf("table field %q %s", k, err)
		}
	}
	return nil
}

// PropertiesSize is the payload of a content header frame as amqp091
// writes it: class, weight, body size, flags, then each set property.
func PropertiesSize(p broker.Properties, h retry.Headers) int {
	n := 2 + 2 + 8 + 2
	for _, s := range []string{p.ContentType, p.ContentEncoding, p.CorrelationID, p.ReplyTo, p.Expiration, p.MessageID, p.Type, p.UserID, p.AppID} {
		if s != "" {
			n += 1 + len(s)
		}
	}
	if len(h) > 0 {
		n += tableSize(h)
	}
	if p.DeliveryMode > 0 {
		n++
	}
	if p.Priority > 0 {
		n++
	}
	if p.Timestamp != nil && !p.Timestamp.IsZero() {
		n += 8
	}
	return n
}

// tableSize is an AMQP field table's encoded size (its 4-byte length
// included), as amqp091 encodes each Go type.
func tableSize(t map[string]any) int {
	n := 4
	for k, v := range t {
		n += 1 + len(k) + FieldSize(v)
	}
	return n
}

// FieldSize is a plain value's encoded size as amqp091 writes it once the
// live client converted it (int and uint go as int64).
func FieldSize(v any) int {
	switch x := v.(type) {
	case nil:
		return 1
	case bool, byte, int8:
		return 2
	case int16, uint16:
		return 3
	case int32, uint32, float32:
		return 5
	case retry.Decimal:
		return 6
	case int, uint, int64, float64:
		return 9
	case string:
		return 5 + len(x)
	case []byte:
		return 5 + len(x)
	case []any:
		n := 5
		for _, e := range x {
			n += FieldSize(e)
		}
		return n
	case map[string]any:
		return 1 + tableSize(x)
	case retry.Headers:
		return 1 + tableSize(x)
	}
	return 9 // time.Time and anything else amqp091 writes in 8 bytes + type
}
