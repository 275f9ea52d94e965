package retry

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
)

// Guessing reads what no convention gave from where a framework nobody
// here has met most likely put it: a header, or a field of a JSON body (top
// level or one object down: Dramatiq's options.retries), whose name says
// what it holds. Known conventions always win; each guessed field is named
// in RetryState.Guessed, and its source says where it came from.
//
// Origins are read from headers only: the planner's origin (moveplan) reads
// headers, and what ladder shows must be what a move does.

// Fields RetryState.Guessed names.
const (
	GuessedCount     = "count"
	GuessedError     = "error"
	GuessedErrorType = "error_type"
	GuessedErrorTime = "error_time"
	GuessedStack     = "stack_trace"
	GuessedQueue     = "failed_queue"
	GuessedExchange  = "original_exchange"
)

// BodySource prefixes a source read from the JSON body ("body options.retries").
const BodySource = "body "

// guessKind is what a name says its value holds.
type guessKind int

const (
	guessNone guessKind = iota
	guessCount
	guessAttempt // an attempt number or attempts made: retries = n − 1
	guessError
	guessErrorType
	guessErrorTime
	guessStack
	guessQueue
	guessExchange
	guessRoutingKey
)

// notGuessed are names owned by the broker or read by their own rules
// (x-death, the quorum counters, the delayed exchange's x-delay).
var notGuessed = []string{"xdeath", "xdeliverycount", "xacquiredcount", "xfirstdeath", "xlastdeath", "xdelay", "xretrydelay", "xmatch"}

// limits are words that make a name a setting, not a record: max-retries,
// retry-delay, attempts-limit.
var limits = []string{"max", "limit", "delay", "backoff", "interval", "ttl", "timeout", "policy", "allowed", "remaining", "left"}

// guessName reads what a field's name says it holds.
func guessName(name string) guessKind {
	var buf [maxGuessName]byte
	n, ok := normName(buf[:0], name)
	if !ok || len(n) == 0 {
		return guessNone
	}
	for _, p := range notGuessed {
		if bytes.HasPrefix(n, []byte(p)) {
			return guessNone
		}
	}
	has := func(words ...string) bool {
		for _, w := range words {
			if bytes.Contains(n, []byte(w)) {
				return true
			}
		}
		return false
	}
	is := func(w string) bool { return string(n) == w }
	suffix := func(w string) bool { return bytes.HasSuffix(n, []byte(w)) }
	settings := has(limits...)
	failure := has("error", "exception", "fault", "failure", "failed")
	switch {
	case has("stacktrace", "traceback", "backtrace") || suffix("stack"):
		return guessStack
	case failure && has("type", "class", "code", "kind") || has("errorname", "exceptionname"):
		return guessErrorType
	case failure && has("time", "date", "failedat", "erroredat", "errorat", "failureat", "faultedat"):
		return guessErrorTime
	case has("queue") && has("original", "origin", "source", "failed", "from"):
		return guessQueue
	case has("exchange", "topic") && has("original", "origin", "source", "from"):
		return guessExchange
	case has("routingkey") && has("original", "origin", "source", "from"):
		return guessRoutingKey
	case settings:
		return guessNone
	case has("retrycount", "retries", "retried", "retrynumber", "redeliverycount", "redeliveredcount", "redeliveries", "numretry", "retrycnt"):
		return guessCount
	case has("attempt") || is("tries") || suffix("tries") && !has("retries"):
		return guessAttempt
	case has("count", "number", "num"):
		return guessNone
	case failure && !has("count", "id") || has("reason") && !has("death"):
		return guessError
	}
	return guessNone
}

// maxGuessName bounds the names guessed from: a name that says what it
// holds is short, and reading one allocates nothing (a message may carry
// 10,000 headers).
const maxGuessName = 64

// normName appends name in lower case with only its ASCII letters and
// digits to buf; ok is false for a name too long or not ASCII.
func normName(buf []byte, name string) ([]byte, bool) {
	if len(name) > maxGuessName {
		return nil, false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			buf = append(buf, c)
		case c >= 'A' && c <= 'Z':
			buf = append(buf, c+'a'-'A')
		case c >= 0x80:
			return nil, false
		}
	}
	return buf, true
}

// guessField is one field whose name says what it holds.
type guessField struct {
	kind   guessKind
	source string // "x-attempts", "body options.retries"
	value  any
	body   bool
}

