package decode

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// A peek shows the origin --to origin uses: a message MassTransit moved to
// Q_skipped records no origin of its own (MT-Reason, no fault headers), and
// its naming names Q, which exists; the same message in a queue nothing
// names shows none.
func TestDecoderShowsTheOriginAMoveUses(t *testing.T) {
	v := &topology.Vhost{Queues: []topology.Queue{{Name: "submit-order", Consumers: 1}, {Name: "submit-order_error"}, {Name: "submit-order_skipped"}, {Name: "elsewhere"}}}
	ladders := topology.Discover(v)
	h := retry.Headers{"MT-Reason": "dead-letter", "MT-Host-MachineName": "web-1"}
	m := broker.Message{Headers: h}
	NewDecoder(v, ladders, "submit-order_skipped").Decode(&m, []byte("{}"), 64)
	if m.Origin == nil || m.Origin.RoutingKey != "submit-order" || m.Origin.Exchange != "" {
		t.Fatalf("origin %+v, want submit-order through the default exchange", m.Origin)
	}
	m = broker.Message{Headers: h}
	NewDecoder(v, ladders, "elsewhere").Decode(&m, []byte("{}"), 64)
	if m.Origin != nil {
		t.Errorf("in elsewhere: origin %+v, want none", m.Origin)
	}
	var nilDec *Decoder
	m = broker.Message{Headers: h}
	nilDec.Decode(&m, []byte("{}"), 64)
	if m.Origin != nil || m.Retry.Framework != "MassTransit" {
		t.Errorf("nil decoder: origin %+v framework %q", m.Origin, m.Retry.Framework)
	}
}

