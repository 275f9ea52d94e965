package retry

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
)

// fieldReader reads Convention paths from one message's headers into st,
// parsing each JSON header once.
type fieldReader struct {
	// table is the conventions read, in order (Table.All).
	table []Convention
	h     Headers
	st    *RetryState
	json  map[string]jsonDoc
	// origin is the last convention's origin queue, for {origin} keys.
	origin string
	// body is the message body (nil when the reader has none): JSON paths
	// of the body (body#K) and guesses read it, parsed once (bodyDoc).
	body    []byte
	bodyDoc *jsonDoc
}

type jsonDoc struct {
	v   any
	err error
}

// maxJSONHeader bounds the JSON text a header is parsed from: a
// framework's retry record is small; anything larger is not one.
const maxJSONHeader = 1 << 20

const originKey = "{origin}"

// bodyPath is the "header" of a path that reads the JSON body
// ("body#options.retries").
const bodyPath = "body"

// applies says whether c's fields are read at all: its required headers
// are all present.
func (r *fieldReader) applies(c *Convention) bool {
	for _, k := range c.Requires {
		if _, ok := r.h[k]; !ok {
			return false
		}
	}
	return true
}

// marked says whether the message carries one of c's own headers.
func (r *fieldReader) marked(c *Convention) bool {
	for _, k := range c.Marks {
		if _, ok := r.h[k]; ok {
			return true
		}
	}
	return false
}

// readCount fills the count from c's first readable count path.
func (r *fieldReader) readCount(c *Convention) bool {
	r.origin = r.originQueue(c, false)
	found := false
	for _, p := range c.Count {
		v, name, ok := r.lookup(p)
		if !ok {
			continue
		}
		n, kind, err := amqpfield.Count(v)
		if err == nil && c.CountIsAttempt {
			// An attempt number: retries made = attempt − 1.
			if n < 1 {
				err = fmt.Errorf("attempt %d: %s starts at 1", n, name)
			} else {
				n--
			}
		}
		if err != nil {
			r.fail(name, err)
			continue
		}
		if name != p {
			kind = "" // inside a table or JSON: SetCount cannot write it back
		}
		if c.CountSums && found {
			r.st.Count, r.st.Source, r.st.Kind = satAdd(r.st.Count, n), r.st.Source+" + "+name, ""
			continue
		}
		r.st.Count, r.st.Source, r.st.Kind, r.st.countBy = n, name, kind, c.Name
		found = true
		if !c.CountSums {
			return true
		}
	}
	return found
}

// readError fills the error, its time, type and stack trace from the
// first convention with an error text.
func (r *fieldReader) readError() {
	for i := range r.table {
		c := &r.table[i]
		if !r.applies(c) {
			continue
		}
		r.origin = r.originQueue(c, false)
		msg, src := r.text(c.Error)
		if msg == "" {
			continue
		}
		st := r.st
		st.LastError, st.ErrorSource = msg, src
		for _, p := range c.ErrorTime {
			v, name, ok := r.lookup(p)
			if !ok {
				continue
			}
			t, err := timeOf(c, v)
			if err != nil {
				r.fail(name, err)
				continue
			}
			st.LastErrorTime = t
			break
		}
		st.ErrorType, st.ErrorTypeSource = r.text(c.ErrorType)
		trace, src := r.text(c.StackTrace)
		if trace != "" && c.StackIsBase64 {
			b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(trace))
			if err != nil {
				r.fail(src, fmt.Errorf("not base64: %w", err))
				trace = ""
			} else {
				trace = string(b)
			}
		}
		st.StackTrace = trace
		return
	}
}

// readDue fills the due time from the first convention that records one.
// An absent or void value (Celery's eta None) is no due time.
func (r *fieldReader) readDue() {
	for i := range r.table {
		c := &r.table[i]
		if !r.applies(c) {
			continue
		}
		for _, p := range c.DueTime {
			v, name, ok := r.lookup(p)
			if !ok || v == nil {
				continue
			}
			t, err := timeValue(v)
			if err != nil {
				r.fail(name, err)
				continue
			}
			r.st.DueTime, r.st.DueSource = t, name
			return
		}
	}
}

