package moveplan

import (
	"github.com/ladder-tui/ladder/retry/topology"
)

// A copy of topology's Go seed fixture (seeds_test.go there): test files
// cannot be shared across packages.

// seedGo is the Go (amqp091-go) seed: orders.topic → orders.process, whose
// dead letters go through orders.dlx to orders.dlq; the worker publishes a
// failed message to orders.retry with the tier's name as routing key, so the
// message carries that key, waits out the tier's TTL and dead-letters back
// to orders.topic with it ("orders.wait.5s" matches "orders.#"). A delayed
// exchange is the plugin-based alternative.
func seedGo() *topology.Vhost {
	v := &topology.Vhost{
		Name: "/",
		Exchanges: []topology.Exchange{
			{Name: "orders.topic", Type: topology.ExchangeTopic, MessagesDelayed: -1},
			{Name: "orders.retry", Type: topology.ExchangeDirect, MessagesDelayed: -1},
			{Name: "orders.dlx", Type: topology.ExchangeFanout, MessagesDelayed: -1},
			{Name: "orders.delayed", Type: topology.ExchangeDelayed, MessagesDelayed: 7,
				Arguments: map[string]any{"x-delayed-type": "topic"}},
		},
		Queues: []topology.Queue{
			{Name: "orders.process", Type: topology.QueueClassic, Consumers: 4, Messages: 12,
				Arguments: map[string]any{"x-dead-letter-exchange": "orders.dlx"},
				Rates:     topology.Rates{Known: true, Publish: 50, Deliver: 52, Ack: 50, Redeliver: 2}},
			{Name: "orders.dlq", Type: topology.QueueClassic, Messages: 3},
		},
		Bindings: []topology.Binding{
			{Source: "orders.topic", Destination: "orders.process", DestinationType: "queue", RoutingKey: "orders.#"},
			{Source: "orders.delayed", Destination: "orders.process", DestinationType: "queue", RoutingKey: "orders.#"},
			{Source: "orders.dlx", Destination: "orders.dlq", DestinationType: "queue"},
		},
	}
	for _, t := range []struct {
		name string
		ttl  any
	}{{"orders.wait.5s", int32(5000)}, {"orders.wait.30s", int64(30000)}, {"orders.wait.5m", int32(300000)}} {
		v.Queues = append(v.Queues, topology.Queue{Name: t.name, Type: topology.QueueClassic, Messages: 1,
			Arguments: map[string]any{"x-message-ttl": t.ttl, "x-dead-letter-exchange": "orders.topic"}})
		v.Bindings = append(v.Bindings, topology.Binding{Source: "orders.retry", Destination: t.name, DestinationType: "queue", RoutingKey: t.name})
	}
	return v
}
