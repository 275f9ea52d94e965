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
		// every channel (Moleculer): no ladder.
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
