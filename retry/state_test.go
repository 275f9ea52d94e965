package retry

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
)

// namedTable stands in for amqp091's amqp.Table: a named map type.
type namedTable map[string]any

func TestReadCountTypes(t *testing.T) {
	tests := []struct {
		v    any
		n    int64
		kind string
	}{
		{int8(3), 3, "int8"},
		{int16(300), 300, "int16"},
		{int32(3), 3, "int32"}, // Go seed
		{int64(3), 3, "int64"},
		{int(3), 3, "int"},
		{uint8(3), 3, "uint8"},
		{uint16(3), 3, "uint16"},
		{uint32(3), 3, "uint32"},
		{uint64(3), 3, "uint64"},
		{uint(3), 3, "uint"},
		{float32(3), 3, "float32"},
		{float64(3), 3, "float64"},
		{"3", 3, "string"},
		{" 12 ", 12, "string"},
		{[]byte("7"), 7, "[]byte"},
		{int8(0), 0, "int8"},
	}
	for _, tt := range tests {
		st := ReadState(Headers{"x-retry-count": tt.v}, nil)
		if st.Count != tt.n || st.Source != SourceRetryCount || st.Kind != tt.kind || len(st.Invalid) != 0 {
			t.Errorf("%T(%v): got %+v, want count %d kind %s", tt.v, tt.v, st, tt.n, tt.kind)
		}
	}
}

func TestReadCountMalformedFallsThrough(t *testing.T) {
	bad := []any{
		int32(-1), int8(-128), float64(1.5), math.NaN(), math.Inf(1), float32(-2),
		"abc", "", "1.0", "-4", uint64(math.MaxUint64), true, nil,
		map[string]any{"count": 1}, []any{int32(1)}, time.Unix(5, 0), 1e300,
	}
	for _, v := range bad {
		h := Headers{"x-retry-count": v, "x-delivery-count": int64(2)}
		st := ReadState(h, nil)
		if st.Count != 2 || st.Source != SourceDeliveryCount {
			t.Errorf("%T(%v): should fall through to x-delivery-count, got %+v", v, v, st)
		}
		if len(st.Invalid) != 1 || st.Invalid[0].Path != "x-retry-count" {
			t.Errorf("%T(%v): should report x-retry-count as invalid, got %v", v, v, st.Invalid)
		}
	}
	st := ReadState(Headers{"x-retry-count": int32(-1)}, nil)
	if !errors.Is(st.Invalid[0], amqpfield.ErrNegative) {
		t.Errorf("negative count error should wrap errNegative, got %v", st.Invalid[0])
	}
	if st.Source != SourceNone || st.Count != 0 {
		t.Errorf("nothing readable should be a first delivery, got %+v", st)
	}
}

func TestReadStatePriority(t *testing.T) {
	xdeath := []any{
		map[string]any{"queue": "orders.wait.5s", "reason": "expired", "count": int64(4), "exchange": "x", "routing-keys": []any{"k"}, "time": time.Unix(1, 0)},
		map[string]any{"queue": "other.queue", "reason": "expired", "count": int64(9), "exchange": "x", "routing-keys": []any{"k"}, "time": time.Unix(1, 0)},
		map[string]any{"queue": "orders.wait.30s", "reason": "expired", "count": int64(2), "exchange": "x", "routing-keys": []any{"k"}, "time": time.Unix(1, 0)},
	}
	queues := DeathQueues(ladderGoSeed())
	full := Headers{
		"x-retry-count":       int32(1),
		"yii-attempt":         int32(6),
		"MT-Redelivery-Count": int32(7),
		"NServiceBus.Retries": "8",
		"x-death":             xdeath,
		"x-acquired-count":    int64(10),
		"x-delivery-count":    int64(11),
	}
	// Remove the winner each round: the next convention must win.
	want := []struct {
		source string
		count  int64
	}{
		{SourceRetryCount, 1},
		{SourceYiiAttempt, 5}, // attempt 6 is the sixth run: five retries made
		{SourceMassTransit, 7},
		{SourceNServiceBus, 8},
		{SourceXDeath, 6}, // 4 + 2; other.queue is not this ladder's
		{SourceDeliveryCount, 11},
		{SourceNone, 0},
	}
	h := full.Clone()
	for _, w := range want {
		st := ReadState(h, queues)
		if st.Source != w.source || st.Count != w.count {
			t.Fatalf("got %s=%d, want %s=%d", st.Source, st.Count, w.source, w.count)
		}
		delete(h, w.source)
	}
	// x-acquired-count is never a retry count: ladder's own peeks raise it.
	if st := ReadState(Headers{"x-acquired-count": int64(10)}, queues); st.Source != SourceNone || st.Count != 0 {
		t.Errorf("x-acquired-count read as retries: %+v", st)
	}
	// Without death queues x-death is not a counter.
	if st := ReadState(Headers{"x-death": xdeath}, nil); st.Source != SourceNone {
		t.Errorf("x-death without ladder queues should be ignored, got %+v", st)
	}
	// x-death with no entry for the ladder falls through.
	if st := ReadState(Headers{"x-death": xdeath[1:2], "x-delivery-count": int64(3)}, queues); st.Source != SourceDeliveryCount {
		t.Errorf("x-death without ladder entries should fall through, got %+v", st)
	}
	// amqp091 hands nested tables over as amqp.Table.
	named := []any{namedTable{"queue": "orders.wait.5s", "reason": "expired", "count": int64(3), "exchange": "x", "routing-keys": []any{"k"}, "time": time.Unix(1, 0)}}
	if st := ReadState(Headers{"x-death": named}, queues); st.Count != 3 || st.Source != SourceXDeath {
		t.Errorf("x-death of named tables: got %+v", st)
	}
}

