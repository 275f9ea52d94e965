package topology

import (
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestTopicMatch(t *testing.T) {
	tests := []struct {
		pattern, key string
		want         bool
	}{
		{"orders.#", "orders.created", true},
		{"orders.#", "orders", true}, // '#' matches zero words
		{"orders.#", "orders.a.b.c", true},
		{"orders.#", "order.created", false},
		{"orders.*", "orders.created", true},
		{"orders.*", "orders", false}, // '*' needs exactly one word
		{"orders.*", "orders.a.b", false},
		{"*.orange.*", "quick.orange.rabbit", true},
		{"*.*.rabbit", "quick.orange.male.rabbit", false},
		{"lazy.#", "lazy.orange.male.rabbit", true},
		{"#", "", true},
		{"#", "anything.at.all", true},
		{"", "", true},
		{"", "a", false},
		{"*", "", false}, // "" is zero words
		{"*", "a", true},
		{"a.*", "a.", true}, // "a." is "a" and an empty word
		{"a", "a.", false},
		{"*.*", ".", true},
		{"#.#", "", true},
		{"#.a.#", "a", true},
		{"#.a.#", "b.a.c", true},
		{"#.a.#", "b.c", false},
		{"#.b.#.d", "a.b.c.b.d", true}, // needs backtracking past the first "b"
		{"#.b.*", "b.b.b", true},
		{"a#", "a#", true}, // wildcards only as whole words
		{"a#", "ab", false},
		{"a.*b", "a.xb", false},
		{"orders.created", "orders.created", true},
		{"orders.created", "orders.updated", false},
	}
	for _, tt := range tests {
		if got := topicMatch(tt.pattern, tt.key); got != tt.want {
			t.Errorf("topicMatch(%q, %q) = %v, want %v", tt.pattern, tt.key, got, tt.want)
		}
		if got := topicRefRecursive(tt.pattern, tt.key); got != tt.want {
			t.Errorf("reference(%q, %q) = %v, want %v (table is wrong?)", tt.pattern, tt.key, got, tt.want)
		}
	}
}

// topicSplit splits as the broker does: "" is zero words.
func topicSplit(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// topicRefRecursive is a direct transcription of the matching rules.
func topicRefRecursive(pattern, key string) bool {
	var rec func(p, k []string) bool
	rec = func(p, k []string) bool {
		if len(p) == 0 {
			return len(k) == 0
		}
		if p[0] == "#" {
			return rec(p[1:], k) || (len(k) > 0 && rec(p, k[1:]))
		}
		if len(k) == 0 {
			return false
		}
		return (p[0] == "*" || p[0] == k[0]) && rec(p[1:], k[1:])
	}
	return rec(topicSplit(pattern), topicSplit(key))
}

// topicRefRegexp builds a regexp over the key with each word followed by
// '.', so zero words is "" and empty words stay visible. Words are
// hex-encoded: routing keys are bytes, not necessarily UTF-8.
func topicRefRegexp(pattern, key string) bool {
	var b strings.Builder
	b.WriteString(`\A`)
	for _, w := range topicSplit(pattern) {
		switch w {
		case "#":
			b.WriteString(`(?:[^.]*\.)*`)
		case "*":
			b.WriteString(`[^.]*\.`)
		default:
			b.WriteString(hex.EncodeToString([]byte(w)) + `\.`)
		}
	}
	b.WriteString(`\z`)
	var k strings.Builder
	for _, w := range topicSplit(key) {
		k.WriteString(hex.EncodeToString([]byte(w)) + ".")
	}
	return regexp.MustCompile(b.String()).MatchString(k.String())
}

func FuzzTopicMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"orders.#", "orders.created"}, {"#.b.#.d", "a.b.c.b.d"}, {"*", ""}, {"a.*", "a."},
		{"#", ""}, {"*.*.#.*", "a.b"}, {"#.#.#", "..."}, {"a#.*", "a#.b"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		if len(pattern) > 64 || len(key) > 64 {
			return // the references backtrack exponentially
		}
		got := topicMatch(pattern, key)
		if want := topicRefRegexp(pattern, key); got != want {
			t.Fatalf("topicMatch(%q, %q) = %v, regexp reference says %v", pattern, key, got, want)
		}
		if want := topicRefRecursive(pattern, key); got != want {
			t.Fatalf("topicMatch(%q, %q) = %v, recursive reference says %v", pattern, key, got, want)
		}
	})
}

