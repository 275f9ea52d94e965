package topology

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// Topologies of four more frameworks, each as its source declares it (the
// file cited), and the ladders discovery must find in them.

// symfonyMessenger is Symfony Messenger's AMQP transport with the DSN
// amqp://…/%2f/messages and the default retry strategy (3 retries: 1 s,
// 2 s, 4 s), and the failure transport amqp://…/%2f/failed.
// symfony/amqp-messenger Transport/Connection.php: fromDsn names the
// exchange (fanout) and its one queue "messages"; setupDelay declares, per
// delay, delay_<exchange>_<queue>_<ms>_retry (x-message-ttl ms, x-expires
// ms + 10 s, dead-lettering through the default exchange with the queue's
// name) bound to the direct exchange "delays" by its own name. The failure
// transport is a transport like any other: exchange and queue "failed",
// fed by publishing, never by dead-lettering.
func symfonyMessenger() *Vhost {
	v := &Vhost{
		Name: "/",
		Exchanges: []Exchange{
			{Name: "messages", Type: ExchangeFanout, MessagesDelayed: -1},
			{Name: "delays", Type: ExchangeDirect, MessagesDelayed: -1},
			{Name: "failed", Type: ExchangeFanout, MessagesDelayed: -1},
		},
		Queues: []Queue{
			{Name: "messages", Type: QueueClassic, Consumers: 2},
			{Name: "failed", Type: QueueClassic, Messages: 4},
		},
		Bindings: []Binding{
			{Source: "messages", Destination: "messages", DestinationType: "queue"},
			{Source: "failed", Destination: "failed", DestinationType: "queue"},
		},
	}
	for _, ms := range []int64{1000, 2000, 4000} {
		name := fmt.Sprintf("delay_messages_messages_%d_retry", ms)
		v.Queues = append(v.Queues, Queue{Name: name, Type: QueueClassic, Messages: 1,
			Arguments: map[string]any{"x-message-ttl": ms, "x-expires": ms + 10000, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "messages"}})
		v.Bindings = append(v.Bindings, Binding{Source: "delays", Destination: name, DestinationType: "queue", RoutingKey: name})
	}
	return v
}

// dramatiq is Dramatiq's RabbitmqBroker for the queue "default"
// (Bogdanp/dramatiq dramatiq/brokers/rabbitmq.py: _declare_queue,
// _declare_dq_queue, _declare_xq_queue). The queue and its delay queue
// dead-letter through the default exchange to default.XQ, which keeps a
// dead message 7 days and dead-letters nowhere. default.DQ has no TTL:
// the workers consume it and hold each message until its eta, then
// publish it to default.
func dramatiq() *Vhost {
	toXQ := map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "default.XQ"}
	return &Vhost{
		Name: "/",
		Queues: []Queue{
			{Name: "default", Type: QueueClassic, Consumers: 1, Arguments: toXQ},
			{Name: "default.DQ", Type: QueueClassic, Consumers: 1, Arguments: toXQ},
			{Name: "default.XQ", Type: QueueClassic, Messages: 2, Arguments: map[string]any{"x-message-ttl": int64(7 * 86400000)}},
		},
	}
}

// watermill is watermill-amqp's NewDurableQueueConfig (pkg/amqp/config.go:
// the default exchange, a durable queue named by the topic) for the topic
// "orders", with middleware.PoisonQueue publishing what fails to the
// topic "poison_queue" (watermill's examples), whose queue its
// subscriber declared. Retries (middleware.Retry) happen inside the
// handler: nothing on the broker waits.
func watermill() *Vhost {
	return &Vhost{
		Name: "/",
		Queues: []Queue{
			{Name: "orders", Type: QueueClassic, Consumers: 1},
			{Name: "poison_queue", Type: QueueClassic, Messages: 3},
		},
	}
}

// moleculerChannels is @moleculer/channels' AMQP adapter (src/adapters/
// amqp.js subscribe) for the channel "order.created" and the group
// "billing": a fanout exchange named by the channel, the queue
// <group>.<channel> bound to it; with dead-lettering on, the fanout
// exchange DEAD_LETTER and the queue FAILED_MESSAGES (the defaults of
// src/adapters/base.js), fed by publishing. Retries are republished
// straight to the queue.
func moleculerChannels() *Vhost {
	return &Vhost{
		Name: "/",
		Exchanges: []Exchange{
			{Name: "order.created", Type: ExchangeFanout, MessagesDelayed: -1},
			{Name: "DEAD_LETTER", Type: ExchangeFanout, MessagesDelayed: -1},
		},
		Queues: []Queue{
			{Name: "billing.order.created", Type: QueueClassic, Consumers: 1},
			{Name: "FAILED_MESSAGES", Type: QueueClassic, Messages: 5},
		},
		Bindings: []Binding{
			{Source: "order.created", Destination: "billing.order.created", DestinationType: "queue"},
			{Source: "DEAD_LETTER", Destination: "FAILED_MESSAGES", DestinationType: "queue"},
		},
	}
}