func TestReadStateXDeathProblems(t *testing.T) {
	q := map[string]bool{"q.wait": true}
	h := Headers{"x-death": []any{
		map[string]any{"queue": "q.wait", "reason": "expired", "count": "lots", "exchange": "", "routing-keys": []any{"q"}, "time": time.Unix(1, 0)},
		map[string]any{"queue": "q.wait", "reason": "rejected", "count": int64(2), "exchange": "", "routing-keys": []any{"q"}, "time": time.Unix(1, 0)},
	}}
	st := ReadState(h, q)
	if st.Source != SourceXDeath || st.Count != 2 || len(st.Invalid) != 1 || st.Invalid[0].Path != "x-death[0].count" {
		t.Errorf("a malformed entry count should be reported and the rest summed, got %+v", st)
	}
	huge := Headers{"x-death": []any{
		map[string]any{"queue": "q.wait", "reason": "expired", "count": int64(math.MaxInt64), "exchange": "", "routing-keys": []any{"q"}, "time": time.Unix(1, 0)},
		map[string]any{"queue": "q.wait", "reason": "rejected", "count": int64(math.MaxInt64), "exchange": "", "routing-keys": []any{"q"}, "time": time.Unix(1, 0)},
	}}
	if st := ReadState(huge, q); st.Count != math.MaxInt64 {
		t.Errorf("the sum should saturate, got %d", st.Count)
	}
}

func TestReadStateYiiAttemptZeroIsInvalid(t *testing.T) {
	st := ReadState(Headers{"yii-attempt": int32(0)}, nil)
	if st.Source != SourceNone || len(st.Invalid) != 1 || st.Invalid[0].Path != "yii-attempt" {
		t.Errorf("yii-attempt 0 should be reported, got %+v", st)
	}
}

func TestDeathQueues(t *testing.T) {
	got := DeathQueues(ladderGoSeed())
	want := map[string]bool{"orders.wait.5s": true, "orders.wait.30s": true, "orders.wait.5m": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tiered ladder: got %v, want %v", got, want)
	}
	got = DeathQueues(&Ladder{Main: "jobs"})
	if !reflect.DeepEqual(got, map[string]bool{"jobs": true}) {
		t.Errorf("ladder without tiers: got %v", got)
	}
	if len(DeathQueues(nil)) != 0 {
		t.Error("nil ladder should give an empty set")
	}
}

