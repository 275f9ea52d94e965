package rabbit

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	amqp1 "github.com/Azure/go-amqp"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/retry"
)

// A message browsed over AMQP 1.0 is decoded into the Message an AMQP 0-9-1
// peek of it gives: the inverse of RabbitMQ 4.3's own conversion (its
// mc_amqpl module), checked against the broker by
// TestAMQP1BrowseDecodesAsAMQP091 and TestAMQP1BrowseDecodesAMQP1Published.
//
// Where the 0-9-1 headers are (0-9-1 publishers, what retry ladders are
// made of):
//   - headers not starting with "x-" arrive as application-properties with
//     their AMQP types (long, int, short, byte, the unsigned ones, float,
//     double, bool, binary, string; timestamps in milliseconds);
//   - "x-" headers arrive as message-annotations, tables and arrays too;
//   - the broker adds annotations of its own: x-exchange and x-routing-key
//     (the delivery's exchange and key), x-basic-type (the type property),
//     x-delivery-count and x-acquired-count, x-first-death-* and
//     x-last-death-*, and the dead-letter history as x-opt-deaths, which a
//     0-9-1 consumer gets as x-death;
//   - properties map one to one, except that the reply-to address becomes
//     /queues/<percent-encoded name>, an id of the form urn:uuid:… becomes a
//     UUID, a timestamp becomes milliseconds, app-id becomes group-id and
//     the delivery mode a durable flag (so a transient message reads as
//     having no delivery mode, as 0-9-1 peeks show a message published
//     over AMQP 1.0, whether its publisher set 1 or nothing; and a
//     priority of 4, AMQP 1.0's default, reads as none).
//
// What RabbitMQ does not carry over AMQP 1.0 cannot be shown: a 0-9-1
// header that does not start with "x-" and holds a table or an array is
// dropped by the conversion, and one holding a decimal makes the broker's
// conversion fail (the browse then ends: see amqp1Ended).

// decodeAMQP1 turns a message received over AMQP 1.0 into a Message,
// through the same decoder as the 0-9-1 peek.
func decodeAMQP1(m *amqp1.Message, pos, preview int, dec *decode.Decoder) broker.Message {
	props, idHeaders := amqp1Properties(m)
	h := amqp1Headers(m)
	for k, v := range idHeaders {
		h[k] = v
	}
	if len(h) == 0 {
		h = nil
	}
	body, encoded := amqp1Body(m)
	if encoded {
		// A body that is not data sections reaches 0-9-1 consumers
		// AMQP-encoded, typed so.
		props.Type = amqp1EncodedType
	}
	out := broker.Message{
		Position:    pos,
		Exchange:    annotationString(m.Annotations, "x-exchange"),
		RoutingKey:  annotationString(m.Annotations, "x-routing-key"),
		Redelivered: m.Header != nil && !m.Header.FirstAcquirer,
		Properties:  props,
		Headers:     h,
	}
	dec.Decode(&out, body, preview)
	return out
}

// amqp1EncodedType is the type property RabbitMQ gives a message whose
// AMQP 1.0 body was an amqp-value or amqp-sequence.
const amqp1EncodedType = "amqp-1.0"

// shortstrMax is the longest 0-9-1 short string: longer ids move to a
// header, longer header names are dropped, as RabbitMQ does.
const shortstrMax = 255

// amqp1Properties maps the AMQP 1.0 header and properties to the 0-9-1
// basic properties, with the headers RabbitMQ moves ids to that a short
// string cannot hold (x-message-id, x-correlation-id).
func amqp1Properties(m *amqp1.Message) (broker.Properties, retry.Headers) {
	var p broker.Properties
	extra := retry.Headers{}
	if h := m.Header; h != nil {
		if h.Durable {
			p.DeliveryMode = 2
		}
		if h.Priority != 4 {
			p.Priority = h.Priority
		}
		if h.TTL > 0 {
			p.Expiration = strconv.FormatInt(h.TTL.Milliseconds(), 10)
		}
	}
	if t, ok := m.Annotations["x-basic-type"]; ok {
		p.Type = plainString(t)
	}
	pr := m.Properties
	if pr == nil {
		return p, extra
	}
	p.MessageID = amqp1ID(pr.MessageID, "x-message-id", extra)
	p.CorrelationID = amqp1ID(pr.CorrelationID, "x-correlation-id", extra)
	if pr.UserID != nil && len(pr.UserID) <= shortstrMax && utf8.Valid(pr.UserID) {
		p.UserID = string(pr.UserID)
	}
	if pr.ReplyTo != nil {
		p.ReplyTo = shortstr(amqp1ReplyTo(*pr.ReplyTo))
	}
	if pr.ContentType != nil {
		p.ContentType = string(*pr.ContentType)
	}
	if pr.ContentEncoding != nil {
		p.ContentEncoding = string(*pr.ContentEncoding)
	}
	if pr.CreationTime != nil {
		t := seconds(*pr.CreationTime)
		p.Timestamp = &t
	}
	if pr.GroupID != nil {
		p.AppID = shortstr(*pr.GroupID)
	}
	return p, extra
}

// amqp1ID is a message or correlation id as 0-9-1 shows it: a UUID as
// urn:uuid:…, a number in decimal; binary, or text too long for a short
// string, goes to the header named header instead.
func amqp1ID(v any, header string, extra retry.Headers) string {
	switch id := v.(type) {
	case nil:
		return ""
	case string:
		if len(id) <= shortstrMax {
			return id
		}
		extra[header] = id
	case amqp1.UUID:
		return uuidURN(id)
	case uint64:
		return strconv.FormatUint(id, 10)
	case []byte:
		extra[header] = append([]byte(nil), id...)
	default:
		return fmt.Sprint(id)
	}
	return ""
}

