// Package dumpfile is the dump file format (JSON Lines) and the progress
// file a replay of one keeps beside it.
package dumpfile

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
)

// The dump format (JSON Lines), documented in docs/dump-format.md: a first line
// describing the dump, then one line per message with everything needed to
// publish it again bit for bit. Header values keep their AMQP types as
// one-key objects ({"int32":3}, {"decimal":{"scale":2,"value":-425}}, …).

// Format is the version of the format this ladder writes and reads.
const Format = 1

// Header is a dump's first line.
type Header struct {
	LadderDump    int       `json:"ladder_dump"`
	Vhost         string    `json:"vhost"`
	Queue         string    `json:"queue"`
	BrokerVersion string    `json:"broker_version"`
	DumpedAt      time.Time `json:"dumped_at"`
}

// Record is one message of a dump.
type Record struct {
	Position    int           `json:"position"`
	Exchange    string        `json:"exchange"`
	RoutingKey  string        `json:"routing_key"`
	Redelivered bool          `json:"redelivered"`
	Properties  Properties    `json:"properties"`
	Headers     retry.Headers `json:"-"`
	Body        []byte        `json:"-"`
	// BodyText is true when the body was written as text (--body text).
	BodyText bool `json:"-"`
}

// Properties are every AMQP basic property; the timestamp in seconds.
type Properties struct {
	ContentType     string `json:"content_type,omitempty"`
	ContentEncoding string `json:"content_encoding,omitempty"`
	DeliveryMode    uint8  `json:"delivery_mode,omitempty"`
	Priority        uint8  `json:"priority,omitempty"`
	CorrelationID   string `json:"correlation_id,omitempty"`
	ReplyTo         string `json:"reply_to,omitempty"`
	Expiration      string `json:"expiration,omitempty"`
	MessageID       string `json:"message_id,omitempty"`
	Timestamp       *int64 `json:"timestamp,omitempty"`
	Type            string `json:"type,omitempty"`
	UserID          string `json:"user_id,omitempty"`
	AppID           string `json:"app_id,omitempty"`
}

// recordJSON is Record on the wire.
type recordJSON struct {
	Record
	Headers  map[string]json.RawMessage `json:"headers"`
	Body     *string                    `json:"body,omitempty"`
	BodyText *string                    `json:"body_text,omitempty"`
}

// MarshalRecord writes one line (without its newline). bodyText writes a
// valid UTF-8 body as text instead of base64.
func MarshalRecord(r Record, bodyText bool) ([]byte, error) {
	// JSON strings hold UTF-8 only: a name that is not would come back
	// changed, so the message is refused (and stays where it is).
	p := r.Properties
	for _, f := range []struct{ name, v string }{
		{"exchange", r.Exchange}, {"routing key", r.RoutingKey}, {"content_type", p.ContentType},
		{"content_encoding", p.ContentEncoding}, {"correlation_id", p.CorrelationID}, {"reply_to", p.ReplyTo},
		{"expiration", p.Expiration}, {"message_id", p.MessageID}, {"type", p.Type}, {"user_id", p.UserID}, {"app_id", p.AppID},
	} {
		if !utf8.ValidString(f.v) {
			return nil, fmt.Errorf("%s %q is not valid UTF-8: a dump cannot keep it exactly", f.name, f.v)
		}
	}
	// What UnmarshalRecord would refuse is not written.
	if nesting(map[string]any(r.Headers), maxTypedDepth) > maxTypedDepth {
		return nil, fmt.Errorf("headers nest more than %d deep, more than a dump reads back", maxTypedDepth)
	}
	out := recordJSON{Record: r, Headers: map[string]json.RawMessage{}}
	for k, v := range r.Headers {
		if !utf8.ValidString(k) {
			return nil, fmt.Errorf("header name %q is not valid UTF-8: a dump cannot keep it exactly", k)
		}
		raw, err := marshalTyped(v)
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
		out.Headers[k] = raw
	}
	if bodyText && utf8.Valid(r.Body) {
		s := string(r.Body)
		out.BodyText = &s
	} else {
		s := base64.StdEncoding.EncodeToString(r.Body)
		out.Body = &s
	}
	line, err := json.Marshal(out)
	// A dump is printed (--out -, cat) as well as replayed: no rune in it
	// may act on a terminal.
	return termtext.EscapeJSON(line), err
}