func TestTopicMatchNoAlloc(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { topicMatch("#.b.#.d", "a.b.c.b.d") }); n != 0 {
		t.Errorf("topicMatch allocates %v times per call", n)
	}
}

func routeVhost() *Vhost {
	return &Vhost{
		Queues: []Queue{{Name: "q1"}, {Name: "q2"}, {Name: "q3"}, {Name: "orphan"}},
		Exchanges: []Exchange{
			{Name: "d", Type: ExchangeDirect},
			{Name: "f", Type: ExchangeFanout},
			{Name: "t", Type: ExchangeTopic},
			{Name: "h", Type: ExchangeHeaders},
			{Name: "e1", Type: ExchangeDirect},
			{Name: "e2", Type: ExchangeFanout},
			{Name: "dm", Type: ExchangeDelayed, Arguments: map[string]any{"x-delayed-type": []byte("direct")}},
			{Name: "ch", Type: "x-consistent-hash"},
			{Name: "withae", Type: ExchangeDirect, Arguments: map[string]any{"alternate-exchange": "f"}},
		},
		Bindings: []Binding{
			{Source: "d", Destination: "q1", DestinationType: "queue", RoutingKey: "k1"},
			{Source: "d", Destination: "q2", DestinationType: "queue", RoutingKey: "k2"},
			{Source: "d", Destination: "gone", DestinationType: "queue", RoutingKey: "k3"},
			{Source: "f", Destination: "q3", DestinationType: "queue", RoutingKey: "ignored"},
			{Source: "t", Destination: "q1", DestinationType: "queue", RoutingKey: "a.*"},
			{Source: "t", Destination: "q2", DestinationType: "queue", RoutingKey: "a.#"},
			{Source: "h", Destination: "q1", DestinationType: "queue", Arguments: map[string]any{"x-match": "all", "kind": "order", "v": float64(2)}},
			{Source: "h", Destination: "q2", DestinationType: "queue", Arguments: map[string]any{"x-match": "any", "kind": "invoice", "urgent": nil}},
			{Source: "h", Destination: "q3", DestinationType: "queue", Arguments: map[string]any{"x-match": "all-with-x", "x-tenant": "acme"}},
			// e1 → e2 → e1 (a cycle) and e2 → q3.
			{Source: "e1", Destination: "e2", DestinationType: "exchange", RoutingKey: "go"},
			{Source: "e2", Destination: "e1", DestinationType: "exchange"},
			{Source: "e2", Destination: "q3", DestinationType: "queue"},
			{Source: "e1", Destination: "missing-x", DestinationType: "exchange", RoutingKey: "go"},
			{Source: "dm", Destination: "q1", DestinationType: "queue", RoutingKey: "k1"},
			{Source: "dm", Destination: "q2", DestinationType: "queue", RoutingKey: "k2"},
			{Source: "ch", Destination: "q1", DestinationType: "queue", RoutingKey: "1"},
			{Source: "ch", Destination: "q2", DestinationType: "queue", RoutingKey: "1"},
			{Source: "withae", Destination: "q1", DestinationType: "queue", RoutingKey: "k1"},
		},
	}
}