// guessFields are h's headers (top level) and then the JSON body's fields
// (top level, then one object down), each level in name order, that name
// something guessable.
func (r *fieldReader) guessFields() []guessField {
	var out []guessField
	var known map[string]bool
	for k, v := range r.h {
		g := guessName(k)
		if g == guessNone {
			continue
		}
		if known == nil {
			known = r.knownHeaders()
		}
		if !known[k] {
			out = append(out, guessField{kind: g, source: k, value: v})
		}
	}
	slices.SortFunc(out, func(a, b guessField) int { return strings.Compare(a.source, b.source) })
	if r.bodyDoc == nil && !mayNameAGuess(r.body) {
		return out // not parsed for a convention, and nothing to guess from
	}
	obj, ok := r.bodyJSON().v.(map[string]any)
	if !ok {
		return out
	}
	keys := sortedKeys(obj)
	var nested []guessField
	for _, k := range keys {
		if inner, isObj := obj[k].(map[string]any); isObj {
			for _, k2 := range sortedKeys(inner) {
				if g := guessName(k2); g != guessNone && inner[k2] != nil {
					nested = append(nested, guessField{kind: g, source: BodySource + k + "." + k2, value: jsonValue(inner[k2]), body: true})
				}
			}
			continue
		}
		if g := guessName(k); g != guessNone && obj[k] != nil {
			out = append(out, guessField{kind: g, source: BodySource + k, value: jsonValue(obj[k]), body: true})
		}
	}
	return append(out, nested...)
}

// knownHeaders are the headers the conventions that apply to the message
// read (or found unreadable): never guessed from, a convention's reading
// wins. A convention that does not apply (Spring's retry-count without its
// exception header) leaves its generic names to guess from.
func (r *fieldReader) knownHeaders() map[string]bool {
	known := map[string]bool{}
	for i := range r.table {
		c := &r.table[i]
		if !r.applies(c) {
			continue
		}
		for _, paths := range [][]string{c.Count, c.Error, c.ErrorType, c.ErrorTime, c.StackTrace, c.OriginQueue, c.OriginExchange, c.OriginRoutingKey, c.DueTime, c.Marks} {
			for _, p := range paths {
				for _, h := range pathHeaders(p) {
					known[h] = true
				}
			}
		}
	}
	return known
}