// UnmarshalRecord reads one line of a dump.
func UnmarshalRecord(line []byte) (Record, error) {
	var in recordJSON
	if err := json.Unmarshal(line, &in); err != nil {
		return Record{}, err
	}
	r := in.Record
	switch {
	case in.Body != nil && in.BodyText != nil:
		return Record{}, errors.New(`both "body" and "body_text"`)
	case in.Body != nil:
		b, err := base64.StdEncoding.DecodeString(*in.Body)
		if err != nil {
			return Record{}, fmt.Errorf("body: %w", err)
		}
		r.Body = b
	case in.BodyText != nil:
		r.Body, r.BodyText = []byte(*in.BodyText), true
	default:
		return Record{}, errors.New(`no "body" or "body_text"`)
	}
	r.Headers = retry.Headers{}
	for k, raw := range in.Headers {
		v, err := unmarshalTyped(raw, 0)
		if err != nil {
			return Record{}, fmt.Errorf("header %q: %w", k, err)
		}
		r.Headers[k] = v
	}
	return r, nil
}

// marshalTyped writes a plain header value (see PlainHeaderValue) as a
// one-key object naming its AMQP type.
func marshalTyped(v any) (json.RawMessage, error) {
	one := func(t string, x any) (json.RawMessage, error) { return json.Marshal(map[string]any{t: x}) }
	switch x := v.(type) {
	case nil:
		return json.RawMessage(`{"void":null}`), nil
	case bool:
		return one("bool", x)
	case int8:
		return one("int8", x)
	case int16:
		return one("int16", x)
	case int32:
		return one("int32", x)
	case int64:
		return one("int64", x)
	case uint8:
		return one("uint8", x)
	case uint16:
		return one("uint16", x)
	case uint32:
		return one("uint32", x)
	case uint64:
		// AMQP 0-9-1 has no unsigned 64-bit field: no broker sends one.
		return nil, errors.New("uint64 is no AMQP 0-9-1 field type")
	case float32:
		return one("float32", floatText(float64(x), 32))
	case float64:
		return one("float64", floatText(x, 64))
	case retry.Decimal:
		return one("decimal", map[string]any{"scale": x.Scale, "value": x.Value})
	case string:
		if !utf8.ValidString(x) {
			// A longstr is bytes: keep them exactly (JSON strings are UTF-8).
			return one("string_b64", base64.StdEncoding.EncodeToString([]byte(x)))
		}
		return one("string", x)
	case []byte:
		return one("bytes", base64.StdEncoding.EncodeToString(x))
	case time.Time:
		return one("timestamp", x.Unix())
	case []any:
		items := make([]json.RawMessage, len(x))
		for i, e := range x {
			raw, err := marshalTyped(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			items[i] = raw
		}
		return one("array", items)
	case map[string]any:
		return marshalTable(x)
	case retry.Headers:
		return marshalTable(x)
	}
	return nil, fmt.Errorf("type %T has no AMQP field type", v)
}

func marshalTable(t map[string]any) (json.RawMessage, error) {
	keys := make([]string, 0, len(t))
	for k := range t {
		if !utf8.ValidString(k) {
			return nil, fmt.Errorf("field name %q is not valid UTF-8", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fields := make(map[string]json.RawMessage, len(t))
	for _, k := range keys {
		raw, err := marshalTyped(t[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		fields[k] = raw
	}
	return json.Marshal(map[string]any{"table": fields})
}

// floatText keeps a float exact: a JSON number, or "NaN", "+Inf", "-Inf".
func floatText(f float64, bits int) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, bits)
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, bits))
}

// nesting is how deep tables and arrays nest in v (a plain value: 0),
// counted no further than limit+1.
func nesting(v any, limit int) int {
	if limit < 0 {
		return 1
	}
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if d = max(d, nesting(e, limit-1)); d > limit {
				break
			}
		}
	case map[string]any:
		for _, e := range x {
			if d = max(d, nesting(e, limit-1)); d > limit {
				break
			}
		}
	case retry.Headers:
		return nesting(map[string]any(x), limit)
	default:
		return 0
	}
	return d + 1
}

// maxTypedDepth bounds nesting: a hostile file cannot exhaust the stack.
const maxTypedDepth = 64

