package retry

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
)

// Headers is a message's header table. An amqp091 amqp.Table converts to it
// directly: retry.Headers(d.Headers). Nested amqp.Table values are read too.
type Headers map[string]any

// Clone returns a shallow copy; nil clones to an empty table.
func (h Headers) Clone() Headers {
	out := make(Headers, len(h)+2)
	for k, v := range h {
		out[k] = v
	}
	return out
}

// Where a retry count was read from (RetryState.Source).
const (
	SourceRetryCount    = "x-retry-count"       // Go and Python seeds, most hand-written workers
	SourceYiiAttempt    = "yii-attempt"         // PHP yii2-queue: the attempt being run, 1 first
	SourceMassTransit   = "MT-Redelivery-Count" // MassTransit delayed redelivery
	SourceNServiceBus   = "NServiceBus.Retries" // NServiceBus delayed retries
	SourceXDeath        = "x-death"             // the broker's dead-letter history
	SourceAcquiredCount = "x-acquired-count"    // quorum queues, RabbitMQ 4.3+: never a retry count (see countSources)
	SourceDeliveryCount = "x-delivery-count"    // quorum queues
	SourceNone          = "none"                // no convention: a first delivery
)

// What made the queues a count read from x-death sums the ones that count
// (RetryState.CountFrom).
const (
	// CountFromTopology: the vhost's topology alone makes them the retry
	// queues (tiers, wait queues) of the ladder the message's queue is in.
	CountFromTopology = "topology"
	// CountFromMessages: what messages read showed (where they expired,
	// were rejected, the queue they failed in) made them so: without it
	// the count would differ.
	CountFromMessages = "messages"
	// CountFromQueue: the message's queue is in no ladder; only its deaths
	// in that queue itself count.
	CountFromQueue = "queue"
)

// After the conventions' own counters (the table's order), ReadState tries
// x-death, then the quorum delivery count. Counters a worker writes on
// purpose come first: they survive republishing, and ResetCount can only
// reset those. x-death comes next: it counts real trips through the ladder
// but is broker-owned (and 4.x ignores a client-published one). The quorum
// delivery count comes last: it also counts redeliveries after a crash, and
// restarts at zero when a message is republished.
// x-acquired-count (RabbitMQ 4.3+) is not a count of retries: every browse
// raises it — ladder's own peeks over AMQP 1.0 raise nothing else — so a
// message ladder merely looked at would read as retried. Nack-and-requeue
// loops, which on 4.3 raise only it, show as the requeue-storm finding.

// Headers of the other conventions ReadState surfaces.
const (
	hdrPyLastError     = "x-last-error"      // Python seed
	hdrPyLastErrorTime = "x-last-error-time" // Python seed, isoformat() of utcnow()
	hdrPyRetryDelay    = "x-retry-delay"     // Python seed, ms
	hdrDelay           = "x-delay"           // delayed-message exchange, ms (−d after the delay)
	hdrYiiDelay        = "yii-delay"         // yii2-queue, seconds
	hdrSpringError     = "x-exception-message"
	hdrSpringStack     = "x-exception-stacktrace"
	hdrSpringExchange  = "x-original-exchange"
	hdrSpringKey       = "x-original-routingKey"
	hdrMTError         = "MT-Fault-Message"
	hdrMTErrorTime     = "MT-Fault-Timestamp"
	hdrMTRetryCount    = "MT-Fault-RetryCount"   // immediate retries of the attempt that faulted
	hdrMTInput         = "MT-Fault-InputAddress" // the endpoint's address: its queue is the last segment
	hdrNSBError        = "NServiceBus.ExceptionInfo.Message"
	hdrNSBErrorTime    = "NServiceBus.TimeOfFailure"
	hdrNSBFailedQ      = "NServiceBus.FailedQ"
)