// readOrigin fills where the message failed and where it had been
// published, each from the first convention that records it.
func (r *fieldReader) readOrigin() {
	st := r.st
	for i := range r.table {
		c := &r.table[i]
		if !r.applies(c) {
			continue
		}
		if st.FailedQueue == "" {
			if q := r.originQueue(c, true); q != "" {
				st.FailedQueue = q
			}
		}
		if st.OriginalExchange == "" && st.OriginalRoutingKey == "" {
			ex, src := r.text(c.OriginExchange)
			key, ksrc := r.text(c.OriginRoutingKey)
			if src == "" {
				src = ksrc
			}
			st.OriginalExchange, st.OriginalRoutingKey, st.OriginalSource = ex, key, src
		}
	}
}

// originQueue is c's origin queue ("" when it records none); record says
// to keep its source and report unreadable values (read once per message).
func (r *fieldReader) originQueue(c *Convention, record bool) string {
	for _, p := range c.OriginQueue {
		v, name, ok := r.lookup(p)
		if !ok {
			continue
		}
		s, err := textOf(v)
		if err == nil && c.OriginIsAddress {
			s, err = addressQueue(s)
		}
		if err != nil {
			if record {
				r.fail(name, err)
			}
			continue
		}
		if s == "" {
			continue
		}
		if record {
			r.st.FailedQueueSource = name
		}
		return s
	}
	return ""
}

// timeOf reads a time of c: Unix milliseconds when c says so (a number,
// or its decimal text, as JavaScript's Date.now() gives it), else as
// timeValue reads any header time.
func timeOf(c *Convention, v any) (time.Time, error) {
	if !c.TimeIsMillis {
		return timeValue(v)
	}
	ms, _, err := amqpfield.Int(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("want Unix milliseconds: %w", err)
	}
	return timeValue(time.UnixMilli(ms).UTC())
}

// text is the first non-empty text of paths and the path it came from.
func (r *fieldReader) text(paths []string) (string, string) {
	for _, p := range paths {
		v, name, ok := r.lookup(p)
		if !ok {
			continue
		}
		s, err := textOf(v)
		if err != nil {
			r.fail(name, err)
			continue
		}
		if s != "" {
			return s, name
		}
	}
	return "", ""
}

func (r *fieldReader) fail(path string, err error) {
	for _, e := range r.st.Invalid {
		if e.Path == path {
			return // a path read for two fields is reported once
		}
	}
	r.st.Invalid = append(r.st.Invalid, FieldError{Path: path, Err: err})
}

// lookup reads path p (see Convention); name is p as people write it
// ("rascal.error.message", "retry_info.num_attempts"). ok is false when
// the value is absent; a value of the wrong shape on the way is recorded
// in Invalid and absent.
func (r *fieldReader) lookup(p string) (v any, name string, ok bool) {
	if strings.HasPrefix(p, "{") {
		return r.template(p)
	}
	if hdr, field, isJSON := strings.Cut(p, "#"); isJSON {
		sel := ""
		if strings.HasPrefix(field, "[") {
			sel, field, _ = strings.Cut(field, ".")
		}
		var doc jsonDoc
		if hdr == bodyPath {
			// The body: a message that is not a JSON object simply
			// has no such field.
			name = BodySource + field
			if doc = r.bodyJSON(); doc.err != nil {
				return nil, name, false
			}
		} else {
			name = hdr + "." + field
			raw, present := r.h[hdr]
			if !present {
				return nil, name, false
			}
			if doc = r.parse(hdr, raw); doc.err != nil {
				r.fail(hdr, doc.err)
				return nil, name, false
			}
		}
		v = doc.v
		if arr, isArr := v.([]any); isArr {
			if len(arr) == 0 {
				return nil, name, false
			}
			switch sel {
			case selLast:
				v = arr[len(arr)-1]
			case selMax:
				v = maxField(arr, field)
				return v, name, v != nil
			default:
				v = arr[0]
			}
		}
		v, ok = jsonField(v, field)
		return v, name, ok
	}
	parts := strings.Split(p, "/")
	for i, k := range parts {
		if k == originKey {
			if r.origin == "" {
				return nil, strings.Join(parts[:i], "."), false
			}
			parts[i] = r.origin
		}
	}
	name = strings.Join(parts, ".")
	v, ok = r.h[parts[0]]
	for i := 1; ok && i < len(parts); i++ {
		m, isTable := amqpfield.Table(v)
		if !isTable {
			r.fail(strings.Join(parts[:i], "."), fmt.Errorf("want a table, got %s", amqpfield.TypeName(v)))
			return nil, name, false
		}
		v, ok = m[parts[i]]
	}
	return v, name, ok
}

