package retry

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// A framework nobody here has met: its count, error and origin are read
// from names that say what they hold, each labelled guessed, with where it
// came from.
func TestGuessReadsWhatNamesSay(t *testing.T) {
	at := time.Date(2024, 3, 1, 10, 20, 30, 0, time.UTC)
	tests := []struct {
		name      string
		h         Headers
		body      string
		count     int64
		source    string
		label     string
		errText   string
		errSource string
		errType   string
		when      time.Time
		trace     string
		queue     string
		exchange  string
		key       string
		guessed   []string
	}{{
		name: "an attempts header: attempts made, the first among them",
		h:    Headers{"x-attempts": int32(3)}, count: 2, source: "x-attempts", label: "header x-attempts (guessed: attempts made, less the first)",
		guessed: []string{GuessedCount},
	}, {
		name:  "a retryCount header in text, an error and its type",
		h:     Headers{"x-retryCount": "4", "x-error": "payment service unavailable", "x-error-class": "TimeoutError", "x-failed-at": "2024-03-01T10:20:30Z"},
		count: 4, source: "x-retryCount", label: "header x-retryCount (guessed)",
		errText: "payment service unavailable", errSource: "x-error", errType: "TimeoutError", when: at,
		guessed: []string{GuessedCount, GuessedError, GuessedErrorType, GuessedErrorTime},
	}, {
		// Dramatiq's body (Bogdanp/dramatiq dramatiq/middleware/retries.py:
		// options.retries, options.traceback; max_retries is a setting).
		name:  "a JSON body's options",
		body:  `{"queue_name":"default","actor_name":"charge","args":[1],"kwargs":{},"options":{"max_retries":20,"retries":2,"traceback":"Traceback (most recent call last):\nValueError: boom"},"message_id":"m-1"}`,
		count: 2, source: "body options.retries", label: "body options.retries (guessed)",
		trace:   "Traceback (most recent call last):\nValueError: boom",
		guessed: []string{GuessedCount, GuessedStack},
	}, {
		name:   "a JSON body's top-level error and time",
		body:   ` {"job":"x","error":"boom","failed_at":1709288430} `,
		source: SourceNone, label: SourceNone,
		errText: "boom", errSource: "body error", when: at,
		guessed: []string{GuessedError, GuessedErrorTime},
	}, {
		name:   "an origin queue and exchange in headers",
		h:      Headers{"x-original-queue": "orders", "x-source-topic": "events", "x-original-routing-key": "order.created"},
		source: SourceNone, label: SourceNone,
		queue: "orders", exchange: "events", key: "order.created",
		guessed: []string{GuessedQueue, GuessedExchange},
	}, {
		name:   "an origin in the body is not read (moves read headers)",
		body:   `{"original_queue":"orders","source_exchange":"events"}`,
		source: SourceNone, label: SourceNone,
	}, {
		name:   "settings and broker headers are not records",
		h:      Headers{"x-max-retries": int32(5), "retry-delay": int32(1000), "attempts-limit": int32(3), "x-first-death-reason": "rejected", "x-delivery-limit": int32(3)},
		source: SourceNone, label: SourceNone,
	}, {
		name:   "an unreadable count is no guess",
		h:      Headers{"x-retries": "many"},
		source: SourceNone, label: SourceNone,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.body != "" {
				body = []byte(tt.body)
			}
			st := ReadMessage(tt.h, body, nil)
			if st.Count != tt.count || st.Source != tt.source {
				t.Errorf("count %d from %q, want %d from %q", st.Count, st.Source, tt.count, tt.source)
			}
			if l := st.SourceLabel(GuessedCount, st.Source); l != tt.label {
				t.Errorf("label %q, want %q", l, tt.label)
			}
			if st.LastError != tt.errText || st.ErrorSource != tt.errSource || st.ErrorType != tt.errType || !st.LastErrorTime.Equal(tt.when) || st.StackTrace != tt.trace {
				t.Errorf("error %q from %q type %q at %v trace %q", st.LastError, st.ErrorSource, st.ErrorType, st.LastErrorTime, st.StackTrace)
			}
			if st.FailedQueue != tt.queue || st.OriginalExchange != tt.exchange || st.OriginalRoutingKey != tt.key {
				t.Errorf("failed in %q, original %q %q", st.FailedQueue, st.OriginalExchange, st.OriginalRoutingKey)
			}
			got, want := slices.Sorted(slices.Values(st.Guessed)), slices.Sorted(slices.Values(tt.guessed))
			if !slices.Equal(got, want) {
				t.Errorf("guessed %v, want %v", got, want)
			}
			if st.Framework != "" {
				t.Errorf("framework %q: a guess names none", st.Framework)
			}
		})
	}
}