func unmarshalTyped(raw json.RawMessage, depth int) (any, error) {
	if depth > maxTypedDepth {
		return nil, errors.New("nested too deep")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || len(obj) != 1 {
		return nil, errors.New(`want {"<type>": value}`)
	}
	for t, v := range obj {
		return decodeTyped(t, v, depth)
	}
	return nil, nil
}

func decodeTyped(t string, v json.RawMessage, depth int) (any, error) {
	intOf := func(lo, hi int64) (int64, error) {
		var n int64
		if err := json.Unmarshal(v, &n); err != nil {
			return 0, fmt.Errorf("%s: %w", t, err)
		}
		if n < lo || n > hi {
			return 0, fmt.Errorf("%s: %d out of range", t, n)
		}
		return n, nil
	}
	switch t {
	case "void":
		return nil, nil
	case "bool":
		var b bool
		err := json.Unmarshal(v, &b)
		return b, err
	case "int8":
		n, err := intOf(math.MinInt8, math.MaxInt8)
		return int8(n), err
	case "int16":
		n, err := intOf(math.MinInt16, math.MaxInt16)
		return int16(n), err
	case "int32":
		n, err := intOf(math.MinInt32, math.MaxInt32)
		return int32(n), err
	case "int64":
		return intOf(math.MinInt64, math.MaxInt64)
	case "uint8":
		n, err := intOf(0, math.MaxUint8)
		return uint8(n), err
	case "uint16":
		n, err := intOf(0, math.MaxUint16)
		return uint16(n), err
	case "uint32":
		n, err := intOf(0, math.MaxUint32)
		return uint32(n), err
	case "uint64":
		return nil, errors.New("uint64 is no AMQP 0-9-1 field type: it cannot be published")
	case "float32", "float64":
		bits := 64
		if t == "float32" {
			bits = 32
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		f, err := strconv.ParseFloat(s, bits)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		if bits == 32 {
			return float32(f), nil
		}
		return f, nil
	case "decimal":
		var d struct {
			Scale *uint8 `json:"scale"`
			Value *int32 `json:"value"`
		}
		if err := json.Unmarshal(v, &d); err != nil || d.Scale == nil || d.Value == nil {
			return nil, errors.New(`decimal: want {"scale": 0-255, "value": int32}`)
		}
		return retry.Decimal{Scale: *d.Scale, Value: *d.Value}, nil
	case "string":
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	case "string_b64":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("string_b64: %w", err)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		return string(b), err
	case "bytes":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("bytes: %w", err)
		}
		return base64.StdEncoding.DecodeString(s)
	case "timestamp":
		var n int64
		if err := json.Unmarshal(v, &n); err != nil {
			return nil, fmt.Errorf("timestamp: %w", err)
		}
		return time.Unix(n, 0).UTC(), nil
	case "array":
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return nil, fmt.Errorf("array: %w", err)
		}
		out := make([]any, len(items))
		for i, raw := range items {
			e, err := unmarshalTyped(raw, depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = e
		}
		return out, nil
	case "table":
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(v, &fields); err != nil {
			return nil, fmt.Errorf("table: %w", err)
		}
		out := make(map[string]any, len(fields))
		for k, raw := range fields {
			e, err := unmarshalTyped(raw, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown type %q", t)
}

// Line is one record of a dump file with its line number.
type Line struct {
	Line   int
	Record Record
}

// BadLine is a line of a dump that cannot be read, and why.
type BadLine struct {
	Line int
	Why  string
}

// Read reads a dump file: its header and records. A malformed line is
// reported in bad (line number and why) and left out.
func Read(r io.Reader) (Header, []Line, []string, error) {
	head, lines, bad, err := ReadLines(r)
	var out []string
	for _, b := range bad {
		out = append(out, fmt.Sprintf("line %d: %s", b.Line, b.Why))
	}
	return head, lines, out, err
}

// ReadHeader reads the first line of the dump file at path.
func ReadHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	var head Header
	if (err != nil && !errors.Is(err, io.EOF)) || json.Unmarshal(line, &head) != nil || head.LadderDump == 0 {
		return head, fmt.Errorf("%s: line 1: not a ladder dump", path)
	}
	return head, nil
}

// ReadLines is Read with each malformed line apart (its number and why).
func ReadLines(r io.Reader) (Header, []Line, []BadLine, error) {
	var head Header
	var lines []Line
	var bad []BadLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<30)
	n := 0
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if n == 1 {
			if err := json.Unmarshal(b, &head); err != nil || head.LadderDump == 0 {
				return head, nil, nil, errors.New(`line 1: not a ladder dump (want {"ladder_dump":1,…})`)
			}
			if head.LadderDump != Format {
				return head, nil, nil, fmt.Errorf("line 1: dump format %d; this ladder reads %d", head.LadderDump, Format)
			}
			continue
		}
		if len(b) == 0 {
			continue
		}
		rec, err := UnmarshalRecord(b)
		if err != nil {
			bad = append(bad, BadLine{Line: n, Why: err.Error()})
			continue
		}
		lines = append(lines, Line{Line: n, Record: rec})
	}
	if err := sc.Err(); err != nil {
		return head, lines, bad, fmt.Errorf("line %d: %w", n+1, err)
	}
	if n == 0 {
		return head, nil, nil, errors.New("empty file: not a ladder dump")
	}
	return head, lines, bad, nil
}
