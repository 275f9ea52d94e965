package retry

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
)

// xdeathSeenHere is the x-death the reference notes show amqp091-go decoding on
// RabbitMQ 3.10.8, with a second, older entry for the main queue.
func xdeathSeenHere() Headers {
	at := time.Unix(1700000000, 0)
	return Headers{
		"x-death": []any{
			map[string]any{"count": int64(3), "exchange": "x.retry", "original-expiration": "3000", "queue": "q.wait",
				"reason": "expired", "routing-keys": []any{"orders.created"}, "time": at.Add(time.Minute)},
			map[string]any{"count": int64(3), "exchange": "orders.topic", "queue": "orders.process",
				"reason": "rejected", "routing-keys": []any{"orders.created", "audit"}, "time": at},
		},
		"x-first-death-exchange": "orders.topic",
		"x-first-death-queue":    "orders.process",
		"x-first-death-reason":   "rejected",
		"x-last-death-exchange":  "x.retry",
		"x-last-death-queue":     "q.wait",
		"x-last-death-reason":    "expired",
	}
}

func TestDecodeXDeath(t *testing.T) {
	x := DecodeXDeath(xdeathSeenHere())
	if len(x.Errors) != 0 {
		t.Fatalf("well-formed header reported errors: %v", x.Errors)
	}
	want := []Death{
		{Queue: "q.wait", Reason: ReasonExpired, RawReason: "expired", Count: 3, Exchange: "x.retry",
			RoutingKeys: []string{"orders.created"}, Time: time.Unix(1700000060, 0),
			OriginalExpiration: 3 * time.Second, HasOriginalExpiration: true},
		{Queue: "orders.process", Reason: ReasonRejected, RawReason: "rejected", Count: 3, Exchange: "orders.topic",
			RoutingKeys: []string{"orders.created", "audit"}, Time: time.Unix(1700000000, 0)},
	}
	if !reflect.DeepEqual(x.Deaths, want) {
		t.Errorf("got  %+v\nwant %+v", x.Deaths, want)
	}
	if x.First != (DeathPoint{Reason: "rejected", Queue: "orders.process", Exchange: "orders.topic"}) {
		t.Errorf("first death: %+v", x.First)
	}
	if x.Last != (DeathPoint{Reason: "expired", Queue: "q.wait", Exchange: "x.retry"}) {
		t.Errorf("last death: %+v", x.Last)
	}
	if got := DecodeXDeath(Headers{}); len(got.Deaths) != 0 || len(got.Errors) != 0 {
		t.Errorf("no header: %+v", got)
	}
	if b, _ := json.Marshal(DecodeXDeath(nil)); string(b) != `{"deaths":[]}` {
		t.Errorf("no header JSON: %s", b)
	}
}

func TestDecodeXDeathReasons(t *testing.T) {
	for raw, want := range map[string]Reason{
		"rejected": ReasonRejected, "expired": ReasonExpired, "maxlen": ReasonMaxlen,
		"delivery_limit": ReasonDeliveryLimit, "shovelled": ReasonOther, "": ReasonOther,
	} {
		h := Headers{"x-death": []any{map[string]any{"queue": "q", "reason": raw, "count": int64(1),
			"exchange": "", "routing-keys": []any{"q"}, "time": time.Unix(1, 0)}}}
		d := DecodeXDeath(h).Deaths[0]
		if d.Reason != want || d.RawReason != raw {
			t.Errorf("%q: got %q / %q", raw, d.Reason, d.RawReason)
		}
	}
}