// Known conventions always win over a guess: a framework's own headers
// are never guessed from, and its count comes first.
func TestGuessNeverBeatsAConvention(t *testing.T) {
	st := ReadMessage(Headers{"x-retry-count": int32(1), "x-attempts": int32(5), "x-last-error": "known", "x-error": "guessed"},
		[]byte(`{"retries":9}`), nil)
	if st.Count != 1 || st.Source != SourceRetryCount || st.LastError != "known" || len(st.Guessed) != 0 {
		t.Errorf("read %+v, want x-retry-count 1 and x-last-error, nothing guessed", st)
	}
	if l := st.SourceLabel(GuessedCount, st.Source); l != "header x-retry-count (ladder seeds)" {
		t.Errorf("label %q", l)
	}
	// yii-attempt 0 is yii2-queue's, unreadable: reported, not guessed.
	st = ReadState(Headers{"yii-attempt": int32(0)}, nil)
	if len(st.Guessed) != 0 || len(st.Invalid) != 1 {
		t.Errorf("yii-attempt 0: guessed %v, invalid %v", st.Guessed, st.Invalid)
	}
	// A guessed counter comes before x-death, as a convention's does: a
	// worker's own counter survives republishing.
	st = ReadMessage(Headers{"x-attempts": int32(4), "x-death": []any{map[string]any{"count": int64(1), "reason": "rejected", "queue": "q", "exchange": "", "routing-keys": []any{"q"}}}},
		nil, map[string]bool{"q": true})
	if st.Count != 3 || st.Source != "x-attempts" {
		t.Errorf("count %d from %s, want 3 from x-attempts", st.Count, st.Source)
	}
}

// The JSON every face prints says where the count came from and how.
func TestCountSourceInJSON(t *testing.T) {
	b, err := json.Marshal(ReadMessage(Headers{"x-attempts": int32(3)}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"count":2`, `"count_source":"header x-attempts (guessed: attempts made, less the first)"`, `"guessed":["count"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

// FuzzReadMessageBody: any body and header name read without a panic, a
// count never negative, and nothing guessed from a body that is not a
// JSON object.
func FuzzReadMessageBody(f *testing.F) {
	f.Add(`{"options":{"retries":2,"traceback":"t"}}`, "x-attempts", "3")
	f.Add(`{"retries":-1,"error":{"a":1}}`, "x-error-at", "yesterday")
	f.Add(`[{"retries":1}]`, "x-source-topic", "")
	f.Add(`{"a":{"b":{"retries":5}}}`, "failed_queue", "q")
	f.Fuzz(func(t *testing.T, body, name, value string) {
		st := ReadMessage(Headers{name: value}, []byte(body), nil)
		if st.Count < 0 {
			t.Fatalf("negative count %d", st.Count)
		}
		if b := strings.TrimSpace(body); !strings.HasPrefix(b, "{") {
			for _, g := range st.Guessed {
				if src := st.Source; g == GuessedCount && strings.HasPrefix(src, BodySource) {
					t.Fatalf("a count guessed from a body %q that is no JSON object", body)
				}
			}
		}
	})
}

// The names docs/frameworks.md's guessing table lists read as it says.
func TestGuessNamesAsTheDocsSay(t *testing.T) {
	for kind, names := range map[guessKind][]string{
		guessCount:      {"retries", "retryCount", "retry_count", "redeliveryCount", "redeliveries", "x-retries"},
		guessAttempt:    {"attempts", "x-attempt", "tries", "deliveryAttempt", "x-attempts"},
		guessError:      {"error", "exception", "reason", "failure", "x-last-error", "lastError"},
		guessErrorType:  {"error-class", "exception-type", "error-code", "x-error-class"},
		guessErrorTime:  {"failed-at", "error-time", "failed_at", "x-failed-at"},
		guessStack:      {"stacktrace", "traceback", "backtrace", "stack"},
		guessQueue:      {"original-queue", "source-queue", "failed-queue", "x-original-queue"},
		guessExchange:   {"original-exchange", "source-topic", "x-source-topic"},
		guessRoutingKey: {"original-routing-key"},
		guessNone: {"max-retries", "retry-delay", "retry-limit", "backoff", "ttl", "max-attempts", "attempts-allowed",
			"x-death", "x-first-death-reason", "x-delivery-count", "x-acquired-count", "content-type", "x-delay", "error-count", "order-id"},
	} {
		for _, n := range names {
			if got := guessName(n); got != kind {
				t.Errorf("%q reads as %d, want %d", n, got, kind)
			}
		}
	}
}

// The body prefilter never hides a name the guess reads: every name it
// reads holds one of its stems, whatever the case of its first letter.
func TestGuessStemsCoverEveryGuessedName(t *testing.T) {
	for _, n := range []string{"retries", "retryCount", "RetryCount", "retry_count", "redeliveryCount", "redeliveries", "Redeliveries",
		"attempts", "Attempts", "tries", "Tries", "deliveryAttempt", "error", "Error", "lastError", "exception", "Exception",
		"reason", "Reason", "failure", "Failure", "fault", "Fault", "errorClass", "failedAt", "FailedAt", "stacktrace", "StackTrace",
		"traceback", "Traceback", "backtrace", "stack", "Stack", "numRetries"} {
		if guessName(n) == guessNone {
			t.Errorf("%q is not guessed: the list is wrong", n)
		}
		if !mayNameAGuess([]byte(`{"` + n + `":1}`)) {
			t.Errorf("a body naming %q is not parsed", n)
		}
	}
	if mayNameAGuess([]byte(`{"id":"m1","amount":3,"currency":"EUR"}`)) {
		t.Error("a body naming nothing guessable is parsed")
	}
}
