package rabbit

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

func TestParsePromLine(t *testing.T) {
	for _, c := range []struct {
		line  string
		ok    bool
		name  string
		label string // the queue label
		value float64
	}{
		{`rabbitmq_detailed_queue_messages{vhost="/",queue="orders"} 3`, true, "rabbitmq_detailed_queue_messages", "orders", 3},
		{`rabbitmq_detailed_queue_messages{vhost="/",queue="a \"q\" \\ b\nc"} 1e3 1700000000`, true, "rabbitmq_detailed_queue_messages", "a \"q\" \\ b\nc", 1000},
		{`rabbitmq_detailed_queue_messages{vhost="/",queue="x,}y"} 7`, true, "rabbitmq_detailed_queue_messages", "x,}y", 7},
		{`up 1`, true, "up", "", 1},
		{`# TYPE rabbitmq_detailed_queue_messages gauge`, false, "", "", 0},
		{``, false, "", "", 0},
		{`broken{queue="x} 1`, false, "", "", 0},
		{`broken{queue=x} 1`, false, "", "", 0},
		{`novalue{queue="x"}`, false, "", "", 0},
		{`nan{queue="x"} notanumber`, false, "", "", 0},
	} {
		s, ok := parsePromLine(c.line)
		if ok != c.ok {
			t.Errorf("%q: ok=%v, want %v", c.line, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		if s.name != c.name || s.labels["queue"] != c.label || s.value != c.value {
			t.Errorf("%q: got %q %q %v", c.line, s.name, s.labels["queue"], s.value)
		}
	}
}

func FuzzParsePromLine(f *testing.F) {
	f.Add(`rabbitmq_detailed_queue_messages{vhost="/",queue="orders"} 3`)
	f.Add(`x{a="\`)
	f.Add(`x{a="b",} 1 2`)
	f.Fuzz(func(t *testing.T, line string) {
		s, ok := parsePromLine(line)
		if ok && s.name == "" {
			t.Fatalf("%q parsed without a name", line)
		}
	})
}

// The exposition of one vhost: published counts add up over exchanges,
// other vhosts are left out, unknown families are ignored.
const promSample1 = `# TYPE rabbitmq_detailed_queue_messages gauge
rabbitmq_detailed_queue_messages_ready{vhost="v1",queue="work"} 5
rabbitmq_detailed_queue_messages_unacked{vhost="v1",queue="work"} 1
rabbitmq_detailed_queue_messages{vhost="v1",queue="work"} 6
rabbitmq_detailed_queue_messages{vhost="other",queue="work"} 99
rabbitmq_detailed_queue_consumers{vhost="v1",queue="work"} 2
rabbitmq_detailed_queue_exchange_messages_published_total{vhost="v1",exchange="",queue="work"} 10
rabbitmq_detailed_queue_exchange_messages_published_total{vhost="v1",exchange="work.retry",queue="work"} 4
rabbitmq_detailed_queue_messages_delivered_ack_total{vhost="v1",queue="work"} 7
rabbitmq_detailed_queue_get_ack_total{vhost="v1",queue="work"} 1
rabbitmq_detailed_queue_messages_delivered_total{vhost="v1",queue="work"} 3
rabbitmq_detailed_queue_get_total{vhost="v1",queue="work"} 2
rabbitmq_detailed_queue_messages_acked_total{vhost="v1",queue="work"} 8
rabbitmq_detailed_queue_messages_redelivered_total{vhost="v1",queue="work"} 2
rabbitmq_detailed_queue_info{vhost="v1",queue="work",queue_type="rabbit_classic_queue"} 1
rabbitmq_build_info{rabbitmq_version="4.3.6"} 1
`

func TestReadPromQueuesFoldsOneVhost(t *testing.T) {
	qs, err := readPromQueues(strings.NewReader(promSample1), "v1")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 {
		t.Fatalf("queues %v, want work alone", qs)
	}
	w := qs["work"]
	want := promQueue{messages: 6, ready: 5, unacked: 1, hasDepth: true, consumers: 2, hasConsumers: true,
		published: 14, delivered: 13, acked: 8, redeliv: 2, noAck: 5, hasDelivery: true}
	if *w != want {
		t.Fatalf("work = %+v\nwant %+v", *w, want)
	}
	// What left for good: acked, and delivered or fetched without an ack.
	if _, c := withPrometheus(topology.Queue{}, queueCounters{}, w); !c.removedKnown || c.removed != 13 {
		t.Fatalf("removed %d (known %v), want 8 acked + 5 without ack", c.removed, c.removedKnown)
	}
}

func fromProm(name string, p *promQueue) (topology.Queue, queueCounters) {
	q, c := adaptQueue(apiQueue{Name: name})
	return withPrometheus(q, c, p)
}

// Rates from Prometheus are counter deltas between two polls; before 4.0
// (no delivery family) the outflow is inflow less growth.
func TestPrometheusRates(t *testing.T) {
	_, prev := fromProm("work", &promQueue{messages: 10, hasDepth: true, published: 100, delivered: 50, acked: 50, hasDelivery: true, hasConsumers: true, consumers: 1})
	q, cur := fromProm("work", &promQueue{messages: 30, hasDepth: true, published: 140, delivered: 70, acked: 68, redeliv: 4, hasDelivery: true, hasConsumers: true, consumers: 1})
	if q.Messages != 30 || q.Consumers != 1 || q.ConsumersUnknown {
		t.Fatalf("queue %+v: want depth 30 and 1 consumer from Prometheus", q)
	}
	r := rates(apiQueue{}, cur, prev, true, 2*time.Second)
	if !r.Known || r.Publish != 20 || r.Deliver != 10 || r.Ack != 9 || r.Redeliver != 2 || r.Net != 10 {
		t.Fatalf("rates %+v", r)
	}

	_, prev = fromProm("work", &promQueue{messages: 10, hasDepth: true, published: 100, hasConsumers: true})
	_, cur = fromProm("work", &promQueue{messages: 16, hasDepth: true, published: 120, hasConsumers: true})
	r = rates(apiQueue{}, cur, prev, true, 2*time.Second)
	if !r.Known || r.Publish != 10 || r.Deliver != 7 {
		t.Fatalf("3.x estimate: rates %+v, want in 10/s and out (20-6)/2 = 7/s", r)
	}

	q, _ = fromProm("gone", nil)
	if !q.ConsumersUnknown {
		t.Fatal("a queue Prometheus does not list has unknown consumers")
	}
}