// RetryState is what a message's headers say about its retries.
type RetryState struct {
	// Count is the number of retries already made: 0 on a first delivery.
	Count int64 `json:"count"`
	// Source is where Count was read from: a Source* constant, or the path
	// of a framework's header from Conventions, read as people write it
	// ("MT-Fault-RetryCount", "retry_info.num_attempts",
	// "rascal.recovery.orders.republished").
	Source string `json:"source"`
	// Kind is the Go type the count header had ("int8", "string", …); empty
	// for x-death (a sum), SourceNone and counts inside a table or JSON.
	// SetCount writes the same type.
	Kind string `json:"kind,omitempty"`
	// CountedIn are the queues whose x-death entries Count sums (Source
	// x-death), in x-death's order: the retry queues of the message's
	// ladder (DeathQueues).
	CountedIn []string `json:"counted_in,omitempty"`
	// CountFrom says what made CountedIn the queues that count, when
	// Source is x-death and the reader knows (a peek does): a CountFrom*
	// constant; "" otherwise.
	CountFrom string `json:"count_from,omitempty"`
	// Framework names the convention whose headers the message carries
	// (Convention.Name), when one marks it.
	Framework string `json:"framework,omitempty"`
	// LastError is the last failure's text from the first convention that
	// carries one (Conventions' order): x-last-error (Python seed),
	// x-exception-message (Spring AMQP), MT-Fault-Message (MassTransit),
	// NServiceBus.ExceptionInfo.Message, Sneakers' retry_info,
	// rascal's error.message.
	LastError string `json:"last_error,omitempty"`
	// LastErrorTime is when, if that convention says (Spring does not).
	LastErrorTime time.Time `json:"last_error_time,omitzero"`
	// ErrorSource is the header LastError came from.
	ErrorSource string `json:"error_source,omitempty"`
	// ErrorType is the failure's exception type (or code), and StackTrace
	// its stack trace, from the same convention as LastError.
	ErrorType  string `json:"error_type,omitempty"`
	StackTrace string `json:"stack_trace,omitempty"`
	// ErrorTypeSource is the header ErrorType came from.
	ErrorTypeSource string `json:"error_type_source,omitempty"`
	// LastDelay is the previous retry's delay from x-retry-delay (ms),
	// x-delay (ms; negative once the delayed exchange released it) or
	// yii-delay (s), in that order; 0 when none. Decorrelated jitter uses it.
	LastDelay time.Duration `json:"-"`
	// FailedQueue is the queue processing failed in, as a framework records
	// it: NServiceBus.FailedQ, the queue of MassTransit's
	// MT-Fault-InputAddress, rascal's originalQueue.
	FailedQueue string `json:"failed_queue,omitempty"`
	// FailedQueueSource is the header FailedQueue came from.
	FailedQueueSource string `json:"failed_queue_source,omitempty"`
	// OriginalExchange and OriginalRoutingKey are where a framework found
	// the message before it republished it: Spring AMQP's
	// RepublishMessageRecoverer (x-original-*), rascal's republish.
	OriginalExchange   string `json:"original_exchange,omitempty"`
	OriginalRoutingKey string `json:"original_routing_key,omitempty"`
	// DueTime is when the framework means the message to run (Celery's
	// eta), and DueSource the header it came from.
	DueTime   time.Time `json:"due_time,omitzero"`
	DueSource string    `json:"due_source,omitempty"`
	// OriginalSource is the header OriginalExchange came from.
	OriginalSource string `json:"original_source,omitempty"`
	// Invalid lists headers that were present but unreadable; a malformed
	// count is skipped and the next convention tried.
	Invalid []FieldError `json:"invalid,omitempty"`
	// Guessed names the fields (Guessed* constants) read from a header or
	// body field whose name alone says what it holds, no convention
	// applying (see guess.go): their sources say where.
	Guessed []string `json:"guessed,omitempty"`
	// countBy is the convention whose path gave Count (its Name);
	// countAttempts: a guessed count read from attempts made (less one).
	countBy       string
	countAttempts bool
}

// MarshalJSON adds last_delay_ms (omitted when zero).
func (s RetryState) MarshalJSON() ([]byte, error) {
	type plain RetryState // drops this method, so no recursion
	return json.Marshal(struct {
		plain
		LastDelayMS int64 `json:"last_delay_ms,omitempty"`
		// CountSource says where the count came from and how ladder
		// knows: "header x-attempts (guessed)".
		CountSource string `json:"count_source"`
	}{plain(s), s.LastDelay.Milliseconds(), s.SourceLabel(GuessedCount, s.Source)})
}

// FieldError is one unreadable header value; Path names it the way people
// read headers: "x-retry-count", "x-death[1].count".
type FieldError struct {
	Path string
	Err  error
}

func (e FieldError) Error() string {
	if e.Err == nil {
		return e.Path + ": invalid"
	}
	return e.Path + ": " + e.Err.Error()
}
func (e FieldError) Unwrap() error { return e.Err }