func TestDiscoverMoreFrameworks(t *testing.T) {
	var symfonyTiers []retry.Tier
	for _, ms := range []int64{1000, 2000, 4000} {
		symfonyTiers = append(symfonyTiers, retry.Tier{Queue: fmt.Sprintf("delay_messages_messages_%d_retry", ms),
			TTL: time.Duration(ms) * time.Millisecond, ReturnRoutingKey: "messages"})
	}
	for _, tt := range []struct {
		name string
		v    *Vhost
		want []retry.Ladder
		// known is what discovery finds instead of want, and why that is
		// wrong: the case is skipped while it finds exactly that.
		known    []retry.Ladder
		knownWhy string
	}{
		// The delay queues are the ladder's tiers; the failure transport
		// is one queue for every transport, named by configuration, fed
		// by publishing: nothing ties it to "messages".
		{name: "Symfony Messenger", v: symfonyMessenger(), want: []retry.Ladder{{Main: "messages", Tiers: symfonyTiers}}},
		// Rejected in default, dead-lettered to default.XQ; retries wait
		// in default.DQ (held by the workers until their eta).
		{name: "Dramatiq", v: dramatiq(), want: []retry.Ladder{{Main: "default", DLQ: "default.XQ",
			Delays: []retry.Delay{{Name: "default.DQ", Queues: []string{"default.DQ"}, HeldByConsumers: true}}}}},
		// Nothing dead-letters and nothing waits; the error queue is
		// named by the application (Watermill) or one default name for
		// every channel (Moleculer): no ladder until its messages are
		// read (TestDiscoverSharedErrorQueueBySeenMessages).
		{name: "Watermill", v: watermill()},
		{name: "Moleculer Channels", v: moleculerChannels()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Discover(tt.v)
			switch {
			case reflect.DeepEqual(got, tt.want) || len(got) == 0 && len(tt.want) == 0:
			case tt.known != nil && reflect.DeepEqual(got, tt.known):
				t.Skipf("known: %s", tt.knownWhy)
			default:
				t.Errorf("Discover =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// With Dramatiq's workers stopped (nothing consumes), its naming still
// says which queue is which: default.XQ is default's error queue and
// default.DQ its delay, never default waiting for default.XQ.
func TestDiscoverDramatiqWithItsWorkersDown(t *testing.T) {
	v := dramatiq()
	for i := range v.Queues {
		v.Queues[i].Consumers = 0
	}
	want := []retry.Ladder{{Main: "default", DLQ: "default.XQ",
		Delays: []retry.Delay{{Name: "default.DQ", Queues: []string{"default.DQ"}, HeldByConsumers: true}}}}
	got := Discover(v)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Discover =\n%+v\nwant\n%+v", got, want)
	}
	for _, f := range Findings(v, got) {
		if f.Code != CodeNoConsumers {
			t.Errorf("finding %s on %s: %s", f.Code, f.Queue, f.Message)
		}
	}
}

// A shared error queue fed by publishing and named by configuration
// (Watermill's poison queue, Moleculer's FAILED_MESSAGES) is tied to its
// endpoints only by what its messages say: once a peek has read where they
// failed (Seen.FailedIn), each endpoint is a ladder ending there.
func TestDiscoverSharedErrorQueueBySeenMessages(t *testing.T) {
	w := watermill()
	w.Apply(Evidence{"poison_queue": {FailedIn: []string{"orders"}}})
	mol := moleculerChannels()
	mol.Queues = append(mol.Queues, Queue{Name: "shipping.order.created", Type: QueueClassic, Consumers: 1})
	mol.Bindings = append(mol.Bindings, Binding{Source: "order.created", Destination: "shipping.order.created", DestinationType: "queue"})
	mol.Apply(Evidence{"FAILED_MESSAGES": {FailedIn: []string{"billing.order.created", "shipping.order.created"}}})
	nsb := &Vhost{Name: "/", Queues: []Queue{{Name: "Sales", Type: QueueQuorum, Consumers: 1}, {Name: "error", Type: QueueQuorum, Messages: 2}}}
	if got := Discover(nsb); len(got) != 0 {
		t.Fatalf("NServiceBus with nothing seen: %+v, want no ladder", got)
	}
	nsb.Apply(Evidence{"error": {FailedIn: []string{"Sales"}}})
	seen := func(q string) string { return "messages seen: they failed in " + q }
	for _, tt := range []struct {
		name string
		v    *Vhost
		want []retry.Ladder
	}{
		{"Watermill", w, []retry.Ladder{{Main: "orders", DLQ: "poison_queue", DLQFrom: seen("orders"), RetriesInConsumer: true}}},
		// NServiceBus without its delay levels (delayed retries off):
		// nothing names the endpoints of its one "error" queue but
		// NServiceBus.FailedQ.
		{"NServiceBus", nsb, []retry.Ladder{{Main: "Sales", DLQ: "error", DLQFrom: seen("Sales"), RetriesInConsumer: true}}},
		{"Moleculer Channels", mol, []retry.Ladder{
			{Main: "billing.order.created", DLQ: "FAILED_MESSAGES", DLQFrom: seen("billing.order.created"), RetriesInConsumer: true},
			{Main: "shipping.order.created", DLQ: "FAILED_MESSAGES", DLQFrom: seen("shipping.order.created"), RetriesInConsumer: true},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Discover(tt.v)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Discover =\n%+v\nwant\n%+v", got, tt.want)
			}
			for _, f := range Findings(tt.v, got) {
				t.Errorf("finding %s on %s: %s", f.Code, f.Queue, f.Message)
			}
		})
	}
}

// Messages that name where they failed link no queue that is already
// something else: a tier (it returns them), a main, a queue dead-lettering
// back, or a queue that does not exist.
func TestDiscoverSeenFailedInLinksOnlyDeadEnds(t *testing.T) {
	base := func() *Vhost {
		return &Vhost{Name: "/", Queues: []Queue{
			{Name: "orders", Consumers: 1, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"}},
			{Name: "orders.retry", Arguments: map[string]any{"x-message-ttl": int64(5000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders"}},
			{Name: "orders.dlq"},
			{Name: "billing", Consumers: 1},
			{Name: "back", Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "billing"}, Consumers: 1},
		}}
	}
	want := Discover(base())
	for _, ev := range []Evidence{
		{"orders.retry": {FailedIn: []string{"orders"}}},
		{"orders": {FailedIn: []string{"billing"}}},
		{"orders.dlq": {FailedIn: []string{"orders"}}},
		{"orders.dlq": {FailedIn: []string{"gone"}}},
		{"back": {FailedIn: []string{"billing"}}},
	} {
		v := base()
		v.Apply(ev)
		if got := Discover(v); !reflect.DeepEqual(got, want) {
			t.Errorf("evidence %+v: Discover =\n%+v\nwant as without it\n%+v", ev, got, want)
		}
	}
	// The same DLQ holding billing's failures too is billing's dead end.
	v := base()
	v.Apply(Evidence{"orders.dlq": {FailedIn: []string{"billing", "orders"}}})
	dlqs := map[string]string{}
	for _, l := range Discover(v) {
		dlqs[l.Main] = l.DLQ + " " + l.DLQFrom
	}
	if dlqs["billing"] != "orders.dlq messages seen: they failed in billing" || dlqs["orders"] != "orders.dlq " {
		t.Errorf("DLQs = %q, want billing → orders.dlq (seen) and orders → orders.dlq (its route)", dlqs)
	}
}

func TestEvidenceObserveFailedIn(t *testing.T) {
	e := Evidence{}
	e.Observe("poison", false, nil, "b")
	e.Observe("poison", false, nil, "a")
	e.Observe("poison", false, nil, "b")
	e.Observe("poison", false, nil, "poison") // where it sits says nothing
	e.Observe("poison", false, nil, "")
	if got := e["poison"].FailedIn; !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("FailedIn = %q, want [a b]", got)
	}
	for i := range 2 * maxFailedIn {
		e.Observe("many", false, nil, fmt.Sprintf("q%03d", i))
	}
	if n := len(e["many"].FailedIn); n != maxFailedIn {
		t.Errorf("FailedIn holds %d, want the bound %d", n, maxFailedIn)
	}
	o := Evidence{"poison": {FailedIn: []string{"c"}, Rejected: true}}
	e.Merge(o)
	if got := e["poison"]; !reflect.DeepEqual(got, Seen{Rejected: true, FailedIn: []string{"a", "b", "c"}}) {
		t.Errorf("merged = %+v", got)
	}
	if !reflect.DeepEqual(o["poison"].FailedIn, []string{"c"}) {
		t.Errorf("merge changed its argument: %q", o["poison"].FailedIn)
	}
}
