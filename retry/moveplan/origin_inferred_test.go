package moveplan

import (
	"slices"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// watermillPubSub: Watermill's pub/sub configs (watermill-amqp
// config.go): topic "events" is a fanout exchange, each subscriber's queue
// events_<suffix> bound to it; PoisonQueue publishes what fails to
// poison_queue with topic_poisoned = the topic. extra adds queues bound
// to events.
func watermillPubSub(extra ...string) *topology.Vhost {
	v := &topology.Vhost{Name: "/", Exchanges: []topology.Exchange{
		{Name: "events", Type: topology.ExchangeFanout, MessagesDelayed: -1},
		{Name: "other", Type: topology.ExchangeFanout, MessagesDelayed: -1},
	}}
	for _, q := range append([]string{"poison_queue", "events_billing", "other_audit"}, extra...) {
		v.Queues = append(v.Queues, topology.Queue{Name: q, Type: topology.QueueClassic})
	}
	v.Bindings = append(v.Bindings,
		topology.Binding{Source: "events", Destination: "events_billing", DestinationType: "queue"},
		topology.Binding{Source: "other", Destination: "other_audit", DestinationType: "queue"})
	for _, q := range extra {
		v.Bindings = append(v.Bindings, topology.Binding{Source: "events", Destination: q, DestinationType: "queue"})
	}
	return v
}

func poisoned(topic string) retry.Headers {
	return retry.Headers{"topic_poisoned": topic, "reason_poisoned": "boom", "_watermill_message_uuid": "u1"}
}

// The recorded topic is no queue but an exchange routing to one queue:
// that queue, published through the exchange, reaching it alone; the
// answer and the plan's note say what it rests on.
func TestOriginOfAnExchangeIsItsOneQueue(t *testing.T) {
	v := watermillPubSub()
	f, ok := failedIn(topology.NewRouter(v), topology.Discover(v), "poison_queue", poisoned("events"))
	want := "topic_poisoned names exchange events, which routes to queue events_billing only"
	if !ok || f.Queue != "events_billing" || f.By != want {
		t.Fatalf("got %+v %v, want events_billing by %q", f, ok, want)
	}
	p := mustPlanner(t, v, Spec{From: "poison_queue", To: Target{Kind: TargetOrigin}})
	r := p.Plan(Message{MessageID: "m", Headers: poisoned("events")})
	if !r.Moves() || r.Exchange != "events" || !slices.Equal(r.Reaches, []string{"events_billing"}) || !strings.Contains(r.Note, want) {
		t.Fatalf("plan %+v, want through events to events_billing alone, noted", r)
	}
}

// An exchange routing to two queues: neither is chosen and nothing is
// published; the refusal names both and how to choose.
func TestOriginOfAnExchangeWithTwoQueuesIsRefused(t *testing.T) {
	v := watermillPubSub("events_audit")
	f, ok := failedIn(topology.NewRouter(v), topology.Discover(v), "poison_queue", poisoned("events"))
	if !ok || f.Queue != "" || !slices.Equal(f.Candidates, []string{"events_audit", "events_billing"}) {
		t.Fatalf("got %+v %v, want candidates events_audit and events_billing", f, ok)
	}
	p := mustPlanner(t, v, Spec{From: "poison_queue", To: Target{Kind: TargetOrigin}})
	r := p.Plan(Message{MessageID: "m", Headers: poisoned("events")})
	if r.Moves() || len(r.Reaches) != 0 {
		t.Fatalf("plan %+v moves it, want it refused", r)
	}
	for _, s := range []string{"events_audit", "events_billing", "--to queue:", "left in poison_queue"} {
		if !strings.Contains(r.Skip, s) {
			t.Errorf("refusal %q does not say %q", r.Skip, s)
		}
	}
}

// Nothing recorded, the queue named orders.failure (and the other common
// endings) of an existing orders: orders, labelled as inferred from the
// name, in the answer and the plan's note.
func TestOriginInferredFromTheName(t *testing.T) {
	for _, in := range []string{"orders.failure", "orders.failed", "orders.errors", "orders_error", "orders-error", "orders.dlq", "orders_dlq", "orders.parkingLot", "orders_dead_letter"} {
		v := &topology.Vhost{Name: "/", Queues: []topology.Queue{{Name: "orders"}, {Name: in}}}
		f, ok := failedIn(topology.NewRouter(v), topology.Discover(v), in, retry.Headers{})
		if !ok || f.Queue != "orders" || f.By != "inferred from the name "+in {
			t.Errorf("%s: got %+v %v, want orders inferred from the name", in, f, ok)
			continue
		}
		p := mustPlanner(t, v, Spec{From: in, To: Target{Kind: TargetOrigin}})
		r := p.Plan(Message{MessageID: "m"})
		if !r.Moves() || !slices.Equal(r.Reaches, []string{"orders"}) || !strings.Contains(r.Note, "inferred from the name "+in) {
			t.Errorf("%s: plan %+v, want orders, noted as inferred", in, r)
		}
	}
	// The named queue must exist: no orders, no origin.
	v := &topology.Vhost{Name: "/", Queues: []topology.Queue{{Name: "orders.failure"}}}
	if f, ok := failedIn(topology.NewRouter(v), nil, "orders.failure", retry.Headers{}); ok {
		t.Errorf("no queue orders, yet %+v", f)
	}
}

// What a message records beats its queue's name: x-death, a framework's
// header, x-first-death all come first.
func TestRecordedOriginBeatsTheName(t *testing.T) {
	v := &topology.Vhost{Name: "/", Queues: []topology.Queue{{Name: "orders"}, {Name: "orders.failure"}, {Name: "payments"}}}
	r := topology.NewRouter(v)
	for _, tt := range []struct {
		name string
		h    retry.Headers
		by   string
	}{
		{"x-death", rejectedIn("payments", "", "payments"), "x-death"},
		{"framework", retry.Headers{"topic_poisoned": "payments", "reason_poisoned": "no"}, "topic_poisoned"},
		{"x-first-death", retry.Headers{"x-first-death-queue": "payments", "x-first-death-reason": "rejected"}, "x-first-death-queue"},
	} {
		f, ok := failedIn(r, topology.Discover(v), "orders.failure", tt.h)
		if !ok || f.Queue != "payments" || f.By != tt.by {
			t.Errorf("%s: got %+v %v, want payments by %s", tt.name, f, ok, tt.by)
		}
	}
}

// Discovery and --to origin read one table: every naming that makes a
// queue Q's dead end in discovery is one a message there with nothing
// recorded is inferred to have failed in Q by, and the other way round.
func TestDiscoveryAndOriginAgreeOnNames(t *testing.T) {
	for _, n := range retry.ErrorQueueNamings() {
		in := strings.ReplaceAll(n.Pattern, "{queue}", "orders")
		v := &topology.Vhost{Name: "/", Queues: []topology.Queue{{Name: "orders"}, {Name: in}}}
		ladders := topology.Discover(v)
		linked := slices.ContainsFunc(ladders, func(l retry.Ladder) bool {
			return l.Main == "orders" && (l.DLQ == in || slices.Contains(l.ErrorQueues, in))
		})
		f, ok := failedIn(topology.NewRouter(v), ladders, in, retry.Headers{})
		if !linked || !ok || f.Queue != "orders" {
			t.Errorf("%s: discovery links it to orders %v, origin %+v %v", n.Pattern, linked, f, ok)
		}
	}
}

// The exchange routes to the error queue itself as well: that one is not
// where it failed, and publishing through the exchange would put a copy
// back there, so it goes to events_billing directly.
func TestOriginOfAnExchangeLeavesTheSourceOut(t *testing.T) {
	v := watermillPubSub()
	v.Bindings = append(v.Bindings, topology.Binding{Source: "events", Destination: "poison_queue", DestinationType: "queue"})
	p := mustPlanner(t, v, Spec{From: "poison_queue", To: Target{Kind: TargetOrigin}})
	r := p.Plan(Message{MessageID: "m", Headers: poisoned("events")})
	if !r.Moves() || r.Exchange != "" || r.RoutingKey != "events_billing" || !slices.Equal(r.Reaches, []string{"events_billing"}) {
		t.Fatalf("plan %+v, want events_billing directly", r)
	}
}
