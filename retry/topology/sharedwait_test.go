package topology

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// amqplibRetry is npm's amqplib-retry 1.1.7 (lib/initializer.js,
// lib/amqp_handler_wrapper.js, lib/ready_queue_consumer.js): one wait queue
// amqplib-retry.delayed (no TTL: each retry publishes with a per-message
// expiration and a _targetQueue header) dead-letters through the direct
// exchange amqplib-retry, key "ready", into amqplib-retry.ready, whose
// consumer sends each message back to the queue its _targetQueue names.
// Two work queues use it, each with its {queue}.failure.
func amqplibRetry() *Vhost {
	return &Vhost{Name: "/", Exchanges: []Exchange{{Name: "amqplib-retry", Type: "direct"}},
		Queues: []Queue{
			{Name: "amqplib-retry.delayed", Type: QueueClassic, Messages: 3,
				Arguments: map[string]any{"x-dead-letter-exchange": "amqplib-retry", "x-dead-letter-routing-key": "ready"}},
			{Name: "amqplib-retry.ready", Type: QueueClassic, Consumers: 1},
			{Name: "orders", Type: QueueClassic, Consumers: 1},
			{Name: "orders.failure", Type: QueueClassic},
			{Name: "billing", Type: QueueClassic, Consumers: 1},
			{Name: "billing.failure", Type: QueueClassic},
		},
		Bindings: []Binding{{Source: "amqplib-retry", Destination: "amqplib-retry.ready", DestinationType: "queue", RoutingKey: "ready"}},
	}
}

// Without evidence the graph alone says the ready queue waits for the
// delayed one (rule 4): that is all discovery can tell, and it says what
// it rested on. Once messages seen in the wait queue or the ready queue name
// the queues they return to, both are one shared wait infrastructure in
// each of those queues' ladders, and neither is a main.
func TestDiscoverSharedWaitQueueByHeader(t *testing.T) {
	before := Discover(amqplibRetry())
	if i := slices.IndexFunc(before, func(l retry.Ladder) bool { return l.Main == "amqplib-retry.ready" }); i < 0 || len(before[i].InferredFrom) == 0 {
		t.Fatalf("without evidence: %+v, want amqplib-retry.ready as a main waited for by amqplib-retry.delayed, inferred", before)
	}
	shared := func(from string) retry.Delay {
		return retry.Delay{Name: "amqplib-retry.delayed", Queues: []string{"amqplib-retry.delayed", "amqplib-retry.ready"},
			PerMessageTTL: true, From: from}
	}
	for _, tt := range []struct {
		name string
		ev   Evidence
		from string
	}{
		{"messages waiting", Evidence{"amqplib-retry.delayed": {Expiration: true, FailedIn: []string{"billing", "orders"}}},
			"messages seen in amqplib-retry.delayed return to "},
		// The router down: messages wait in the ready queue, x-death
		// saying they expired in the wait queue.
		{"messages ready", Evidence{"amqplib-retry.delayed": {Expiration: true}, "amqplib-retry.ready": {FailedIn: []string{"billing", "orders"}}},
			"messages seen in amqplib-retry.ready return to "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := amqplibRetry()
			v.Apply(tt.ev)
			got := Discover(v)
			want := []retry.Ladder{
				{Main: "billing", DLQ: "billing.failure", DLQFrom: "amqplib-retry: {queue}.failure", Delays: []retry.Delay{shared(tt.from + "billing")}},
				{Main: "orders", DLQ: "orders.failure", DLQFrom: "amqplib-retry: {queue}.failure", Delays: []retry.Delay{shared(tt.from + "orders")}},
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Discover =\n%+v\nwant\n%+v", got, want)
			}
			hol := false
			for _, f := range Findings(v, got) {
				// A wait queue of per-message expirations (2 s, 4 s, 8 s…
				// in one queue) may block: that finding is real; nothing
				// else is.
				if f.Code == CodeHoLRisk && f.Queue == "amqplib-retry.delayed" {
					hol = true
					continue
				}
				t.Errorf("finding %s on %s: %s", f.Code, f.Queue, f.Message)
			}
			if !hol {
				t.Error("no hol-risk on amqplib-retry.delayed: its messages wait for their own expirations")
			}
			for _, l := range got {
				if !l.Explains("amqplib-retry.delayed") || !l.Explains("amqplib-retry.ready") {
					t.Errorf("ladder %s does not explain the shared queues", l.Main)
				}
			}
		})
	}
}

// Messages naming a queue that the wait queue dead-letters straight into
// are an ordinary wait queue's, and a queue with a TTL is no per-message
// wait: neither is shared infrastructure.
func TestDiscoverSharedWaitNeedsAnotherQueue(t *testing.T) {
	v, base := amqplibRetry(), amqplibRetry()
	v.Apply(Evidence{"amqplib-retry.delayed": {Expiration: true, FailedIn: []string{"amqplib-retry.ready"}}})
	base.Apply(Evidence{"amqplib-retry.delayed": {Expiration: true}})
	if got, want := Discover(v), Discover(base); !reflect.DeepEqual(got, want) {
		t.Errorf("FailedIn naming the ready queue itself: %+v, want as without evidence %+v", got, want)
	}
	v = amqplibRetry()
	v.Apply(Evidence{"amqplib-retry.delayed": {Rejected: true, FailedIn: []string{"orders"}}})
	for _, l := range Discover(v) {
		if len(l.Delays) > 0 {
			t.Errorf("a queue where messages were rejected is no wait queue: %+v", l)
		}
	}
}

