package topology

import (
	"math"
	"testing"
)

// inflowOf runs Inflow on v and returns queue's In, InSource, InKnown.
func inflowOf(v *Vhost, queue string) (float64, string, bool) {
	Inflow(v)
	r := seedQueue(v, queue).Rates
	return r.In, r.InSource, r.InKnown
}

func TestInflow(t *testing.T) {
	// The Go seed: orders.process is fed by publishes and by its tiers'
	// dead letters, orders.dlq only by dead-lettering, the tiers only by
	// publishes (the worker publishes to orders.retry).
	tests := []struct {
		name    string
		queue   string
		tweak   func(v *Vhost)
		want    float64
		source  string
		unknown bool
	}{
		{"a queue fed by publishes only takes its publishes", "orders.wait.30s", func(v *Vhost) {
			q := seedQueue(v, "orders.wait.30s")
			q.Messages = 300 // depth ÷ TTL would say 10/s: not used where publishes see everything
			q.Rates = Rates{Known: true, Publish: 4, Arrived: 9, ArrivedKnown: true}
		}, 4, InFromPublish, false},
		{"without publish counts, its depth-derived arrivals", "orders.wait.30s", func(v *Vhost) {
			seedQueue(v, "orders.wait.30s").Rates = Rates{Arrived: 2.5, ArrivedKnown: true}
		}, 2.5, InFromDepth, false},
		{"a DLQ: its depth-derived arrivals, not its zero publishes", "orders.dlq", func(v *Vhost) {
			seedQueue(v, "orders.dlq").Rates = Rates{Known: true, Publish: 0, Arrived: 4.1, ArrivedKnown: true}
		}, 4.1, InFromDepth, false},
		{"a DLQ with zero publishes and no second poll: unknown", "orders.dlq", func(v *Vhost) {
			seedQueue(v, "orders.dlq").Rates = Rates{Known: true, Publish: 0}
		}, 0, "", true},
		{"a DLQ without any stats and no second poll: unknown", "orders.dlq", func(v *Vhost) {}, 0, "", true},
		{"a main fed back by its tiers: publishes when they exceed what the depth shows", "orders.process", func(v *Vhost) {
			seedQueue(v, "orders.process").Rates = Rates{Known: true, Publish: 50, Arrived: 47, ArrivedKnown: true}
		}, 50, InFromPublish, false},
		{"…and the depth when it shows more (returns are not publishes)", "orders.process", func(v *Vhost) {
			seedQueue(v, "orders.process").Rates = Rates{Known: true, Publish: 50, Arrived: 61, ArrivedKnown: true}
		}, 61, InFromDepth, false},
		{"a main whose publishes are known but no second poll: its publishes", "orders.process", func(v *Vhost) {
			seedQueue(v, "orders.process").Rates = Rates{Known: true, Publish: 50}
		}, 50, InFromPublish, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := seedGo()
			tt.tweak(v)
			in, src, known := inflowOf(v, tt.queue)
			if known == tt.unknown || src != tt.source || math.Abs(in-tt.want) > 1e-9 {
				t.Fatalf("in = %v %q known=%v, want %v %q known=%v", in, src, known, tt.want, tt.source, !tt.unknown)
			}
		})
	}
}

// A tier that main dead-letters into (the Python seed's shape: nack into
// retry_queue, TTL 60 s, back to main) has no publishes and, in a steady
// state, no depth change: its depth ÷ TTL is what arrived over the TTL.
func TestInflowTTLTierFedByDeadLettering(t *testing.T) {
	mk := func() *Vhost {
		return &Vhost{
			Queues: []Queue{
				{Name: "main_queue", Type: QueueClassic, Consumers: 2, Arguments: map[string]any{"x-dead-letter-exchange": "retry_exchange", "x-dead-letter-routing-key": "retry"}},
				{Name: "retry_queue", Type: QueueClassic, Messages: 600, Arguments: map[string]any{"x-message-ttl": int32(60000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "main_queue"},
					Rates: Rates{Known: true, Arrived: 0.5, ArrivedKnown: true}},
			},
			Exchanges: []Exchange{{Name: "", Type: ExchangeDirect}, {Name: "retry_exchange", Type: ExchangeDirect}},
			Bindings:  []Binding{{Source: "retry_exchange", Destination: "retry_queue", DestinationType: "queue", RoutingKey: "retry"}},
		}
	}
	v := mk()
	if in, src, ok := inflowOf(v, "retry_queue"); !ok || src != InFromTTL || in != 10 {
		t.Fatalf("tier: in = %v %q %v, want 10/s from its TTL", in, src, ok)
	}
	// Consumers take messages before their TTL: depth ÷ TTL no longer holds.
	v = mk()
	seedQueue(v, "retry_queue").Consumers = 1
	if in, src, ok := inflowOf(v, "retry_queue"); !ok || src != InFromDepth || in != 0.5 {
		t.Fatalf("consumed tier: in = %v %q %v, want 0.5/s from the depth", in, src, ok)
	}
	// Nor when the broker does not say whether anyone consumes.
	v = mk()
	seedQueue(v, "retry_queue").ConsumersUnknown = true
	if _, src, _ := inflowOf(v, "retry_queue"); src != InFromDepth {
		t.Fatalf("tier with unknown consumers: source %q, want %q", src, InFromDepth)
	}
	// main_queue is fed back by retry_queue: a dead-letter target too.
	v = mk()
	seedQueue(v, "main_queue").Rates = Rates{Known: true, Publish: 0, Arrived: 7, ArrivedKnown: true}
	if in, src, _ := inflowOf(v, "main_queue"); src != InFromDepth || in != 7 {
		t.Fatalf("main: in = %v %q, want 7/s from the depth", in, src)
	}
}

// ladder's own wait queues dead-letter into their targets too.
func TestInflowTargetOfLadderDelayQueue(t *testing.T) {
	v := &Vhost{
		Queues: []Queue{
			{Name: "jobs", Type: QueueClassic, Rates: Rates{Known: true, Publish: 0, Arrived: 3, ArrivedKnown: true}},
			{Name: "ladder.delay.5000.default.jobs.abc", Type: QueueClassic, Arguments: map[string]any{"x-message-ttl": int32(5000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs"}},
		},
		Exchanges: []Exchange{{Name: "", Type: ExchangeDirect}},
	}
	if in, src, _ := inflowOf(v, "jobs"); src != InFromDepth || in != 3 {
		t.Fatalf("in = %v %q, want 3/s from the depth", in, src)
	}
}