// MarshalJSON writes {"path":…,"error":…}.
func (e FieldError) MarshalJSON() ([]byte, error) {
	msg := ""
	if e.Err != nil {
		msg = e.Err.Error()
	}
	return json.Marshal(struct {
		Path  string `json:"path"`
		Error string `json:"error"`
	}{e.Path, msg})
}

// ReadState reads a message's retry state. The count comes from the first
// readable counter of Conventions, in the table's order (x-retry-count,
// yii-attempt, MassTransit's, NServiceBus.Retries, Celery's retries,
// Sneakers' retry_info, rascal's recovery counts, Symfony's redelivery
// stamps, Moleculer's…; a convention with CountSums adds its counters up), then x-death,
// then x-delivery-count: counters written on purpose, then the broker's
// dead-letter history, then the quorum delivery count (never
// x-acquired-count: peeks raise it). For x-death it is the sum of the counts
// of the entries for deathQueues (see DeathQueues); nil skips x-death. The
// error, its time, type and stack trace, and where the message failed come
// from the conventions too. It never panics: unreadable values land in
// Invalid and the next convention is tried.
func ReadState(h Headers, deathQueues map[string]bool) RetryState {
	return ReadMessage(h, nil, deathQueues)
}

// ReadMessage is ReadState that also reads the message's body where a
// convention's path names it (body#…) and, when no convention gives a
// field, guesses it from a header's or the JSON body's field name
// (Guessed says which; see guess.go): after the conventions' counters,
// before x-death. A nil body reads headers only.
func ReadMessage(h Headers, body []byte, deathQueues map[string]bool) RetryState {
	return readMessage(conventions[:], h, body, deathQueues)
}

// readMessage is ReadMessage through table (Table.All).
func readMessage(table []Convention, h Headers, body []byte, deathQueues map[string]bool) RetryState {
	st := RetryState{Source: SourceNone}
	r := fieldReader{table: table, h: h, st: &st, body: body}
	found := false
	for i := range r.table {
		c := &r.table[i]
		if !r.applies(c) {
			continue
		}
		if st.Framework == "" && r.marked(c) {
			st.Framework = c.Name
		}
		if !found {
			found = r.readCount(c)
		}
	}
	r.readError()
	r.readOrigin()
	if r.guess(!found) {
		found = true
	}
	if !found && len(deathQueues) > 0 {
		found = st.readXDeath(h, deathQueues)
	}
	if !found {
		if v, ok := h[SourceDeliveryCount]; ok {
			if n, kind, err := amqpfield.Count(v); err != nil {
				st.Invalid = append(st.Invalid, FieldError{Path: SourceDeliveryCount, Err: err})
			} else {
				st.Count, st.Source, st.Kind = n, SourceDeliveryCount, kind
			}
		}
	}
	r.readDue()
	st.readDelay(h)
	return st
}

// readXDeath counts the deaths in deathQueues; false when none matched.
func (st *RetryState) readXDeath(h Headers, deathQueues map[string]bool) bool {
	_, broker := h[SourceXDeath]
	_, carried := h[HeaderCarriedDeaths]
	if !broker && !carried {
		return false
	}
	x := DecodeXDeath(h)
	st.Invalid = append(st.Invalid, x.Errors...)
	var sum int64
	var in []string
	for _, d := range x.Deaths {
		if deathQueues[d.Queue] {
			sum = satAdd(sum, d.Count)
			if !slices.Contains(in, d.Queue) {
				in = append(in, d.Queue)
			}
		}
	}
	if in != nil {
		st.Count, st.Source, st.Kind, st.CountedIn = sum, SourceXDeath, "", in
	}
	return in != nil
}

func (st *RetryState) readDelay(h Headers) {
	for _, c := range [...]struct {
		key  string
		unit time.Duration
	}{{hdrPyRetryDelay, time.Millisecond}, {hdrDelay, time.Millisecond}, {hdrYiiDelay, time.Second}} {
		v, ok := h[c.key]
		if !ok {
			continue
		}
		n, _, err := amqpfield.Int(v)
		if err != nil {
			st.Invalid = append(st.Invalid, FieldError{Path: c.key, Err: err})
			continue
		}
		if n < 0 {
			n = -n // the delayed exchange rewrites x-delay to −d once it has waited
		}
		st.LastDelay = mulSat(c.unit, float64(n))
		return
	}
}