func TestRoute(t *testing.T) {
	v := routeVhost()
	tests := []struct {
		name     string
		exchange string
		key      string
		headers  map[string]any
		want     []string
		exists   bool
		approx   bool
	}{
		{"default exchange by queue name", "", "q2", nil, []string{"q2"}, true, false},
		{"default exchange, no such queue", "", "main", nil, nil, true, false},
		{"missing exchange", "nope", "k1", nil, nil, false, false},
		{"direct", "d", "k1", nil, []string{"q1"}, true, false},
		{"direct no match", "d", "zz", nil, nil, true, false},
		{"direct to deleted queue", "d", "k3", nil, nil, true, false},
		{"fanout ignores key", "f", "whatever", nil, []string{"q3"}, true, false},
		{"topic one word", "t", "a.b", nil, []string{"q1", "q2"}, true, false},
		{"topic many words", "t", "a.b.c", nil, []string{"q2"}, true, false},
		{"topic zero words after #", "t", "a", nil, []string{"q2"}, true, false},
		{"headers all, int vs float64", "h", "", map[string]any{"kind": "order", "v": int32(2)}, []string{"q1"}, true, false},
		{"headers all, one missing", "h", "", map[string]any{"kind": "order"}, nil, true, false},
		{"headers any, presence only", "h", "", map[string]any{"urgent": false}, []string{"q2"}, true, false},
		{"headers any, []byte value", "h", "", map[string]any{"kind": []byte("invoice")}, []string{"q2"}, true, false},
		{"headers all-with-x", "h", "", map[string]any{"x-tenant": "acme"}, []string{"q3"}, true, false},
		{"e2e with cycle", "e1", "go", nil, []string{"q3"}, true, false},
		{"e2e no match", "e1", "stop", nil, nil, true, false},
		{"delayed routes as its x-delayed-type", "dm", "k2", nil, []string{"q2"}, true, false},
		{"unmodelled type may reach all", "ch", "order-17", nil, []string{"q1", "q2"}, true, true},
		{"alternate exchange on no match", "withae", "zz", nil, []string{"q3"}, true, false},
		{"no alternate exchange when matched", "withae", "k1", nil, []string{"q1"}, true, false},
	}
	r := NewRouter(v)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Route(tt.exchange, tt.key, tt.headers)
			if !slices.Equal(got.Queues, tt.want) || got.ExchangeExists != tt.exists || got.Approximate != tt.approx {
				t.Errorf("Route(%q, %q) = %+v, want queues %v exists %v approx %v", tt.exchange, tt.key, got, tt.want, tt.exists, tt.approx)
			}
		})
	}
	// The package-level helper gives the same answer.
	if got := Route(v, "t", "a.b", nil); !slices.Equal(got.Queues, []string{"q1", "q2"}) {
		t.Errorf("Route = %v", got.Queues)
	}
}

func TestHeadersMatch(t *testing.T) {
	tests := []struct {
		name    string
		binding map[string]any
		headers map[string]any
		want    bool
	}{
		{"all with no arguments matches", map[string]any{}, nil, true},
		{"any with no arguments does not", map[string]any{"x-match": "any"}, map[string]any{"a": 1}, false},
		{"x- arguments ignored without -with-x", map[string]any{"x-match": "all", "x-a": 1}, nil, true},
		{"any-with-x uses x- arguments", map[string]any{"x-match": "any-with-x", "x-a": int8(1)}, map[string]any{"x-a": uint64(1)}, true},
		{"value mismatch", map[string]any{"a": "1"}, map[string]any{"a": 1}, false},
		{"float equality", map[string]any{"a": 1.5}, map[string]any{"a": float32(1.5)}, true},
		{"bool", map[string]any{"a": true}, map[string]any{"a": true}, true},
		{"nested table", map[string]any{"a": map[string]any{"b": "c"}}, map[string]any{"a": map[string]any{"b": "c"}}, true},
		{"json.Number vs int", map[string]any{"a": json.Number("3")}, map[string]any{"a": int16(3)}, true},
	}
	for _, tt := range tests {
		if got := headersMatch(tt.binding, tt.headers); got != tt.want {
			t.Errorf("%s: headersMatch = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRouteUnknownKeyAndHeaders(t *testing.T) {
	v := routeVhost()
	r := NewRouter(v)
	s := r.newScratch()
	for _, x := range []string{"d", "t", "h"} {
		res := r.routeInto(x, rtMsg{anyKey: true, anyHeaders: true}, s)
		got := s.names(v)
		var want []string
		switch x {
		case "d", "t", "h":
			want = []string{"q1", "q2"}
			if x == "h" {
				want = []string{"q1", "q2", "q3"}
			}
		}
		if !slices.Equal(got, want) || !res.Approximate {
			t.Errorf("%s with unknown key/headers reaches %v (approx %v), want %v", x, got, res.Approximate, want)
		}
	}
}

func TestRouterScratchWrap(t *testing.T) {
	// A wrapped stamp must not let old marks hide queues.
	v := routeVhost()
	r := NewRouter(v)
	s := r.newScratch()
	s.stamp = ^uint32(0) - 1
	for range 3 {
		r.routeInto("d", rtMsg{key: "k1"}, s)
		if got := s.names(v); !slices.Equal(got, []string{"q1"}) {
			t.Fatalf("after wrap: %v", got)
		}
	}
}