// pathHeaders are the headers a Convention path reads.
func pathHeaders(p string) []string {
	if strings.HasPrefix(p, "{") {
		var out []string
		for _, part := range strings.Split(p, "{")[1:] {
			name, _, _ := strings.Cut(part, "}")
			out = append(out, name)
		}
		return out
	}
	if hdr, _, ok := strings.Cut(p, "#"); ok {
		return []string{hdr}
	}
	hdr, _, _ := strings.Cut(p, "/")
	return []string{hdr}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// guess fills what the conventions left empty from guessFields; count
// says whether the count is still to be found (no convention read one).
func (r *fieldReader) guess(count bool) bool {
	st := r.st
	found := false
	mark := func(field string) { st.Guessed = append(st.Guessed, field) }
	for _, f := range r.guessFields() {
		switch f.kind {
		case guessCount, guessAttempt:
			if !count || found {
				continue
			}
			n, kind, err := amqpfield.Count(f.value)
			if err != nil {
				continue // a name alone is no evidence: an unreadable guess is no finding
			}
			if f.kind == guessAttempt && n > 0 {
				n-- // attempts made, the first delivery among them
			}
			st.countAttempts = f.kind == guessAttempt
			if f.body || f.kind == guessAttempt {
				kind = "" // SetCount writes x-retry-count instead
			}
			st.Count, st.Source, st.Kind = n, f.source, kind
			found = true
			mark(GuessedCount)
		case guessError:
			if st.LastError == "" {
				if s, err := textOf(f.value); err == nil && s != "" {
					st.LastError, st.ErrorSource = s, f.source
					mark(GuessedError)
				}
			}
		case guessErrorType:
			if st.ErrorType == "" {
				if s, err := textOf(f.value); err == nil && s != "" {
					st.ErrorType, st.ErrorTypeSource = s, f.source
					mark(GuessedErrorType)
				}
			}
		case guessErrorTime:
			if st.LastErrorTime.IsZero() {
				if t, err := guessTime(f.value); err == nil {
					st.LastErrorTime = t
					mark(GuessedErrorTime)
				}
			}
		case guessStack:
			if st.StackTrace == "" {
				if s, err := textOf(f.value); err == nil && s != "" {
					st.StackTrace = s
					mark(GuessedStack)
				}
			}
		case guessQueue:
			if st.FailedQueue == "" && !f.body {
				if s, err := textOf(f.value); err == nil && s != "" {
					st.FailedQueue, st.FailedQueueSource = s, f.source
					mark(GuessedQueue)
				}
			}
		case guessExchange, guessRoutingKey:
			if st.OriginalSource == "" && !f.body {
				r.guessRoute()
				if st.OriginalSource != "" {
					mark(GuessedExchange)
				}
			}
		}
	}
	return found
}

// guessRoute reads a recorded exchange (or topic) and routing key from
// headers named so: both from the same record where both are there.
func (r *fieldReader) guessRoute() {
	var ex, key, exSrc, keySrc string
	for _, f := range r.guessFields() {
		if f.body {
			continue
		}
		s, err := textOf(f.value)
		if err != nil {
			continue
		}
		switch {
		case f.kind == guessExchange && exSrc == "":
			ex, exSrc = s, f.source
		case f.kind == guessRoutingKey && keySrc == "":
			key, keySrc = s, f.source
		}
	}
	if exSrc == "" {
		return // a key alone says nothing of where it was published
	}
	r.st.OriginalExchange, r.st.OriginalRoutingKey, r.st.OriginalSource = ex, key, exSrc
}

// IsGuessed says whether field (a Guessed* constant) was guessed.
func (st RetryState) IsGuessed(field string) bool { return slices.Contains(st.Guessed, field) }

// SourceLabel says where a field came from and how ladder knows it:
// "header x-attempts (guessed)", "header retry_info.num_attempts
// (Sneakers)", "x-death", "none". field is a Guessed* constant; source the
// field's source as RetryState holds it.
func (st RetryState) SourceLabel(field, source string) string {
	where := SourceWhere(source)
	if how := st.SourceHow(field); how != "" && source != SourceNone && source != SourceXDeath && source != SourceDeliveryCount {
		return where + " (" + how + ")"
	}
	return where
}

// SourceWhere is where a source is: "header NAME", "body PATH", or the
// broker's own (x-death, x-delivery-count, none) as is.
func SourceWhere(source string) string {
	switch {
	case source == "", source == SourceXDeath, source == SourceNone, source == SourceDeliveryCount,
		strings.HasPrefix(source, BodySource):
		return source
	}
	return "header " + source
}

// SourceHow is how ladder knows field: "guessed" (and how it was read),
// the convention that gave the count, or "".
func (st RetryState) SourceHow(field string) string {
	switch {
	case st.IsGuessed(field) && field == GuessedCount && st.countAttempts:
		return "guessed: attempts made, less the first"
	case st.IsGuessed(field):
		return "guessed"
	case field == GuessedCount && st.countBy != "":
		return st.countBy
	}
	return ""
}

// guessTime reads a time of unknown convention: a number (or its text)
// is Unix seconds, or milliseconds when it is too large for seconds of
// this era (JavaScript's Date.now()); else as timeValue reads any time.
func guessTime(v any) (time.Time, error) {
	if n, _, err := amqpfield.Int(v); err == nil {
		if n > 1e11 {
			return timeValue(time.UnixMilli(n).UTC())
		}
		return timeValue(time.Unix(n, 0).UTC())
	}
	return timeValue(v)
}

// jsonValue reads a parsed JSON value as a header value: a number as its
// decimal text (as jsonField does).
func jsonValue(v any) any {
	if n, ok := v.(json.Number); ok {
		return string(n)
	}
	return v
}

// bodyJSON is the body parsed as JSON once per message (an error when it
// is not JSON, is larger than maxJSONHeader, or there is no body).
func (r *fieldReader) bodyJSON() jsonDoc {
	if r.bodyDoc != nil {
		return *r.bodyDoc
	}
	var d jsonDoc
	trimmed := bytes.TrimSpace(r.body)
	switch {
	case len(trimmed) == 0 || trimmed[0] != '{':
		d.err = errNotJSONObject
	default:
		d = parseJSON(string(trimmed))
	}
	r.bodyDoc = &d
	return d
}

var errNotJSONObject = errors.New("not a JSON object")

// guessStems are parts of every name guessName reads from a body (in
// either case of its first letter): a body holding none is not parsed, so
// a peek of a million JSON messages parses only those that may say
// something. Only for the guess: a convention's body path parses anyway.
var guessStems = [][]byte{
	[]byte("etr"), []byte("ttempt"), []byte("ries"), []byte("rror"), []byte("xception"),
	[]byte("ault"), []byte("ail"), []byte("eason"), []byte("race"), []byte("tack"), []byte("eliver"),
}

// mayNameAGuess says whether body holds a stem of a guessable name.
func mayNameAGuess(body []byte) bool {
	for _, s := range guessStems {
		if bytes.Contains(body, s) {
			return true
		}
	}
	return false
}
