package topology

import "fmt"

// Fixture builders for the three seed topologies (../../shared/seeds), as a
// management-API adapter would describe them. Numbers are given in the types
// the sources produce: AMQP arguments as int32/int64, policies as float64.

// seedGo is the Go (amqp091-go) seed: orders.topic → orders.process, whose
// dead letters go through orders.dlx to orders.dlq; the worker publishes a
// failed message to orders.retry with the tier's name as routing key, so the
// message carries that key, waits out the tier's TTL and dead-letters back
// to orders.topic with it ("orders.wait.5s" matches "orders.#"). A delayed
// exchange is the plugin-based alternative.
func seedGo() *Vhost {
	v := &Vhost{
		Name: "/",
		Exchanges: []Exchange{
			{Name: "orders.topic", Type: ExchangeTopic, MessagesDelayed: -1},
			{Name: "orders.retry", Type: ExchangeDirect, MessagesDelayed: -1},
			{Name: "orders.dlx", Type: ExchangeFanout, MessagesDelayed: -1},
			{Name: "orders.delayed", Type: ExchangeDelayed, MessagesDelayed: 7,
				Arguments: map[string]any{"x-delayed-type": "topic"}},
		},
		Queues: []Queue{
			{Name: "orders.process", Type: QueueClassic, Consumers: 4, Messages: 12,
				Arguments: map[string]any{"x-dead-letter-exchange": "orders.dlx"},
				Rates:     Rates{Known: true, Publish: 50, Deliver: 52, Ack: 50, Redeliver: 2}},
			{Name: "orders.dlq", Type: QueueClassic, Messages: 3},
		},
		Bindings: []Binding{
			{Source: "orders.topic", Destination: "orders.process", DestinationType: "queue", RoutingKey: "orders.#"},
			{Source: "orders.delayed", Destination: "orders.process", DestinationType: "queue", RoutingKey: "orders.#"},
			{Source: "orders.dlx", Destination: "orders.dlq", DestinationType: "queue"},
		},
	}
	for _, t := range []struct {
		name string
		ttl  any
	}{{"orders.wait.5s", int32(5000)}, {"orders.wait.30s", int64(30000)}, {"orders.wait.5m", int32(300000)}} {
		v.Queues = append(v.Queues, Queue{Name: t.name, Type: QueueClassic, Messages: 1,
			Arguments: map[string]any{"x-message-ttl": t.ttl, "x-dead-letter-exchange": "orders.topic"}})
		v.Bindings = append(v.Bindings, Binding{Source: "orders.retry", Destination: t.name, DestinationType: "queue", RoutingKey: t.name})
	}
	return v
}

// seedPHPDelays are jittered delays (ms) as yii2-queue's backoff produces them.
var seedPHPDelays = []int64{60000, 120000, 61234, 118007, 240000, 93312, 187451, 480000, 302119, 75555}

// seedPHP is the PHP seed (yii2-queue over amqp_interop/enqueue) with n
// per-delay queues: exchange "exchange" → queue "queue"; enqueue's DLX delay
// strategy declares enqueue.queue.<ms>.delayed (TTL = delay, dead-letter
// exchange "", routing key "queue") and publishes to it via the default
// exchange. No DLQ.
func seedPHP(n int) *Vhost {
	v := &Vhost{
		Name:      "/",
		Exchanges: []Exchange{{Name: "exchange", Type: ExchangeDirect, MessagesDelayed: -1}},
		Queues:    []Queue{{Name: "queue", Type: QueueClassic, Consumers: 1}},
		Bindings:  []Binding{{Source: "exchange", Destination: "queue", DestinationType: "queue", RoutingKey: "queue"}},
	}
	for i := range n {
		ms := seedPHPDelays[i%len(seedPHPDelays)] + int64(i/len(seedPHPDelays))
		v.Queues = append(v.Queues, Queue{
			Name: fmt.Sprintf("enqueue.queue.%d.delayed", ms), Type: QueueClassic,
			Arguments: map[string]any{
				"x-message-ttl":             ms,
				"x-dead-letter-exchange":    "",
				"x-dead-letter-routing-key": "queue",
			},
		})
	}
	return v
}

// seedPython is the Python (aio_pika) seed: main_exchange → main_queue
// (bound "main"), dead letters via retry_exchange/"retry" to retry_queue
// (TTL 60 s), which dead-letters via "" with routing key "main" — and no
// queue is named "main", so the return is dropped.
func seedPython() *Vhost {
	return &Vhost{
		Name: "/",
		Exchanges: []Exchange{
			{Name: "main_exchange", Type: ExchangeDirect, MessagesDelayed: -1},
			{Name: "retry_exchange", Type: ExchangeDirect, MessagesDelayed: -1},
		},
		Queues: []Queue{
			{Name: "main_queue", Type: QueueClassic, Consumers: 2, Arguments: map[string]any{
				"x-dead-letter-exchange":    "retry_exchange",
				"x-dead-letter-routing-key": "retry",
			}},
			{Name: "retry_queue", Type: QueueClassic, Messages: 5, Arguments: map[string]any{
				"x-message-ttl":             int32(60000),
				"x-dead-letter-exchange":    "",
				"x-dead-letter-routing-key": "main",
			}},
		},
		Bindings: []Binding{
			{Source: "main_exchange", Destination: "main_queue", DestinationType: "queue", RoutingKey: "main"},
			{Source: "retry_exchange", Destination: "retry_queue", DestinationType: "queue", RoutingKey: "retry"},
		},
	}
}

// seedQueue returns a pointer to the named queue of v, for tests to tweak.
func seedQueue(v *Vhost, name string) *Queue {
	for i := range v.Queues {
		if v.Queues[i].Name == name {
			return &v.Queues[i]
		}
	}
	panic("no queue " + name)
}