// A chain of delay levels shared by endpoints is one delay of each of
// them, never a ladder of its own, and each endpoint's ladder lists the
// levels that deliver to it with their TTLs: levels 4 s → 2 s → 1 s end
// in a topic exchange routing to every endpoint by key; a level of 16 s
// feeds 4 s and a level of 8 s that dead-letters with the fixed key
// "audit", so 8 s is among audit's levels alone.
func TestDiscoverDelayChainLevelsPerEndpoint(t *testing.T) {
	ttl := func(s int64, dlx string) map[string]any {
		return map[string]any{"x-message-ttl": s * 1000, "x-dead-letter-exchange": dlx}
	}
	v := &Vhost{Name: "/",
		Exchanges: []Exchange{{Name: "delay.out", Type: ExchangeTopic}, {Name: "delay.l1", Type: ExchangeTopic}, {Name: "delay.l2", Type: ExchangeTopic}, {Name: "delay.l4", Type: ExchangeTopic}},
		Queues: []Queue{
			{Name: "delay.level-0", Arguments: ttl(1, "delay.out")},
			{Name: "delay.level-1", Arguments: ttl(2, "delay.l1")},
			{Name: "delay.level-2", Arguments: ttl(4, "delay.l2")},
			{Name: "delay.level-3", Arguments: map[string]any{"x-message-ttl": int64(8000), "x-dead-letter-exchange": "delay.out", "x-dead-letter-routing-key": "audit"}},
			{Name: "delay.level-4", Arguments: ttl(16, "delay.l4")},
			{Name: "orders", Consumers: 1}, {Name: "billing", Consumers: 1}, {Name: "audit", Consumers: 1},
		},
		Bindings: []Binding{
			{Source: "delay.l1", Destination: "delay.level-0", DestinationType: "queue", RoutingKey: "#"},
			{Source: "delay.l2", Destination: "delay.level-1", DestinationType: "queue", RoutingKey: "#"},
			{Source: "delay.l4", Destination: "delay.level-2", DestinationType: "queue", RoutingKey: "#"},
			{Source: "delay.l4", Destination: "delay.level-3", DestinationType: "queue", RoutingKey: "#.audit"},
			{Source: "delay.out", Destination: "orders", DestinationType: "queue", RoutingKey: "#.orders"},
			{Source: "delay.out", Destination: "billing", DestinationType: "queue", RoutingKey: "#.billing"},
			{Source: "delay.out", Destination: "audit", DestinationType: "queue", RoutingKey: "#.audit"},
		},
	}
	got := Discover(v)
	var mains []string
	levels := map[string][]retry.DelayLevel{}
	for _, l := range got {
		mains = append(mains, l.Main)
		if len(l.Delays) != 1 || len(l.Delays[0].Queues) != 5 {
			t.Errorf("%s: delays %+v, want one chain of the 5 levels", l.Main, l.Delays)
			continue
		}
		levels[l.Main] = l.Delays[0].Levels
	}
	if want := []string{"audit", "billing", "orders"}; !reflect.DeepEqual(mains, want) {
		t.Fatalf("mains %q, want %q: the levels are no ladders of their own", mains, want)
	}
	lv := func(q string, s int) retry.DelayLevel {
		return retry.DelayLevel{Queue: q, TTL: time.Duration(s) * time.Second}
	}
	all := []retry.DelayLevel{lv("delay.level-0", 1), lv("delay.level-1", 2), lv("delay.level-2", 4), lv("delay.level-4", 16)}
	want := map[string][]retry.DelayLevel{"orders": all, "billing": all,
		"audit": {lv("delay.level-0", 1), lv("delay.level-1", 2), lv("delay.level-2", 4), lv("delay.level-3", 8), lv("delay.level-4", 16)}}
	if !reflect.DeepEqual(levels, want) {
		t.Errorf("levels =\n%+v\nwant\n%+v", levels, want)
	}
}

// By routing key the graph sees the sharing itself: a wait queue whose dead
// letters keep their keys, through an exchange routing each back to its
// queue, is a wait queue in each of those queues' ladders and no main.
func TestDiscoverSharedWaitByRoutingKey(t *testing.T) {
	v := &Vhost{Name: "/", Exchanges: []Exchange{{Name: "retry.back", Type: ExchangeTopic}},
		Queues: []Queue{
			{Name: "retry.wait", Arguments: map[string]any{"x-dead-letter-exchange": "retry.back"}},
			{Name: "orders", Consumers: 1}, {Name: "billing", Consumers: 1},
		},
		Bindings: []Binding{{Source: "retry.back", Destination: "orders", DestinationType: "queue", RoutingKey: "orders.#"},
			{Source: "retry.back", Destination: "billing", DestinationType: "queue", RoutingKey: "billing.#"}},
	}
	got := Discover(v)
	var mains []string
	for _, l := range got {
		mains = append(mains, l.Main)
		if !reflect.DeepEqual(l.WaitQueues, []string{"retry.wait"}) {
			t.Errorf("%s: wait queues %q, want [retry.wait]", l.Main, l.WaitQueues)
		}
	}
	if !reflect.DeepEqual(mains, []string{"billing", "orders"}) {
		t.Errorf("mains %q, want billing and orders", mains)
	}
}