func TestDecodeXDeathMalformed(t *testing.T) {
	entry := func(kv ...any) map[string]any {
		m := map[string]any{"queue": "q", "reason": "expired", "count": int64(1), "exchange": "e",
			"routing-keys": []any{"k"}, "time": time.Unix(1, 0)}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	tests := []struct {
		name  string
		h     Headers
		errs  []string // paths
		check func(x XDeath) bool
	}{
		{"string instead of array", Headers{"x-death": "expired"}, []string{"x-death"},
			func(x XDeath) bool { return len(x.Deaths) == 0 }},
		{"single table", Headers{"x-death": entry()}, []string{"x-death"},
			func(x XDeath) bool { return len(x.Deaths) == 1 && x.Deaths[0].Queue == "q" }},
		{"non-table entry", Headers{"x-death": []any{"junk", entry()}}, []string{"x-death[0]"},
			func(x XDeath) bool { return len(x.Deaths) == 1 && x.Deaths[0].Count == 1 }},
		{"count int32", Headers{"x-death": []any{entry("count", int32(4))}}, nil,
			func(x XDeath) bool { return x.Deaths[0].Count == 4 }},
		{"count int8", Headers{"x-death": []any{entry("count", int8(5))}}, nil,
			func(x XDeath) bool { return x.Deaths[0].Count == 5 }},
		{"count float (management JSON)", Headers{"x-death": []any{entry("count", float64(6))}}, nil,
			func(x XDeath) bool { return x.Deaths[0].Count == 6 }},
		{"count fractional", Headers{"x-death": []any{entry(), entry("count", 1.5)}}, []string{"x-death[1].count"},
			func(x XDeath) bool { return x.Deaths[1].Count == 0 && x.Deaths[1].Queue == "q" }},
		{"count string", Headers{"x-death": []any{entry("count", "two")}}, []string{"x-death[0].count"},
			func(x XDeath) bool { return x.Deaths[0].Count == 0 }},
		{"count missing", Headers{"x-death": []any{entry("count", nil)}}, []string{"x-death[0].count"},
			func(x XDeath) bool { return x.Deaths[0].Exchange == "e" }},
		{"routing keys []string", Headers{"x-death": []any{entry("routing-keys", []string{"a", "b"})}}, nil,
			func(x XDeath) bool { return reflect.DeepEqual(x.Deaths[0].RoutingKeys, []string{"a", "b"}) }},
		{"routing keys single string", Headers{"x-death": []any{entry("routing-keys", "a")}}, []string{"x-death[0].routing-keys"},
			func(x XDeath) bool { return reflect.DeepEqual(x.Deaths[0].RoutingKeys, []string{"a"}) }},
		{"routing key not a string", Headers{"x-death": []any{entry("routing-keys", []any{"a", int32(1), "c"})}}, []string{"x-death[0].routing-keys[1]"},
			func(x XDeath) bool { return reflect.DeepEqual(x.Deaths[0].RoutingKeys, []string{"a", "c"}) }},
		{"routing keys table", Headers{"x-death": []any{entry("routing-keys", map[string]any{})}}, []string{"x-death[0].routing-keys"},
			func(x XDeath) bool { return x.Deaths[0].RoutingKeys == nil }},
		{"queue wrong type", Headers{"x-death": []any{entry("queue", int64(1))}}, []string{"x-death[0].queue"},
			func(x XDeath) bool { return x.Deaths[0].Queue == "" && x.Deaths[0].Count == 1 }},
		{"queue as bytes", Headers{"x-death": []any{entry("queue", []byte("qb"))}}, nil,
			func(x XDeath) bool { return x.Deaths[0].Queue == "qb" }},
		{"time as unix seconds", Headers{"x-death": []any{entry("time", int64(1700000000))}}, nil,
			func(x XDeath) bool { return x.Deaths[0].Time.Equal(time.Unix(1700000000, 0)) }},
		{"time garbage", Headers{"x-death": []any{entry("time", true)}}, []string{"x-death[0].time"},
			func(x XDeath) bool { return x.Deaths[0].Time.IsZero() }},
		{"expiration garbage", Headers{"x-death": []any{entry("original-expiration", "soon")}}, []string{"x-death[0].original-expiration"},
			func(x XDeath) bool { return !x.Deaths[0].HasOriginalExpiration }},
		{"expiration as integer", Headers{"x-death": []any{entry("original-expiration", int32(500))}}, nil,
			func(x XDeath) bool { return x.Deaths[0].OriginalExpiration == 500*time.Millisecond }},
		{"everything missing", Headers{"x-death": []any{map[string]any{}}},
			[]string{"x-death[0].queue", "x-death[0].reason", "x-death[0].exchange", "x-death[0].count", "x-death[0].routing-keys", "x-death[0].time"},
			func(x XDeath) bool { return len(x.Deaths) == 1 }},
		{"first death wrong type", Headers{"x-first-death-queue": int32(1), "x-last-death-reason": []any{}},
			[]string{"x-first-death-queue", "x-last-death-reason"},
			func(x XDeath) bool { return x.First.Queue == "" }},
		{"named array", Headers{"x-death": namedArray{entry()}}, nil,
			func(x XDeath) bool { return len(x.Deaths) == 1 && x.Deaths[0].Queue == "q" }},
		{"no queue", Headers{"x-death": []any{entry("queue", nil)}}, []string{"x-death[0].queue"},
			func(x XDeath) bool { return len(x.Deaths) == 1 && x.Deaths[0].Queue == "" }},
		{"amqp.Table entries", Headers{"x-death": []any{namedTable(entry("count", int32(7)))}}, nil,
			func(x XDeath) bool { return x.Deaths[0].Count == 7 }},
	}
	for _, tt := range tests {
		x := DecodeXDeath(tt.h)
		var paths []string
		for _, e := range x.Errors {
			paths = append(paths, e.Path)
			if e.Err == nil || !strings.HasPrefix(e.Error(), e.Path+": ") {
				t.Errorf("%s: error %q should name its path", tt.name, e.Error())
			}
		}
		if !reflect.DeepEqual(paths, tt.errs) {
			t.Errorf("%s: error paths %q, want %q", tt.name, paths, tt.errs)
		}
		if !tt.check(x) {
			t.Errorf("%s: unexpected decode %+v", tt.name, x.Deaths)
		}
	}
}

func TestOrigin(t *testing.T) {
	entry := func(q, reason, ex string, keys ...any) map[string]any {
		return map[string]any{"queue": q, "reason": reason, "count": int64(1), "exchange": ex,
			"routing-keys": keys, "time": time.Unix(1, 0)}
	}
	tests := []struct {
		name string
		h    Headers
		want Origin
		ok   bool
	}{
		{"first-death headers", xdeathSeenHere(), Origin{Exchange: "orders.topic", RoutingKey: "orders.created"}, true},
		{"oldest entry for the first queue, matching reason", Headers{
			"x-death": []any{
				entry("main", "expired", "x.late", "late.key"),
				entry("wait", "expired", "x.retry", "retry"),
				entry("main", "rejected", "orders", "orders.created"),
			},
			"x-first-death-queue": "main", "x-first-death-exchange": "orders", "x-first-death-reason": "rejected",
		}, Origin{Exchange: "orders", RoutingKey: "orders.created"}, true},
		{"first queue's oldest entry has another reason", Headers{
			"x-death": []any{
				entry("main", "rejected", "orders", "orders.created"),
				entry("wait", "expired", "x.retry", "retry"),
				entry("main", "expired", "x.retry", "late.key"),
			},
			"x-first-death-queue": "main", "x-first-death-exchange": "orders", "x-first-death-reason": "rejected",
		}, Origin{Exchange: "orders", RoutingKey: "orders.created"}, true},
		{"default exchange", Headers{
			"x-death":             []any{entry("main", "rejected", "", "main")},
			"x-first-death-queue": "main", "x-first-death-exchange": "", "x-first-death-reason": "rejected",
		}, Origin{Exchange: "", RoutingKey: "main"}, true},
		{"first queue has no entry", Headers{
			"x-death":             []any{entry("wait", "expired", "x.retry", "retry")},
			"x-first-death-queue": "gone", "x-first-death-exchange": "orders",
		}, Origin{Exchange: "orders"}, false},
		{"first entry has no routing keys", Headers{
			"x-death":             []any{entry("main", "rejected", "orders")},
			"x-first-death-queue": "main", "x-first-death-exchange": "orders",
		}, Origin{Exchange: "orders"}, false},
		{"no first-death headers, one entry", Headers{"x-death": []any{entry("main", "rejected", "orders", "k")}},
			Origin{Exchange: "orders", RoutingKey: "k"}, true},
		{"no first-death headers, entries agree", Headers{"x-death": []any{
			entry("wait", "expired", "orders", "k"), entry("main", "rejected", "orders", "k", "cc")}},
			Origin{Exchange: "orders", RoutingKey: "k"}, true},
		{"no first-death headers, entries disagree", Headers{"x-death": []any{
			entry("wait", "expired", "x.retry", "retry"), entry("main", "rejected", "orders", "k")}},
			Origin{}, false},
		{"nothing", Headers{}, Origin{}, false},
	}
	for _, tt := range tests {
		got, ok := DecodeXDeath(tt.h).Origin()
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: got %+v %v, want %+v %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestXDeathJSON(t *testing.T) {
	h := xdeathSeenHere()
	h["x-death"] = append(h["x-death"].([]any), map[string]any{"queue": "q", "reason": "shovelled", "count": "x"})
	x := DecodeXDeath(h)
	b, err := json.Marshal(x.Deaths[:1])
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"queue":"q.wait","reason":"expired","count":3,"exchange":"x.retry","routing_keys":["orders.created"],` +
		`"time":"` + time.Unix(1700000060, 0).Format(time.RFC3339) + `","original_expiration_ms":3000}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(x.Deaths[2])
	want = `{"queue":"q","reason":"other","raw_reason":"shovelled","count":0,"exchange":"","routing_keys":[],"time":null,"original_expiration_ms":null}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(x)
	if !strings.Contains(string(b), `"first_death":{"reason":"rejected","queue":"orders.process","exchange":"orders.topic"}`) ||
		!strings.Contains(string(b), `{"path":"x-death[2].count","error":"\"x\" is not a decimal integer"}`) {
		t.Errorf("x-death JSON: %s", b)
	}
	o, _ := x.Origin()
	b, _ = json.Marshal(o)
	if string(b) != `{"exchange":"orders.topic","routing_key":"orders.created"}` {
		t.Errorf("origin JSON: %s", b)
	}
}

func BenchmarkDecodeXDeath3(b *testing.B) {
	h := xdeathSeenHere()
	h["x-death"] = append(h["x-death"].([]any), map[string]any{"count": int64(1), "exchange": "", "queue": "orders.wait.30s",
		"reason": "expired", "routing-keys": []any{"orders.process"}, "time": time.Unix(1700000100, 0)})
	b.ReportAllocs()
	for b.Loop() {
		x := DecodeXDeath(h)
		if len(x.Deaths) != 3 {
			b.Fatal(x.Errors)
		}
	}
}

// FuzzDecodeXDeath decodes arbitrary header shapes: it never panics, counts
// are never negative, every error names its path, and the summary, origin
// and JSON can always be produced.
func FuzzDecodeXDeath(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{3, 16, 3, 17, 6, 0, 12, 3, 'q'})
	f.Add([]byte{2, 17, 7, 0, 12, 2, 'q', 'q', 1, 12, 7, 'e', 'x', 'p', 'i', 'r', 'e', 'd', 2, 4, 0, 0, 0, 0, 0, 0, 0, 3, 4, 16, 2, 12, 1, 'k', 1, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &fuzzGen{b: data}
		h := Headers{}
		for range int(g.byte()%4) + 1 {
			h[g.key()] = g.value(0)
		}
		x := DecodeXDeath(h)
		if arr, ok := amqpfield.Array(h["x-death"]); ok && len(x.Deaths) > len(arr) {
			t.Fatalf("%d deaths from %d entries", len(x.Deaths), len(arr))
		}
		for _, d := range x.Deaths {
			if d.Count < 0 || d.OriginalExpiration < 0 {
				t.Fatalf("negative count or expiration: %+v", d)
			}
		}
		for _, e := range x.Errors {
			if !strings.HasPrefix(e.Path, "x-death") && !strings.HasPrefix(e.Path, "x-first-death-") && !strings.HasPrefix(e.Path, "x-last-death-") {
				t.Fatalf("error outside the x-death headers: %v", e)
			}
		}
		if o, ok := x.Origin(); ok && len(x.Deaths) == 0 {
			t.Fatalf("origin %+v without deaths", o)
		}
		if _, err := json.Marshal(x); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	})
}

// namedArray stands in for a client library's named field-array type.
type namedArray []any

// fuzzGen turns fuzz bytes into header values of every AMQP shape, nested a few
// levels, with the x-death vocabulary so that near-valid tables come up often.
type fuzzGen struct {
	b []byte
	i int
}

func (g *fuzzGen) byte() byte {
	if g.i >= len(g.b) {
		return 0
	}
	c := g.b[g.i]
	g.i++
	return c
}

func (g *fuzzGen) uint64() uint64 {
	var buf [8]byte
	for i := range buf {
		buf[i] = g.byte()
	}
	return binary.BigEndian.Uint64(buf[:])
}

var fuzzGenKeys = []string{
	"x-death", "queue", "reason", "count", "exchange", "routing-keys", "time", "original-expiration",
	"x-first-death-queue", "x-first-death-exchange", "x-first-death-reason", "x-last-death-queue",
	"x-retry-count", "yii-attempt", "MT-Redelivery-Count", "NServiceBus.Retries", "x-delivery-count",
	"x-acquired-count", "x-last-error", "x-last-error-time", "x-retry-delay", "x-delay", "yii-delay",
	"MT-Fault-Message", "MT-Fault-Timestamp", "NServiceBus.ExceptionInfo.Message", "NServiceBus.TimeOfFailure",
}

func (g *fuzzGen) key() string {
	c := g.byte()
	if int(c) < len(fuzzGenKeys)*8 {
		return fuzzGenKeys[int(c)%len(fuzzGenKeys)]
	}
	return g.str()
}

func (g *fuzzGen) str() string {
	n := int(g.byte() % 12)
	b := make([]byte, n)
	for i := range b {
		b[i] = g.byte()
	}
	return string(b)
}

func (g *fuzzGen) value(depth int) any {
	switch g.byte() % 21 {
	case 0:
		return nil
	case 1:
		return int8(g.byte())
	case 2:
		return int16(g.uint64())
	case 3:
		return int32(g.uint64())
	case 4:
		return int64(g.uint64())
	case 5:
		return g.byte()
	case 6:
		return uint16(g.uint64())
	case 7:
		return uint32(g.uint64())
	case 8:
		return g.uint64()
	case 9:
		return math.Float32frombits(uint32(g.uint64()))
	case 10:
		return math.Float64frombits(g.uint64())
	case 11:
		return float64(int8(g.byte())) / 2
	case 12:
		return g.str()
	case 13:
		return []byte(g.str())
	case 14:
		return g.byte()%2 == 0
	case 15:
		return time.Unix(int64(int32(g.uint64())), 0)
	case 16, 19:
		if depth > 3 {
			return nil
		}
		a := make([]any, int(g.byte()%5))
		for i := range a {
			a[i] = g.value(depth + 1)
		}
		return a
	case 17, 20:
		if depth > 3 {
			return nil
		}
		m := map[string]any{}
		for range int(g.byte() % 8) {
			m[g.key()] = g.value(depth + 1)
		}
		if g.byte()%4 == 0 {
			return namedTable(m)
		}
		return m
	case 18:
		return strconv.Itoa(int(int8(g.byte())))
	}
	return nil
}

// The history ladder carries to a 4.x broker adds up with the broker's own:
// both deaths show, the old one marked carried, and retry counts add up;
// carried on again, nothing is lost.
func TestCarriedDeathsMergeWithTheBrokers(t *testing.T) {
	t1, t2 := time.Unix(1764500000, 0), time.Unix(1764500000, 0) // the same second
	entry := func(count int64, at time.Time) map[string]any {
		return map[string]any{"count": count, "reason": "rejected", "queue": "orders.process", "exchange": "orders.topic", "routing-keys": []any{"orders.created"}, "time": at}
	}
	carry, ok := CarryDeaths(Headers{"x-death": []any{entry(1, t1)}})
	if !ok || len(carry) != 1 {
		t.Fatalf("carry %v", carry)
	}
	v4 := Headers{"x-death": []any{entry(1, t2)}, HeaderCarriedDeaths: carry}
	x := DecodeXDeath(v4)
	if len(x.Deaths) != 2 || x.Deaths[0].Carried || !x.Deaths[1].Carried {
		t.Fatalf("4.x: %+v", x.Deaths)
	}
	if st := ReadState(v4, map[string]bool{"orders.process": true}); st.Count != 2 {
		t.Errorf("retries %d, want 2", st.Count)
	}
	if again, _ := CarryDeaths(v4); len(again) != 2 {
		t.Errorf("carried on: %d entries", len(again))
	}
	if o, ok := OriginIn(DecodeXDeath(Headers{"x-death": []any{map[string]any{"count": int64(1), "reason": "expired", "queue": "w", "exchange": "x", "routing-keys": []any{"k"}, "time": t2}}, HeaderCarriedDeaths: carry}), map[string]bool{"orders.process": true}); !ok || o.Exchange != "orders.topic" {
		t.Errorf("origin from the carried history: %+v %v", o, ok)
	}
}

// Carried alone (a 4.x move dropped x-death), the history still counts.
func TestRetryCountFromCarriedHistoryAlone(t *testing.T) {
	carry, _ := CarryDeaths(Headers{"x-death": map[string]any{"count": int64(3), "reason": "rejected", "queue": "q", "exchange": "", "routing-keys": []any{"q"}}})
	st := ReadState(Headers{HeaderCarriedDeaths: carry}, map[string]bool{"q": true})
	if st.Count != 3 || st.Source != SourceXDeath {
		t.Errorf("%+v (carried %v)", st, carry)
	}
}