func uuidURN(u amqp1.UUID) string {
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// amqp1ReplyTo undoes RabbitMQ 4.3's address for a 0-9-1 reply-to:
// /queues/<percent-encoded name> is the name; anything else is as given.
func amqp1ReplyTo(s string) string {
	rest, ok := strings.CutPrefix(s, "/queues/")
	if !ok || strings.Contains(rest, "/") {
		return s
	}
	name, err := url.PathUnescape(rest)
	if err != nil {
		return s
	}
	return name
}

// shortstr drops text a 0-9-1 short string cannot hold, as RabbitMQ does.
func shortstr(s string) string {
	if len(s) > shortstrMax {
		return ""
	}
	return s
}

// amqp1Headers rebuilds the 0-9-1 header table: the application
// properties, and the message annotations that start with "x-" except
// those the 0-9-1 delivery carries elsewhere (exchange, routing key,
// type) or that RabbitMQ keeps to itself.
func amqp1Headers(m *amqp1.Message) retry.Headers {
	h := retry.Headers{}
	for k, v := range m.ApplicationProperties {
		if len(k) <= shortstrMax {
			h[k] = amqp1Value(v)
		}
	}
	for key, v := range m.Annotations {
		k, ok := annotationKey(key)
		if !ok || !strings.HasPrefix(k, "x-") || len(k) > shortstrMax {
			continue
		}
		switch {
		case k == "x-opt-deaths":
			if d, ok := amqp1Deaths(v); ok {
				h["x-death"] = d
			}
		case k == "x-cc":
			h["CC"] = amqp1Value(v)
		case k == "x-opt-rabbitmq-received-time":
			if t, ok := v.(time.Time); ok {
				h["timestamp_in_ms"] = t.UnixMilli()
			}
		case k == "x-exchange", k == "x-routing-key", k == "x-death", strings.HasPrefix(k, "x-basic-"):
			// carried elsewhere, or internal to RabbitMQ
		default:
			h[k] = amqp1Value(v)
		}
	}
	return h
}

func annotationKey(k any) (string, bool) {
	switch s := k.(type) {
	case string:
		return s, true
	case amqp1.Symbol:
		return string(s), true
	}
	return "", false
}

func annotationString(a amqp1.Annotations, key string) string {
	v, ok := a[key]
	if !ok {
		v, ok = a[amqp1.Symbol(key)]
	}
	if !ok {
		return ""
	}
	return plainString(v)
}

func plainString(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case amqp1.Symbol:
		return string(s)
	}
	return fmt.Sprint(v)
}

// amqp1Value maps an AMQP 1.0 value to the plain header value a 0-9-1
// peek of it holds (fromTable's contract): symbols are strings, a ulong a
// long, timestamps seconds, lists, arrays and maps the plain []any and
// map[string]any.
func amqp1Value(v any) any {
	switch x := v.(type) {
	case nil, bool, int8, int16, int32, int64, uint8, uint16, uint32, float32, float64, string:
		return x
	case uint64:
		return int64(x) //nolint:gosec // RabbitMQ converts a ulong to a 0-9-1 long, wrapping
	case amqp1.Symbol:
		return string(x)
	case []byte:
		return append([]byte(nil), x...)
	case time.Time:
		return seconds(x)
	case amqp1.UUID:
		return uuidURN(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = amqp1Value(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := annotationKey(k)
			if !ok {
				ks = fmt.Sprint(k)
			}
			out[ks] = amqp1Value(e)
		}
		return out
	case amqp1.Annotations:
		return amqp1Value(map[any]any(x))
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice {
		// []any (a list) or a typed array ([]string, []int32, []Symbol …).
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = amqp1Value(rv.Index(i).Interface())
		}
		return out
	}
	return fmt.Sprint(v)
}

// seconds is t as a 0-9-1 timestamp holds it: whole seconds, in the local
// zone as amqp091 reads it.
func seconds(t time.Time) time.Time { return time.Unix(t.Unix(), 0) }

// amqp1Deaths turns the x-opt-deaths annotation into the x-death header a
// 0-9-1 consumer of the same message gets: per entry count, reason, queue,
// time (of the first death, in seconds), exchange, routing-keys and, when
// the message had a TTL, original-expiration. Order is kept: the most
// recent death first.
func amqp1Deaths(v any) ([]any, bool) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() != reflect.Slice {
		return nil, false
	}
	out := make([]any, 0, rv.Len())
	for i := 0; i < rv.Len(); i++ {
		e, ok := amqp1Value(rv.Index(i).Interface()).(map[string]any)
		if !ok {
			return nil, false
		}
		d := map[string]any{}
		for k, val := range e {
			switch k {
			case "count":
				d["count"] = val
			case "reason", "queue", "exchange":
				d[k] = val
			case "routing-keys":
				d[k] = val
			case "first-time":
				d["time"] = val
			case "ttl":
				if n, ok := retry.HeaderInt(val); ok {
					d["original-expiration"] = strconv.FormatInt(n, 10)
				}
			}
		}
		out = append(out, d)
	}
	return out, true
}

// amqp1Body is the body a 0-9-1 consumer gets: the data sections joined;
// an amqp-value or amqp-sequence body AMQP-encoded (encoded is true).
func amqp1Body(m *amqp1.Message) (body []byte, encoded bool) {
	if m.Value == nil && len(m.Sequence) == 0 {
		n := 0
		for _, d := range m.Data {
			n += len(d)
		}
		body = make([]byte, 0, n)
		for _, d := range m.Data {
			body = append(body, d...)
		}
		return body, false
	}
	b, err := (&amqp1.Message{Value: m.Value, Sequence: m.Sequence}).MarshalBinary()
	if err != nil {
		return nil, true
	}
	return b, true
}