// springVhost is brokertest.SpringRetry's topology: orders dead-letters
// into orders.retry, whose TTL sends what expires back to orders;
// RepublishMessageRecoverer publishes what is given up on through DLX to
// orders.given-up, which nothing else ties to orders.
func springVhost() *topology.Vhost {
	q := func(name string, args map[string]any) topology.Queue {
		return topology.Queue{Name: name, Type: topology.QueueClassic, Arguments: args}
	}
	b := func(src, dst, key string) topology.Binding {
		return topology.Binding{Source: src, Destination: dst, DestinationType: "queue", RoutingKey: key}
	}
	return &topology.Vhost{Name: "/",
		Queues: []topology.Queue{
			q("orders", map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.retry"}),
			q("orders.retry", map[string]any{"x-message-ttl": int32(5000), "x-dead-letter-exchange": "orders", "x-dead-letter-routing-key": "orders"}),
			q("orders.given-up", nil),
		},
		Exchanges: []topology.Exchange{{Name: "", Type: topology.ExchangeDirect}, {Name: "orders", Type: topology.ExchangeDirect}, {Name: "DLX", Type: topology.ExchangeDirect}},
		Bindings:  []topology.Binding{b("orders", "orders", "orders"), b("DLX", "orders.given-up", "error.orders")},
	}
}

// springFailure is a message RepublishMessageRecoverer put in
// orders.given-up after orders.retry expired it twice.
func springFailure() broker.Message {
	return broker.Message{Exchange: "DLX", RoutingKey: "error.orders", Headers: retry.Headers{
		"x-death": []any{
			map[string]any{"queue": "orders.retry", "reason": "expired", "count": int64(2), "exchange": "", "routing-keys": []any{"orders.retry"}},
			map[string]any{"queue": "orders", "reason": "rejected", "count": int64(2), "exchange": "orders", "routing-keys": []any{"orders"}},
		},
		"x-exception-message": "boom", "x-original-exchange": "orders", "x-original-routingKey": "orders",
	}}
}

// Issue 32: the first message a Decoder reads counts what a read after
// it counts. The Spring failure's own headers tie orders.given-up to orders'
// ladder (it failed in orders): decoded with the topology alone it counts
// 2 retries from x-death in orders.retry, learned from the messages; a
// Decoder made after that evidence is known counts the same, and says
// the same of it. The caller's vhost is left as it was.
func TestDecoderLearnsAsItReads(t *testing.T) {
	v := springVhost()
	ladders := topology.Discover(v)
	if retry.DeathQueuesOf(ladders, "orders.given-up")["orders.retry"] {
		t.Fatal("the topology alone ties orders.given-up to orders: no test")
	}
	check := func(what string, m broker.Message) {
		t.Helper()
		r := m.Retry
		if r.Count != 2 || r.Source != retry.SourceXDeath || !slices.Equal(r.CountedIn, []string{"orders.retry"}) || r.CountFrom != retry.CountFromMessages {
			t.Errorf("%s: count %d from %q in %v (%q); want 2 from x-death in orders.retry, learned from the messages", what, r.Count, r.Source, r.CountedIn, r.CountFrom)
		}
	}
	d := NewDecoder(v, ladders, "orders.given-up")
	m := springFailure()
	d.Decode(&m, []byte("{}"), 64)
	check("the first message", m)
	if m.FailedIn != "orders" {
		t.Errorf("failed in %q, want orders", m.FailedIn)
	}
	for _, q := range v.Queues {
		if !q.Seen.Equal(topology.Seen{}) {
			t.Errorf("the caller's vhost changed: %s saw %+v", q.Name, q.Seen)
		}
	}
	m = springFailure()
	d.Decode(&m, []byte("{}"), 64)
	check("the second message", m)
	if d.relearn != 1 {
		t.Errorf("derived the ladders again %d times, want once", d.relearn)
	}

	// A read after the first: the client applies what the first showed.
	e := topology.Evidence{}
	e.Observe("orders.given-up", false, m.Deaths, m.FailedIn)
	v.Apply(e)
	again := NewDecoder(v, topology.Discover(v), "orders.given-up")
	m = springFailure()
	again.Decode(&m, []byte("{}"), 64)
	check("a later read", m)
	if again.relearn != 0 {
		t.Errorf("a read with the evidence known derived the ladders again %d times", again.relearn)
	}
}

// What a count from x-death rests on: the topology (a queue TTL makes
// orders.retry a tier of orders, whose messages the Decoder reads), or
// the queue itself when it is in no ladder.
func TestDecoderSaysWhatTheCountRestsOn(t *testing.T) {
	v := springVhost()
	m := springFailure()
	NewDecoder(v, topology.Discover(v), "orders").Decode(&m, []byte("{}"), 64)
	if r := m.Retry; r.Count != 2 || r.CountFrom != retry.CountFromTopology {
		t.Errorf("in orders: count %d (%q), want 2 by the topology", r.Count, r.CountFrom)
	}
	lone := &topology.Vhost{Name: "/", Queues: []topology.Queue{{Name: "lone", Type: topology.QueueClassic}}}
	m = broker.Message{Headers: retry.Headers{"x-death": []any{map[string]any{"queue": "lone", "reason": "rejected", "count": int64(3)}}}}
	NewDecoder(lone, topology.Discover(lone), "lone").Decode(&m, nil, 64)
	if r := m.Retry; r.Count != 3 || r.CountFrom != retry.CountFromQueue {
		t.Errorf("in lone: count %d (%q), want 3 from its own deaths", r.Count, r.CountFrom)
	}
	m = springFailure()
	(&Decoder{DeathQueues: map[string]bool{"orders.retry": true}}).Decode(&m, nil, 64)
	if r := m.Retry; r.Count != 2 || r.CountFrom != "" {
		t.Errorf("a Decoder without a vhost: count %d (%q), want 2 and nothing said of it", r.Count, r.CountFrom)
	}
}

// A queue whose messages each tell something new derives the ladders
// again at most maxRelearn times a read.
func TestDecoderRelearnsABoundedNumberOfTimes(t *testing.T) {
	v := &topology.Vhost{Name: "/", Queues: []topology.Queue{{Name: "sink", Type: topology.QueueClassic}}}
	for i := range 3 * maxRelearn {
		v.Queues = append(v.Queues, topology.Queue{Name: fmt.Sprintf("q%d", i), Type: topology.QueueClassic})
	}
	d := NewDecoder(v, topology.Discover(v), "sink")
	for i := range 3 * maxRelearn {
		m := broker.Message{Headers: retry.Headers{"x-death": []any{map[string]any{"queue": fmt.Sprintf("q%d", i), "reason": "expired", "count": int64(1)}}}}
		d.Decode(&m, nil, 64)
	}
	if d.relearn != maxRelearn {
		t.Fatalf("derived the ladders %d times, want the bound %d", d.relearn, maxRelearn)
	}
}

// When a message reached its queue: the time of the death that
// dead-lettered it there (its queue's dead-letter exchange and key are the
// ones it came with), when that death is its queue's first (x-death keeps
// no later time); not the time of an earlier death a framework
// republished it after.
func TestDecoderSaysWhenAMessageReachedItsQueue(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	v := &topology.Vhost{Name: "/", Queues: []topology.Queue{
		{Name: "work", Type: topology.QueueClassic, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work.dlq"}},
		{Name: "work.dlq", Type: topology.QueueClassic},
	}}
	dead := func(count int64) broker.Message {
		return broker.Message{Exchange: "", RoutingKey: "work.dlq", Headers: retry.Headers{"x-death": []any{
			map[string]any{"queue": "work", "reason": "rejected", "count": count, "exchange": "", "routing-keys": []any{"work"}, "time": at}}}}
	}
	d := NewDecoder(v, topology.Discover(v), "work.dlq")
	m := dead(1)
	d.Decode(&m, nil, 64)
	if !m.Reached.Equal(at) || m.ReachedFrom != broker.ReachedXDeath {
		t.Errorf("dead-lettered once: reached %v (%q), want %v from x-death", m.Reached, m.ReachedFrom, at)
	}
	m = dead(2)
	d.Decode(&m, nil, 64)
	if !m.Reached.IsZero() {
		t.Errorf("dead-lettered twice: reached %v (%q), want unknown", m.Reached, m.ReachedFrom)
	}
	sv := springVhost()
	m = springFailure()
	last := m.Headers["x-death"].([]any)[0].(map[string]any)
	last["time"], last["count"] = at, int64(1) // an exact time, of a death elsewhere
	NewDecoder(sv, topology.Discover(sv), "orders.given-up").Decode(&m, nil, 64)
	if !m.Reached.IsZero() {
		t.Errorf("republished by Spring: reached %v (%q), want unknown", m.Reached, m.ReachedFrom)
	}
}

// Issue 34: a message that records nothing, in orders.failure beside
// orders, shows orders as its origin, labelled as inferred from the name
// (where --to origin sends it); a name is no evidence, so FailedIn stays
// empty. One that records its death keeps the broker's origin.
func TestDecoderShowsAnOriginInferredFromTheName(t *testing.T) {
	v := &topology.Vhost{Name: "/", Queues: []topology.Queue{{Name: "orders", Type: topology.QueueClassic}, {Name: "orders.failure", Type: topology.QueueClassic}}}
	d := NewDecoder(v, topology.Discover(v), "orders.failure")
	m := broker.Message{}
	d.Decode(&m, []byte("{}"), 64)
	if m.Origin == nil || m.Origin.RoutingKey != "orders" || m.Origin.By != "inferred from the name orders.failure" || m.FailedIn != "" {
		t.Errorf("origin %+v, failed in %q; want orders inferred from the name, no failed-in", m.Origin, m.FailedIn)
	}
	dead := broker.Message{Headers: retry.Headers{"x-death": []any{map[string]any{"queue": "orders", "reason": "rejected", "count": int64(1), "exchange": "", "routing-keys": []any{"orders"}}}}}
	d.Decode(&dead, []byte("{}"), 64)
	if dead.Origin == nil || dead.Origin.By != "" || dead.Origin.RoutingKey != "orders" {
		t.Errorf("dead-lettered: origin %+v, want the broker's", dead.Origin)
	}
}