// DeathQueues is the set of queues whose x-death counts are retries of l's
// messages: its tiers and wait queues, or the main queue when it has no tiers (a quorum
// delivery-limit or nack-to-DLX loop). Not both: when the main queue
// dead-letters into a tier, each retry adds one death in each, and counting
// both would double it; when the worker republishes into the tier, the main
// queue's only death is the final rejection into the DLQ.
func DeathQueues(l *Ladder) map[string]bool {
	set := map[string]bool{}
	if l == nil {
		return set
	}
	for _, t := range l.Tiers {
		// A replay's wait in ladder's own queue is not a retry.
		if !strings.HasPrefix(t.Queue, replayQueuePrefix) {
			set[t.Queue] = true
		}
	}
	for _, w := range l.WaitQueues {
		set[w] = true
	}
	if len(set) == 0 && l.Main != "" {
		set[l.Main] = true
	}
	return set
}

// DeathQueuesOf is DeathQueues of the ladder queue belongs to (main, tier,
// wait queue or DLQ), else the queue alone: what every reader of a
// queue's retry counts (peek, --where, reset, the simulation) uses.
func DeathQueuesOf(ladders []Ladder, queue string) map[string]bool {
	for i := range ladders {
		if ladderHas(&ladders[i], queue) {
			return DeathQueues(&ladders[i])
		}
	}
	return map[string]bool{queue: true}
}

// SetCount returns a copy of h whose retry count is n, written in the
// convention and Go type st was read with: a string stays a string, an int16
// stays int16 while n fits and widens otherwise, yii-attempt is written as
// n + 1. When st's source cannot be written (x-death, the quorum delivery
// counters, none) it writes x-retry-count as int32 (int64 beyond that), which
// ReadState then prefers. A negative n is written as 0. h is not modified.
func SetCount(h Headers, st RetryState, n int64) Headers {
	out := h.Clone()
	n = max(n, 0)
	switch st.Source {
	case SourceRetryCount, SourceMassTransit, SourceNServiceBus:
		out[st.Source] = amqpfield.EncodeCount(st.Kind, n)
	case SourceYiiAttempt:
		out[st.Source] = amqpfield.EncodeCount(st.Kind, satAdd(n, 1))
	default:
		out[SourceRetryCount] = amqpfield.EncodeCount("", n)
	}
	return out
}

// ResetCount returns a copy of h with the retry count at zero in st's
// convention. x-death and the quorum delivery counters belong to the broker
// and cannot be reset by writing them, so for those it writes x-retry-count
// = 0 (int32), which takes priority over them when read back.
func ResetCount(h Headers, st RetryState) Headers { return SetCount(h, st, 0) }

// errMissing marks a required x-death field that is absent.
var errMissing = errors.New("missing")

// timeValue reads a timestamp: an AMQP timestamp, Unix seconds, or the text
// formats the conventions write (RFC 3339; Python's naive isoformat(), taken
// as UTC; NServiceBus's "2006-01-02 15:04:05:000000 Z").
func timeValue(v any) (time.Time, error) {
	t, err := anyTime(v)
	// Years past 9999 are garbage in a header, and JSON and RFC 3339 cannot
	// carry them.
	if err == nil && (t.Year() < 0 || t.Year() > 9999) {
		return time.Time{}, fmt.Errorf("year %d is out of range", t.Year())
	}
	return t, err
}

func anyTime(v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t, nil
	}
	s, err := amqpfield.Text(v)
	if err != nil {
		n, _, ierr := amqpfield.Int(v)
		if ierr != nil {
			return time.Time{}, fmt.Errorf("want a timestamp, got %s", amqpfield.TypeName(v))
		}
		return time.Unix(n, 0).UTC(), nil
	}
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02T15:04:05", s); err == nil {
		return t, nil
	}
	// NServiceBus separates fractional seconds with ':', which Go layouts
	// cannot express; swap it for '.'.
	if len(s) > 20 && s[19] == ':' {
		if t, err := time.Parse("2006-01-02 15:04:05.999999 Z", s[:19]+"."+s[20:]); err == nil {
			return t, nil
		}
	}
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return time.Time{}, fmt.Errorf("%q is not a time", s)
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// HeaderInt reads an integer header value of any AMQP integer type.
func HeaderInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int:
		return int64(x), true
	}
	return 0, false
}