// A Python-seed ladder dead-letters main → retry_queue → main: each retry
// leaves one death in each queue. Counting through DeathQueues must not
// double it.
func TestDeathQueuesDoNotDoubleCount(t *testing.T) {
	l := &Ladder{Main: "main_queue", Tiers: []Tier{{Queue: "retry_queue", TTL: time.Minute}}}
	h := Headers{"x-death": []any{
		map[string]any{"queue": "retry_queue", "reason": "expired", "count": int64(2), "exchange": "retry_exchange", "routing-keys": []any{"retry"}, "time": time.Unix(1, 0)},
		map[string]any{"queue": "main_queue", "reason": "rejected", "count": int64(2), "exchange": "", "routing-keys": []any{"main_queue"}, "time": time.Unix(1, 0)},
	}}
	if st := ReadState(h, DeathQueues(l)); st.Count != 2 {
		t.Errorf("two retries should count 2, got %d", st.Count)
	}
}

func TestReadStateLastError(t *testing.T) {
	tests := []struct {
		name   string
		h      Headers
		msg    string
		source string
		at     time.Time
	}{
		{"python", Headers{"x-last-error": "timeout", "x-last-error-time": "2024-03-01T10:20:30.123456"},
			"timeout", "x-last-error", time.Date(2024, 3, 1, 10, 20, 30, 123456000, time.UTC)},
		{"spring", Headers{"x-exception-message": "boom", "x-original-exchange": "orders", "x-original-routingKey": "created"},
			"boom", "x-exception-message", time.Time{}},
		{"masstransit", Headers{"MT-Fault-Message": "nope", "MT-Fault-Timestamp": "2024-03-01T10:20:30.1234567Z", "MT-Fault-ExceptionType": "System.Exception"},
			"nope", "MT-Fault-Message", time.Date(2024, 3, 1, 10, 20, 30, 123456700, time.UTC)},
		{"nservicebus", Headers{"NServiceBus.ExceptionInfo.Message": "db down", "NServiceBus.TimeOfFailure": "2024-03-01 10:20:30:123456 Z", "NServiceBus.FailedQ": "sales"},
			"db down", "NServiceBus.ExceptionInfo.Message", time.Date(2024, 3, 1, 10, 20, 30, 123456000, time.UTC)},
		{"amqp timestamp", Headers{"x-last-error": []byte("bytes"), "x-last-error-time": time.Unix(1700000000, 0)},
			"bytes", "x-last-error", time.Unix(1700000000, 0)},
		{"python beats spring", Headers{"x-exception-message": "second", "x-last-error": "first"},
			"first", "x-last-error", time.Time{}},
	}
	for _, tt := range tests {
		st := ReadState(tt.h, nil)
		if st.LastError != tt.msg || st.ErrorSource != tt.source || !st.LastErrorTime.Equal(tt.at) || len(st.Invalid) != 0 {
			t.Errorf("%s: got %q from %q at %v (invalid %v), want %q from %q at %v",
				tt.name, st.LastError, st.ErrorSource, st.LastErrorTime, st.Invalid, tt.msg, tt.source, tt.at)
		}
	}
	st := ReadState(Headers{"x-exception-message": "boom", "x-original-exchange": "orders", "x-original-routingKey": "created"}, nil)
	if st.OriginalExchange != "orders" || st.OriginalRoutingKey != "created" {
		t.Errorf("Spring origin: got %q %q", st.OriginalExchange, st.OriginalRoutingKey)
	}
	st = ReadState(Headers{"NServiceBus.FailedQ": "sales"}, nil)
	if st.FailedQueue != "sales" {
		t.Errorf("NServiceBus failed queue: got %q", st.FailedQueue)
	}
	// A time JSON cannot carry is reported, not kept.
	st = ReadState(Headers{"x-last-error": "e", "x-last-error-time": int64(1) << 50}, nil)
	if !st.LastErrorTime.IsZero() || len(st.Invalid) != 1 || st.Invalid[0].Path != "x-last-error-time" {
		t.Errorf("far-future time: got %v, invalid %v", st.LastErrorTime, st.Invalid)
	}
	// A non-text error falls to the next convention and is reported.
	st = ReadState(Headers{"x-last-error": int32(5), "MT-Fault-Message": "mt", "MT-Fault-Timestamp": "yesterday"}, nil)
	if st.LastError != "mt" || len(st.Invalid) != 2 {
		t.Errorf("got %q, invalid %v; want mt and two invalid values", st.LastError, st.Invalid)
	}
}

