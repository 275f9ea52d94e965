package retry

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
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

// countSources is the priority order ReadState tries. Counters a worker
// writes on purpose come first: they survive republishing, and ResetCount can
// only reset those. x-death comes next: it counts real trips through the
// ladder but is broker-owned (and 4.x ignores a client-published one). The
// quorum delivery count comes last: it also counts redeliveries after a
// crash, and restarts at zero when a message is republished.
// x-acquired-count (RabbitMQ 4.3+) is not a count of retries: every browse
// raises it — ladder's own peeks over AMQP 1.0 raise nothing else — so a
// message ladder merely looked at would read as retried. Nack-and-requeue
// loops, which on 4.3 raise only it, show as the requeue-storm finding.
var countSources = [...]string{
	SourceRetryCount, SourceYiiAttempt, SourceMassTransit, SourceNServiceBus,
	SourceXDeath, SourceDeliveryCount,
}

// Headers of the other conventions ReadState surfaces.
const (
	hdrPyLastError     = "x-last-error"      // Python seed
	hdrPyLastErrorTime = "x-last-error-time" // Python seed, isoformat() of utcnow()
	hdrPyRetryDelay    = "x-retry-delay"     // Python seed, ms
	hdrDelay           = "x-delay"           // delayed-message exchange, ms (−d after the delay)
	hdrYiiDelay        = "yii-delay"         // yii2-queue, seconds
	hdrSpringError     = "x-exception-message"
	hdrSpringExchange  = "x-original-exchange"
	hdrSpringKey       = "x-original-routingKey"
	hdrMTError         = "MT-Fault-Message"
	hdrMTErrorTime     = "MT-Fault-Timestamp"
	hdrNSBError        = "NServiceBus.ExceptionInfo.Message"
	hdrNSBErrorTime    = "NServiceBus.TimeOfFailure"
	hdrNSBFailedQ      = "NServiceBus.FailedQ"
)

// RetryState is what a message's headers say about its retries.
type RetryState struct {
	// Count is the number of retries already made: 0 on a first delivery.
	Count int64 `json:"count"`
	// Source is the convention Count was read from (a Source* constant).
	Source string `json:"source"`
	// Kind is the Go type the count header had ("int8", "string", …); empty
	// for x-death (a sum) and SourceNone. SetCount writes the same type.
	Kind string `json:"kind,omitempty"`
	// LastError is the last failure's text from the first convention that
	// carries one: x-last-error (Python seed), x-exception-message (Spring
	// AMQP), MT-Fault-Message (MassTransit), NServiceBus.ExceptionInfo.Message.
	LastError string `json:"last_error,omitempty"`
	// LastErrorTime is when, if that convention says (Spring does not).
	LastErrorTime time.Time `json:"last_error_time,omitzero"`
	// ErrorSource is the header LastError came from.
	ErrorSource string `json:"error_source,omitempty"`
	// LastDelay is the previous retry's delay from x-retry-delay (ms),
	// x-delay (ms; negative once the delayed exchange released it) or
	// yii-delay (s), in that order; 0 when none. Decorrelated jitter uses it.
	LastDelay time.Duration `json:"-"`
	// FailedQueue is where processing failed (NServiceBus.FailedQ).
	FailedQueue string `json:"failed_queue,omitempty"`
	// OriginalExchange and OriginalRoutingKey are where Spring AMQP's
	// RepublishMessageRecoverer found the message (x-original-*).
	OriginalExchange   string `json:"original_exchange,omitempty"`
	OriginalRoutingKey string `json:"original_routing_key,omitempty"`
	// Invalid lists headers that were present but unreadable; a malformed
	// count is skipped and the next convention tried.
	Invalid []FieldError `json:"invalid,omitempty"`
}

// MarshalJSON adds last_delay_ms (omitted when zero).
func (s RetryState) MarshalJSON() ([]byte, error) {
	type plain RetryState // drops this method, so no recursion
	return json.Marshal(struct {
		plain
		LastDelayMS int64 `json:"last_delay_ms,omitempty"`
	}{plain(s), s.LastDelay.Milliseconds()})
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
// readable of x-retry-count, yii-attempt, MT-Redelivery-Count,
// NServiceBus.Retries, x-death, x-delivery-count: counters a worker writes
// on purpose, then the broker's dead-letter history, then the quorum
// delivery count (never x-acquired-count: peeks raise it). For x-death it
// is the sum of the counts of the entries for deathQueues (see
// DeathQueues); nil skips x-death. It never panics: unreadable values land
// in Invalid and the next convention is tried.
func ReadState(h Headers, deathQueues map[string]bool) RetryState {
	st := RetryState{Source: SourceNone}
	found := false
	for _, src := range countSources {
		if src == SourceXDeath {
			if found || len(deathQueues) == 0 {
				continue
			}
			_, broker := h[SourceXDeath]
			_, carried := h[HeaderCarriedDeaths]
			if !broker && !carried {
				continue
			}
			x := DecodeXDeath(h)
			st.Invalid = append(st.Invalid, x.Errors...)
			var sum int64
			matched := false
			for _, d := range x.Deaths {
				if deathQueues[d.Queue] {
					matched = true
					sum = satAdd(sum, d.Count)
				}
			}
			if matched {
				st.Count, st.Source, found = sum, SourceXDeath, true
			}
			continue
		}
		v, ok := h[src]
		if !ok || found {
			continue
		}
		n, kind, err := amqpfield.Count(v)
		if err == nil && src == SourceYiiAttempt {
			// yii-attempt numbers the run, starting at 1: retries made = attempt − 1.
			if n < 1 {
				err = fmt.Errorf("attempt %d: yii-attempt starts at 1", n)
			} else {
				n--
			}
		}
		if err != nil {
			st.Invalid = append(st.Invalid, FieldError{Path: src, Err: err})
			continue
		}
		st.Count, st.Source, st.Kind, found = n, src, kind, true
	}

	st.readError(h)
	st.readDelay(h)
	st.FailedQueue = st.text(h, hdrNSBFailedQ)
	st.OriginalExchange = st.text(h, hdrSpringExchange)
	st.OriginalRoutingKey = st.text(h, hdrSpringKey)
	return st
}

func (st *RetryState) readError(h Headers) {
	for _, c := range [...]struct{ msg, at string }{
		{hdrPyLastError, hdrPyLastErrorTime},
		{hdrSpringError, ""},
		{hdrMTError, hdrMTErrorTime},
		{hdrNSBError, hdrNSBErrorTime},
	} {
		msg := st.text(h, c.msg)
		if msg == "" {
			continue
		}
		st.LastError, st.ErrorSource = msg, c.msg
		if v, ok := h[c.at]; ok && c.at != "" {
			t, err := timeValue(v)
			if err != nil {
				st.Invalid = append(st.Invalid, FieldError{Path: c.at, Err: err})
			} else {
				st.LastErrorTime = t
			}
		}
		return
	}
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

// text reads a string header, recording a non-string as invalid.
func (st *RetryState) text(h Headers, key string) string {
	v, ok := h[key]
	if !ok {
		return ""
	}
	s, err := amqpfield.Text(v)
	if err != nil {
		st.Invalid = append(st.Invalid, FieldError{Path: key, Err: err})
	}
	return s
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