// Array selectors of a JSON path (see Convention).
const (
	selLast = "[-1]"
	selMax  = "[max]"
)

// jsonField is field (dotted keys) of a parsed JSON value; ok is false when
// it is absent or null.
func jsonField(v any, field string) (any, bool) {
	for _, k := range strings.Split(field, ".") {
		m, isObj := v.(map[string]any)
		if !isObj {
			return nil, false
		}
		if v = m[k]; v == nil {
			return nil, false
		}
	}
	if n, isNum := v.(json.Number); isNum {
		v = string(n) // read like a decimal header
	}
	return v, true
}

// maxField is the largest count among the elements' field: Symfony's
// retry history ends with the failure transport's RedeliveryStamp(0), so
// its last element is not the retries made. An element whose field is not
// a count is passed over; none at all gives the first element's field,
// for the count reader to report.
func maxField(arr []any, field string) any {
	var best any
	var bestN int64 = -1
	for _, e := range arr {
		v, ok := jsonField(e, field)
		if !ok {
			continue
		}
		if n, _, err := amqpfield.Count(v); err == nil && n > bestN {
			best, bestN = v, n
		}
	}
	if best == nil {
		best, _ = jsonField(arr[0], field)
	}
	return best
}

// template reads a path of header names in braces with text between
// ("{x-original-group}.{x-original-channel}"): their texts put in place.
// Absent when any of them is absent, empty or not text; its name is the
// headers' names joined by " + ".
func (r *fieldReader) template(p string) (any, string, bool) {
	var b strings.Builder
	var names []string
	rest := p
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:open])
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, p, false
		}
		hdr := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		names = append(names, hdr)
		v, ok := r.h[hdr]
		if !ok {
			return nil, strings.Join(names, " + "), false
		}
		s, err := textOf(v)
		if err != nil {
			r.fail(hdr, err)
		}
		if err != nil || s == "" {
			return nil, strings.Join(names, " + "), false
		}
		b.WriteString(s)
	}
	return b.String(), strings.Join(names, " + "), true
}

// parse reads a JSON header once per message.
func (r *fieldReader) parse(hdr string, raw any) jsonDoc {
	if d, ok := r.json[hdr]; ok {
		return d
	}
	var d jsonDoc
	s, err := amqpfield.Text(raw)
	switch {
	case err != nil:
		d.err = err
	default:
		d = parseJSON(s)
	}
	if r.json == nil {
		r.json = map[string]jsonDoc{}
	}
	r.json[hdr] = d
	return d
}

// parseJSON parses one JSON value, numbers kept as their text.
func parseJSON(s string) jsonDoc {
	var d jsonDoc
	if len(s) > maxJSONHeader {
		d.err = fmt.Errorf("JSON of %d bytes is too long", len(s))
		return d
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&d.v); err != nil {
		d.err = fmt.Errorf("not JSON: %w", err)
	} else if dec.More() {
		d.err = errors.New("not JSON: text after the value")
	}
	return d
}

// textOf reads a text value: a string, a JSON number, or an array of
// texts (a stack trace kept as lines), one per line.
func textOf(v any) (string, error) {
	if b, ok := v.(bool); ok {
		return fmt.Sprint(b), nil
	}
	if arr, ok := amqpfield.Array(v); ok {
		var b bytes.Buffer
		for i, e := range arr {
			s, err := textOf(e)
			if err != nil {
				return "", fmt.Errorf("line %d: %w", i, err)
			}
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(s)
		}
		return b.String(), nil
	}
	return amqpfield.Text(v)
}

// addressQueue is the queue an endpoint address names: the last segment
// of its path ("rabbitmq://host/vhost/orders?bind=true" → "orders").
func addressQueue(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err == nil && u.Path == "" && u.Opaque != "" {
		u.Path = u.Opaque // MassTransit's short form, "queue:orders"
	}
	if err != nil || u.Path == "" {
		return "", fmt.Errorf("%q is not an endpoint address", truncate(s))
	}
	p := strings.TrimRight(u.Path, "/")
	q := p[strings.LastIndexByte(p, '/')+1:]
	if q == "" {
		return "", fmt.Errorf("%q names no queue", truncate(s))
	}
	return q, nil
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