func TestReadStateLastDelay(t *testing.T) {
	tests := []struct {
		h    Headers
		want time.Duration
	}{
		{Headers{"x-retry-delay": int64(1050)}, 1050 * time.Millisecond},
		{Headers{"x-delay": int64(-5000)}, 5 * time.Second}, // after the delayed exchange
		{Headers{"x-delay": int32(5000)}, 5 * time.Second},
		{Headers{"yii-delay": int32(60)}, time.Minute},
		{Headers{"x-retry-delay": "2000", "x-delay": int64(-9000)}, 2 * time.Second},
		{Headers{"x-retry-delay": "soon", "yii-delay": int32(3)}, 3 * time.Second},
		{Headers{}, 0},
	}
	for _, tt := range tests {
		if got := ReadState(tt.h, nil).LastDelay; got != tt.want {
			t.Errorf("%v: got %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestSetCountKeepsConvention(t *testing.T) {
	tests := []struct {
		name string
		in   Headers
		n    int64
		key  string
		want any
	}{
		{"int32 stays", Headers{"x-retry-count": int32(2)}, 3, "x-retry-count", int32(3)},
		{"int8 stays", Headers{"x-retry-count": int8(2)}, 127, "x-retry-count", int8(127)},
		{"int8 widens", Headers{"x-retry-count": int8(2)}, 128, "x-retry-count", int16(128)},
		{"int16 widens twice", Headers{"x-retry-count": int16(2)}, 1 << 40, "x-retry-count", int64(1 << 40)},
		{"uint8 widens", Headers{"x-retry-count": uint8(2)}, 300, "x-retry-count", uint16(300)},
		{"uint32 widens", Headers{"x-retry-count": uint32(2)}, 1 << 33, "x-retry-count", uint64(1 << 33)},
		{"string stays", Headers{"x-retry-count": "2"}, 3, "x-retry-count", "3"},
		{"bytes stay", Headers{"x-retry-count": []byte("2")}, 3, "x-retry-count", []byte("3")},
		{"float64 stays", Headers{"x-retry-count": float64(2)}, 3, "x-retry-count", float64(3)},
		{"float32 widens", Headers{"x-retry-count": float32(2)}, 1<<24 + 1, "x-retry-count", float64(1<<24 + 1)},
		{"int stays", Headers{"x-retry-count": 2}, 3, "x-retry-count", 3},
		{"int64 stays", Headers{"x-retry-count": int64(2)}, 3, "x-retry-count", int64(3)},
		{"uint16 stays", Headers{"x-retry-count": uint16(2)}, 3, "x-retry-count", uint16(3)},
		{"uint16 widens", Headers{"x-retry-count": uint16(2)}, 70000, "x-retry-count", uint32(70000)},
		{"uint stays", Headers{"x-retry-count": uint(2)}, 3, "x-retry-count", uint(3)},
		{"float32 stays", Headers{"x-retry-count": float32(2)}, 3, "x-retry-count", float32(3)},
		{"float64 beyond 2^53 becomes int64", Headers{"x-retry-count": float64(2)}, 1<<53 + 1, "x-retry-count", int64(1<<53 + 1)},
		{"yii-attempt is count+1", Headers{"yii-attempt": int32(2)}, 2, "yii-attempt", int32(3)},
		{"masstransit", Headers{"MT-Redelivery-Count": int32(1)}, 2, "MT-Redelivery-Count", int32(2)},
		{"nservicebus string", Headers{"NServiceBus.Retries": "1"}, 2, "NServiceBus.Retries", "2"},
		{"none writes int32", Headers{}, 1, "x-retry-count", int32(1)},
		{"none widens to int64", Headers{}, 1 << 31, "x-retry-count", int64(1 << 31)},
		{"delivery-count writes x-retry-count", Headers{"x-delivery-count": int64(4)}, 5, "x-retry-count", int32(5)},
		{"negative is 0", Headers{"x-retry-count": int32(2)}, -4, "x-retry-count", int32(0)},
	}
	for _, tt := range tests {
		st := ReadState(tt.in, nil)
		before := tt.in.Clone()
		out := SetCount(tt.in, st, tt.n)
		if !reflect.DeepEqual(out[tt.key], tt.want) {
			t.Errorf("%s: %s = %T(%v), want %T(%v)", tt.name, tt.key, out[tt.key], out[tt.key], tt.want, tt.want)
		}
		if !reflect.DeepEqual(tt.in, before) {
			t.Errorf("%s: input was modified: %v", tt.name, tt.in)
		}
		if back := ReadState(out, nil); back.Count != max(tt.n, 0) {
			t.Errorf("%s: reads back as %d, want %d", tt.name, back.Count, tt.n)
		}
	}
	// nil headers: a fresh table.
	if out := SetCount(nil, RetryState{}, 1); out["x-retry-count"] != int32(1) {
		t.Errorf("nil headers: got %v", out)
	}
}

func TestResetCount(t *testing.T) {
	xd := Headers{"x-death": []any{map[string]any{"queue": "q.wait", "reason": "expired", "count": int64(3), "exchange": "", "routing-keys": []any{"q"}, "time": time.Unix(1, 0)}}}
	tests := []struct {
		name string
		in   Headers
		key  string
		want any
	}{
		{"x-retry-count string", Headers{"x-retry-count": "5"}, "x-retry-count", "0"},
		{"yii-attempt back to the first run", Headers{"yii-attempt": int16(4)}, "yii-attempt", int16(1)},
		{"x-death gets an x-retry-count", xd, "x-retry-count", int32(0)},
		{"delivery count gets an x-retry-count", Headers{"x-delivery-count": int64(3)}, "x-retry-count", int32(0)},
	}
	for _, tt := range tests {
		st := ReadState(tt.in, map[string]bool{"q.wait": true})
		out := ResetCount(tt.in, st)
		if !reflect.DeepEqual(out[tt.key], tt.want) {
			t.Errorf("%s: %s = %T(%v), want %T(%v)", tt.name, tt.key, out[tt.key], out[tt.key], tt.want, tt.want)
		}
		if back := ReadState(out, map[string]bool{"q.wait": true}); back.Count != 0 {
			t.Errorf("%s: reads back as %d from %s", tt.name, back.Count, back.Source)
		}
	}
}

func TestRetryStateJSON(t *testing.T) {
	st := ReadState(Headers{
		"x-retry-count": int32(2), "x-last-error": "timeout", "x-retry-delay": int64(2100),
		"x-last-error-time": "2024-03-01T10:20:30Z", "yii-delay": "x",
	}, nil)
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"count":2,"source":"x-retry-count","kind":"int32","last_error":"timeout",` +
		`"last_error_time":"2024-03-01T10:20:30Z","error_source":"x-last-error","last_delay_ms":2100,` +
		`"count_source":"header x-retry-count (ladder seeds)"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(ReadState(Headers{"x-retry-count": "many"}, nil))
	if !strings.Contains(string(b), `"invalid":[{"path":"x-retry-count","error":"\"many\" is not a decimal integer"}]`) {
		t.Errorf("invalid values should be listed: %s", b)
	}
}

func TestFieldErrorWithoutCause(t *testing.T) {
	if got := (FieldError{Path: "x-retry-count"}).Error(); got != "x-retry-count: invalid" {
		t.Errorf("got %q", got)
	}
}

// FuzzRetryCount feeds arbitrary values to every count convention: reading
// never panics, a count is never negative, and a written count reads back.
func FuzzRetryCount(f *testing.F) {
	f.Add([]byte{0, 3, 5})
	f.Add([]byte{1, 12, '4', '2'})
	f.Add([]byte{2, 10, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{3, 17, 2, 0, 3, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &fuzzGen{b: data}
		keys := []string{SourceRetryCount, SourceYiiAttempt, SourceMassTransit, SourceNServiceBus, SourceXDeath, SourceAcquiredCount, SourceDeliveryCount}
		key := keys[int(g.byte())%len(keys)]
		h := Headers{key: g.value(0)}
		for range int(g.byte() % 3) {
			h[g.key()] = g.value(0)
		}
		n := int64(g.uint64() >> 2)
		snapshot := len(h)

		st := ReadState(h, map[string]bool{"q": true, "": true})
		if st.Count < 0 {
			t.Fatalf("negative count %d from %#v", st.Count, h)
		}
		out := SetCount(h, st, n)
		if len(h) != snapshot {
			t.Fatalf("SetCount modified its input")
		}
		back := ReadState(out, map[string]bool{"q": true, "": true})
		if back.Count != n {
			t.Fatalf("wrote %d via %s/%s, read back %d via %s/%s", n, st.Source, st.Kind, back.Count, back.Source, back.Kind)
		}
		if _, err := json.Marshal(back); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	})
}
