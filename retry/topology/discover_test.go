package topology

import (
	"fmt"
	"github.com/ladder-tui/ladder/retry"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDiscoverSeeds(t *testing.T) {
	goTiers := []retry.Tier{
		{Queue: "orders.wait.5s", TTL: 5 * time.Second, ReturnExchange: "orders.topic", KeepsRoutingKey: true},
		{Queue: "orders.wait.30s", TTL: 30 * time.Second, ReturnExchange: "orders.topic", KeepsRoutingKey: true},
		{Queue: "orders.wait.5m", TTL: 5 * time.Minute, ReturnExchange: "orders.topic", KeepsRoutingKey: true},
	}
	var phpTiers []retry.Tier
	for _, ms := range []int64{60000, 61234, 118007, 120000, 240000} {
		phpTiers = append(phpTiers, retry.Tier{Queue: fmt.Sprintf("enqueue.queue.%d.delayed", ms),
			TTL: time.Duration(ms) * time.Millisecond, ReturnExchange: "", ReturnRoutingKey: "queue"})
	}
	tests := []struct {
		name string
		v    *Vhost
		want []retry.Ladder
	}{
		{"go", seedGo(), []retry.Ladder{{
			Main:             "orders.process",
			Tiers:            goTiers,
			DelayedExchanges: []retry.DelayedExchange{{Name: "orders.delayed", MessagesDelayed: 7}},
			DLQ:              "orders.dlq",
		}}},
		{"php", seedPHP(5), []retry.Ladder{{Main: "queue", Tiers: phpTiers}}},
		{"python: broken return still a ladder", seedPython(), []retry.Ladder{{
			Main: "main_queue",
			Tiers: []retry.Tier{{Queue: "retry_queue", TTL: time.Minute, ReturnExchange: "",
				ReturnRoutingKey: "main"}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Discover(tt.v); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Discover =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// merge puts several vhosts' objects in one.
func merge(vs ...*Vhost) *Vhost {
	out := &Vhost{Name: "/"}
	for _, v := range vs {
		out.Queues = append(out.Queues, v.Queues...)
		out.Exchanges = append(out.Exchanges, v.Exchanges...)
		out.Bindings = append(out.Bindings, v.Bindings...)
	}
	return out
}

func TestDiscoverAllSeedsTogetherSortedByMain(t *testing.T) {
	got := Discover(merge(seedPython(), seedGo(), seedPHP(3)))
	var mains []string
	for _, l := range got {
		mains = append(mains, l.Main)
	}
	if want := []string{"main_queue", "orders.process", "queue"}; !reflect.DeepEqual(mains, want) {
		t.Errorf("mains = %v, want %v", mains, want)
	}
}

func TestDiscoverShapes(t *testing.T) {
	q := func(name string, consumers int, args map[string]any) Queue {
		return Queue{Name: name, Type: QueueClassic, Consumers: consumers, Arguments: args}
	}
	bind := func(src, dst, key string) Binding {
		return Binding{Source: src, Destination: dst, DestinationType: "queue", RoutingKey: key}
	}
	dlx := func(x string) map[string]any { return map[string]any{"x-dead-letter-exchange": x} }
	tierArgs := func(ms int32, x string) map[string]any {
		return map[string]any{"x-message-ttl": ms, "x-dead-letter-exchange": x}
	}
	tests := []struct {
		name string
		v    *Vhost
		want []retry.Ladder
	}{
		{
			// The engineer sees which DLQ belongs to which service; the
			// retries, if any, happen in the consumer.
			name: "plain queue with a DLQ is a ladder with its retries in the consumer",
			v: &Vhost{
				Queues:    []Queue{q("emails", 2, dlx("dlx")), q("emails.dlq", 0, nil)},
				Exchanges: []Exchange{{Name: "dlx", Type: ExchangeFanout}},
				Bindings:  []Binding{bind("dlx", "emails.dlq", "")},
			},
			want: []retry.Ladder{{Main: "emails", DLQ: "emails.dlq", RetriesInConsumer: true}},
		},
		{
			name: "main's dead letters go to the tier, which returns: no DLQ",
			v: &Vhost{
				Queues: []Queue{q("work", 1, dlx("retry")), q("work.wait", 0, tierArgs(10000, "main"))},
				Exchanges: []Exchange{
					{Name: "main", Type: ExchangeDirect}, {Name: "retry", Type: ExchangeFanout},
				},
				Bindings: []Binding{bind("main", "work", "work"), bind("retry", "work.wait", "")},
			},
			want: []retry.Ladder{{Main: "work", Tiers: []retry.Tier{{Queue: "work.wait", TTL: 10 * time.Second,
				ReturnExchange: "main", KeepsRoutingKey: true}}}},
		},
		{
			name: "consumed queue with a TTL expiring into its DLQ is not a tier",
			v: &Vhost{
				Queues:    []Queue{q("fresh", 3, tierArgs(3600000, "dlx")), q("fresh.dlq", 0, nil)},
				Exchanges: []Exchange{{Name: "dlx", Type: ExchangeFanout}},
				Bindings:  []Binding{bind("dlx", "fresh.dlq", "")},
			},
			want: []retry.Ladder{{Main: "fresh", DLQ: "fresh.dlq", RetriesInConsumer: true}},
		},
		{
			name: "main with its own TTL is not a tier of its DLQ even with workers down",
			v: &Vhost{
				Queues: []Queue{
					q("jobs", 0, map[string]any{"x-message-ttl": int32(86400000), "x-dead-letter-exchange": "dlx"}),
					q("jobs.wait", 0, tierArgs(5000, "jobs.x")),
					q("jobs.dlq", 0, nil),
				},
				Exchanges: []Exchange{{Name: "dlx", Type: ExchangeFanout}, {Name: "jobs.x", Type: ExchangeDirect}},
				Bindings:  []Binding{bind("dlx", "jobs.dlq", ""), bind("jobs.x", "jobs", "jobs")},
			},
			want: []retry.Ladder{{Main: "jobs", Tiers: []retry.Tier{{Queue: "jobs.wait", TTL: 5 * time.Second,
				ReturnExchange: "jobs.x", KeepsRoutingKey: true}}, DLQ: "jobs.dlq"}},
		},
		{
			name: "delayed exchange alone makes a ladder; DLQ with retention TTL counts",
			v: &Vhost{
				Queues: []Queue{q("mail", 1, dlx("dlx")),
					q("mail.dlq", 0, map[string]any{"x-message-ttl": int64(604800000)})},
				Exchanges: []Exchange{
					{Name: "dlx", Type: ExchangeFanout},
					{Name: "mail.delay", Type: ExchangeDelayed, MessagesDelayed: -1, Arguments: map[string]any{"x-delayed-type": "direct"}},
				},
				Bindings: []Binding{bind("dlx", "mail.dlq", ""), bind("mail.delay", "mail", "mail")},
			},
			want: []retry.Ladder{{Main: "mail", DelayedExchanges: []retry.DelayedExchange{{Name: "mail.delay", MessagesDelayed: -1}}, DLQ: "mail.dlq"}},
		},
		{
			name: "DLQ prefers a queue without TTL; looks through a forwarding TTL queue",
			v: &Vhost{
				Queues: []Queue{
					q("a", 1, dlx("a.dlx")),
					q("a.wait", 0, tierArgs(1000, "a.in")),
					q("a.park", 0, tierArgs(60000, "archive")), // waits, then forwards elsewhere
					q("a.archive", 0, nil),
				},
				Exchanges: []Exchange{
					{Name: "a.in", Type: ExchangeDirect}, {Name: "a.dlx", Type: ExchangeFanout},
					{Name: "archive", Type: ExchangeFanout},
				},
				Bindings: []Binding{bind("a.in", "a", "a"), bind("a.dlx", "a.park", ""), bind("archive", "a.archive", "")},
			},
			want: []retry.Ladder{{Main: "a", Tiers: []retry.Tier{{Queue: "a.wait", TTL: time.Second, ReturnExchange: "a.in",
				KeepsRoutingKey: true}}, DLQ: "a.archive"}},
		},
		{
			name: "per-message wait queue (no TTL, no consumers) makes an active main a ladder",
			v: &Vhost{
				Queues:    []Queue{q("pay", 2, dlx("pay.dlx")), q("pay.delay", 0, dlx("pay.in")), q("pay.dlq", 0, nil)},
				Exchanges: []Exchange{{Name: "pay.in", Type: ExchangeDirect}, {Name: "pay.dlx", Type: ExchangeFanout}},
				Bindings:  []Binding{bind("pay.in", "pay", "pay"), bind("pay.dlx", "pay.dlq", "")},
			},
			want: []retry.Ladder{{Main: "pay", WaitQueues: []string{"pay.delay"}, DLQ: "pay.dlq", InferredFrom: []string{
				"pay.delay: no queue TTL: messages leave it only by per-message expiration", "pay dead-letters onward, so it is not pay.delay's DLQ"}}},
		},
		{
			name: "queue with workers down dead-lettering into a DLQ does not make the DLQ a main",
			v: &Vhost{
				Queues:    []Queue{q("emails", 0, dlx("dlx")), q("emails.dlq", 1, nil)},
				Exchanges: []Exchange{{Name: "dlx", Type: ExchangeFanout}},
				Bindings:  []Binding{bind("dlx", "emails.dlq", "")},
			},
			want: []retry.Ladder{{Main: "emails", DLQ: "emails.dlq", RetriesInConsumer: true}},
		},
		{
			name: "stuck loop: main → wait queue without TTL → main",
			v: &Vhost{
				Queues:    []Queue{q("s", 1, dlx("s.wait.x")), q("s.wait", 0, dlx("s.in"))},
				Exchanges: []Exchange{{Name: "s.in", Type: ExchangeDirect}, {Name: "s.wait.x", Type: ExchangeFanout}},
				Bindings:  []Binding{bind("s.in", "s", "s"), bind("s.wait.x", "s.wait", "")},
			},
			want: []retry.Ladder{{Main: "s", WaitQueues: []string{"s.wait"}, InferredFrom: []string{
				"s.wait: no queue TTL: messages leave it only by per-message expiration", "names: s.wait reads as a wait queue"}}},
		},
		{
			name: "tier returning through an exchange-to-exchange binding",
			v: &Vhost{
				Queues: []Queue{q("m", 1, nil), q("m.wait", 0, tierArgs(2000, "front"))},
				Exchanges: []Exchange{
					{Name: "front", Type: ExchangeTopic}, {Name: "back", Type: ExchangeDirect},
				},
				Bindings: []Binding{
					{Source: "front", Destination: "back", DestinationType: "exchange", RoutingKey: "#"},
					{Source: "back", Destination: "front", DestinationType: "exchange", RoutingKey: "loop"},
					bind("back", "m", "m"),
				},
			},
			want: []retry.Ladder{{Main: "m", Tiers: []retry.Tier{{Queue: "m.wait", TTL: 2 * time.Second, ReturnExchange: "front", KeepsRoutingKey: true}}}},
		},
		{
			name: "policy-defined tiers",
			v: &Vhost{
				Queues: []Queue{q("p", 1, nil), {Name: "p.wait", Type: QueueQuorum,
					Policy: map[string]any{"message-ttl": float64(15000), "dead-letter-exchange": "", "dead-letter-routing-key": "p"}}},
			},
			want: []retry.Ladder{{Main: "p", Tiers: []retry.Tier{{Queue: "p.wait", TTL: 15 * time.Second, ReturnRoutingKey: "p"}}}},
		},
		{
			name: "shared return exchange: the tier may reach both mains",
			v: &Vhost{
				Queues:    []Queue{q("x1", 1, nil), q("x2", 1, nil), q("shared.wait", 0, tierArgs(1000, "bus"))},
				Exchanges: []Exchange{{Name: "bus", Type: ExchangeTopic}},
				Bindings:  []Binding{bind("bus", "x1", "x1.#"), bind("bus", "x2", "x2.#")},
			},
			want: []retry.Ladder{
				{Main: "x1", Tiers: []retry.Tier{{Queue: "shared.wait", TTL: time.Second, ReturnExchange: "bus", KeepsRoutingKey: true}}},
				{Main: "x2", Tiers: []retry.Tier{{Queue: "shared.wait", TTL: time.Second, ReturnExchange: "bus", KeepsRoutingKey: true}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Discover(tt.v); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Discover =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestDiscoverTierOrderByTTLThenName(t *testing.T) {
	v := seedGo()
	// Same TTL as the 5s tier: name breaks the tie; shorter TTL goes first.
	v.Queues = append(v.Queues,
		Queue{Name: "orders.wait.4s", Arguments: map[string]any{"x-message-ttl": float64(5000), "x-dead-letter-exchange": "orders.topic"}},
		Queue{Name: "orders.wait.1s", Arguments: map[string]any{"x-message-ttl": uint16(1000), "x-dead-letter-exchange": "orders.topic"}},
	)
	l := Discover(v)[0]
	var got []string
	for _, tr := range l.Tiers {
		got = append(got, tr.Queue)
	}
	want := []string{"orders.wait.1s", "orders.wait.4s", "orders.wait.5s", "orders.wait.30s", "orders.wait.5m"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tiers = %v, want %v", got, want)
	}
}

func TestDiscoverDuplicateQueueNamesCountOnce(t *testing.T) {
	v := seedGo()
	v.Queues = append(v.Queues, *seedQueue(v, "orders.process"))
	if got := Discover(v); len(got) != 1 {
		t.Errorf("got %d ladders, want 1", len(got))
	}
}

// benchVhost builds n ladders of 5 queues (main, 3 tiers, DLQ) with
// realistic bindings: each service has a topic main exchange, a direct retry
// exchange and a fanout DLX; every fourth also a delayed exchange, every
// fifth is enqueue-style (default-exchange returns). A few shared exchanges
// (an audit topic and a global alternate exchange) add bindings to walk.
func benchVhost(n int) *Vhost {
	v := &Vhost{Name: "bench"}
	v.Exchanges = append(v.Exchanges,
		Exchange{Name: "audit", Type: ExchangeTopic, Arguments: map[string]any{"alternate-exchange": "unrouted"}},
		Exchange{Name: "unrouted", Type: ExchangeFanout})
	v.Queues = append(v.Queues, Queue{Name: "unrouted.q", Consumers: 1})
	v.Bindings = append(v.Bindings, Binding{Source: "unrouted", Destination: "unrouted.q", DestinationType: "queue"})
	for i := range n {
		svc := fmt.Sprintf("svc%03d", i)
		main, topic, retry, dlx := svc+".process", svc+".topic", svc+".retry", svc+".dlx"
		v.Exchanges = append(v.Exchanges,
			Exchange{Name: topic, Type: ExchangeTopic}, Exchange{Name: retry, Type: ExchangeDirect},
			Exchange{Name: dlx, Type: ExchangeFanout})
		v.Bindings = append(v.Bindings,
			Binding{Source: topic, Destination: main, DestinationType: "queue", RoutingKey: svc + ".#"},
			Binding{Source: "audit", Destination: topic, DestinationType: "exchange", RoutingKey: svc + ".*.created"},
			Binding{Source: dlx, Destination: svc + ".dlq", DestinationType: "queue"})
		v.Queues = append(v.Queues,
			Queue{Name: main, Type: QueueQuorum, Consumers: 3, Messages: int64(i),
				Arguments: map[string]any{"x-dead-letter-exchange": dlx, "x-queue-type": "quorum"},
				Policy:    map[string]any{"delivery-limit": float64(20)}},
			Queue{Name: svc + ".dlq", Type: QueueClassic})
		if i%4 == 0 {
			dx := svc + ".delayed"
			v.Exchanges = append(v.Exchanges, Exchange{Name: dx, Type: ExchangeDelayed, MessagesDelayed: int64(i),
				Arguments: map[string]any{"x-delayed-type": "topic"}})
			v.Bindings = append(v.Bindings, Binding{Source: dx, Destination: main, DestinationType: "queue", RoutingKey: svc + ".#"})
		}
		for k, ms := range []int32{5000, 30000, 300000} {
			tier := fmt.Sprintf("%s.wait.%d", svc, k)
			args := map[string]any{"x-message-ttl": ms, "x-dead-letter-exchange": topic}
			if i%5 == 0 {
				args = map[string]any{"x-message-ttl": ms, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": main}
			}
			v.Queues = append(v.Queues, Queue{Name: tier, Type: QueueClassic, Arguments: args})
			v.Bindings = append(v.Bindings, Binding{Source: retry, Destination: tier, DestinationType: "queue", RoutingKey: tier})
		}
	}
	return v
}

func TestBenchVhostShape(t *testing.T) {
	v := benchVhost(400)
	if len(v.Queues) != 2001 {
		t.Fatalf("%d queues", len(v.Queues))
	}
	ls := Discover(v)
	if len(ls) != 400 {
		t.Fatalf("%d ladders, want 400", len(ls))
	}
	for _, l := range ls {
		if len(l.Tiers) != 3 || l.DLQ == "" {
			t.Fatalf("ladder %+v", l)
		}
	}
}

func BenchmarkDiscover2000(b *testing.B) {
	v := benchVhost(400)
	b.ReportAllocs()
	for b.Loop() {
		if ls := Discover(v); len(ls) != 400 {
			b.Fatal(len(ls))
		}
	}
}

func BenchmarkFindings2000(b *testing.B) {
	v := benchVhost(400)
	ls := Discover(v)
	b.ReportAllocs()
	for b.Loop() {
		Findings(v, ls)
	}
}

// The shapes people run, each with its consumers attached and with the
// workers down: the same ladders and the same findings either way.
func TestDiscoverShapesWithAndWithoutConsumers(t *testing.T) {
	bind := func(src, dst, key string) Binding {
		return Binding{Source: src, Destination: dst, DestinationType: "queue", RoutingKey: key}
	}
	type shape struct {
		name      string
		v         func(workers int) *Vhost
		main      string
		wait      []string
		dlq       string
		findings  []string // severity code queue, sorted as Findings sorts
		noLadders bool
	}
	shapes := []shape{
		{
			name: "standalone delay queue written to straight, work queue with no DLX",
			v: func(workers int) *Vhost {
				return &Vhost{Queues: []Queue{
					{Name: "jobs.delay", Messages: 40, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs"}},
					{Name: "jobs", Consumers: workers, Ready: 3},
				}}
			},
			main: "jobs", wait: []string{"jobs.delay"},
			findings: []string{"warning no-dlq jobs", "warning hol-risk jobs.delay"},
		},
		{
			name: "standalone delay queue behind an exchange, work queue with a DLQ",
			v: func(workers int) *Vhost {
				return &Vhost{
					Queues: []Queue{
						{Name: "mail.later", Arguments: map[string]any{"x-dead-letter-exchange": "mail"}},
						{Name: "mail", Consumers: workers, Arguments: map[string]any{"x-dead-letter-exchange": "mail.dlx"}},
						{Name: "mail.dlq"},
					},
					Exchanges: []Exchange{{Name: "mail", Type: ExchangeDirect}, {Name: "mail.dlx", Type: ExchangeFanout}, {Name: "delays", Type: ExchangeFanout}},
					Bindings:  []Binding{bind("mail", "mail", "mail"), bind("mail.dlx", "mail.dlq", ""), bind("delays", "mail.later", "")},
				}
			},
			main: "mail", wait: []string{"mail.later"}, dlq: "mail.dlq",
			findings: []string{"warning hol-risk mail.later"},
		},
		{
			name: "a cycle with a TTL-less retry queue",
			v: func(workers int) *Vhost {
				return &Vhost{
					Queues: []Queue{
						{Name: "billing", Consumers: workers, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "billing.retry"}},
						{Name: "billing.retry", Messages: 12, Arguments: map[string]any{"x-dead-letter-exchange": "billing.in"}},
					},
					Exchanges: []Exchange{{Name: "billing.in", Type: ExchangeDirect}, {Name: "events", Type: ExchangeTopic}},
					Bindings:  []Binding{bind("billing.in", "billing", "billing"), bind("events", "billing", "billing.#")},
				}
			},
			main: "billing", wait: []string{"billing.retry"},
			findings: []string{"warning no-dlq billing", "warning stuck billing.retry"},
		},
		{
			name: "a cycle told apart by publishers' exchanges alone",
			v: func(workers int) *Vhost {
				return &Vhost{
					Queues: []Queue{
						{Name: "a", Consumers: workers, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "b"}},
						{Name: "b", Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "a"}},
					},
					Exchanges: []Exchange{{Name: "front", Type: ExchangeDirect}},
					Bindings:  []Binding{bind("front", "a", "a")},
				}
			},
			main: "a", wait: []string{"b"},
			findings: []string{"warning no-dlq a", "warning stuck b"},
		},
		{
			name: "a work queue and its DLQ are one ladder, workers or not",
			v: func(workers int) *Vhost {
				return &Vhost{
					Queues: []Queue{
						{Name: "orders", Consumers: workers, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"}},
						{Name: "orders.dlq", Messages: 5},
					},
				}
			},
			main: "orders", dlq: "orders.dlq",
		},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			for _, workers := range []int{1, 0} {
				v := sh.v(workers)
				ls := Discover(v)
				if sh.noLadders {
					if len(ls) != 0 {
						t.Fatalf("workers=%d: ladders %+v, want none", workers, ls)
					}
					continue
				}
				if len(ls) != 1 || ls[0].Main != sh.main || !reflect.DeepEqual(ls[0].WaitQueues, sh.wait) || ls[0].DLQ != sh.dlq {
					t.Fatalf("workers=%d: ladders %+v, want main %s wait %v dlq %q", workers, ls, sh.main, sh.wait, sh.dlq)
				}
				if len(ls[0].InferredFrom) == 0 && len(sh.wait) > 0 {
					t.Errorf("workers=%d: a guessed wait queue says nothing of how: %+v", workers, ls[0])
				}
				var got []string
				for _, f := range Findings(v, ls) {
					if f.Code != CodeNoConsumers { // runtime: only with the workers down
						got = append(got, string(f.Severity)+" "+f.Code+" "+f.Queue)
					}
				}
				if !reflect.DeepEqual(got, sh.findings) {
					t.Errorf("workers=%d: findings %q, want %q", workers, got, sh.findings)
				}
			}
		})
	}
}

// Which side of a TTL-less dead-letter route waits, rule by rule. Every
// case runs with no consumer, one on the main, one on the wait queue and
// both: consumers never change the ladders, nor any finding but the
// runtime ones (no-consumers on the main, wait-queue-consumers).
func TestDiscoverWaitSideFromEvidenceNotConsumers(t *testing.T) {
	dl := func(key string) map[string]any {
		return map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": key}
	}
	bind := func(src, dst string) Binding {
		return Binding{Source: src, Destination: dst, DestinationType: "queue", RoutingKey: dst}
	}
	type tc struct {
		name string
		v    func() *Vhost
		// main and wait ("" main: no ladder); the two queues consumers attach to.
		main, wait string
		inferred   []string
		findings   []string // topology findings, runtime ones left out
		// consumersConfirm: nothing but consumers tells the sides apart, so
		// a consumer on the wait side makes it a work queue (a ladder of its
		// own whose DLQ is the other queue).
		consumersConfirm bool
		// deadEnd: with no wait queue, the first queue is a ladder whose
		// failures end in the second (its retries in the consumer).
		deadEnd [2]string
	}
	loop := func(a, b string) *Vhost {
		return &Vhost{Queues: []Queue{
			{Name: a, Ready: 2, Messages: 2, Arguments: dl(b)},
			{Name: b, Ready: 2, Messages: 2, Arguments: dl(a)},
		}}
	}
	seen := func(v *Vhost, q string, s Seen) *Vhost { seedQueue(v, q).Seen = s; return v }
	base := func(w string) string { return w + ": no queue TTL: messages leave it only by per-message expiration" }
	tests := []tc{
		{
			name: "loop nothing tells apart: the shorter name is the work queue",
			v:    func() *Vhost { return loop("billing.second", "billing") },
			main: "billing", wait: "billing.second",
			inferred: []string{base("billing.second"), "a guess: nothing in the loop tells billing and billing.second apart; billing, the shorter name, is taken as the work queue"},
			findings: []string{"warning no-dlq billing", "warning stuck billing.second"},
		},
		{
			name: "loop nothing tells apart, names as long: the first by name",
			v:    func() *Vhost { return loop("q2", "q1") },
			main: "q1", wait: "q2",
			inferred: []string{base("q2"), "a guess: nothing in the loop tells q1 and q2 apart; q1, the first by name, is taken as the work queue"},
			findings: []string{"warning no-dlq q1", "warning stuck q2"},
		},
		{
			name: "loop: x-death says where messages were rejected, over the name guess",
			v:    func() *Vhost { return seen(loop("billing", "billing.second"), "billing.second", Seen{Rejected: true}) },
			main: "billing.second", wait: "billing",
			inferred: []string{base("billing"), "x-death: messages were rejected in billing.second, not in billing"},
			findings: []string{"warning stuck billing", "warning no-dlq billing.second"},
		},
		{
			name: "loop: per-message expiration seen on one side, over the name guess",
			v:    func() *Vhost { return seen(loop("billing", "billing.second"), "billing", Seen{Expiration: true}) },
			main: "billing.second", wait: "billing",
			inferred: []string{base("billing"), "messages seen: per-message expiration in billing, not in billing.second"},
			findings: []string{"warning hol-risk billing", "warning no-dlq billing.second"},
		},
		{
			name: "loop: evidence from messages over publishers' exchanges",
			v: func() *Vhost {
				v := loop("a", "b")
				v.Exchanges = []Exchange{{Name: "front", Type: ExchangeDirect}}
				v.Bindings = []Binding{bind("front", "a")}
				return seen(v, "b", Seen{Rejected: true})
			},
			main: "b", wait: "a",
			inferred: []string{base("a"), "x-death: messages were rejected in b, not in a"},
			findings: []string{"warning stuck a", "warning no-dlq b"},
		},
		{
			name: "loop: publishers' exchanges over names",
			v: func() *Vhost {
				v := loop("pay", "pay.retry")
				v.Exchanges = []Exchange{{Name: "front", Type: ExchangeDirect}}
				v.Bindings = []Binding{bind("front", "pay.retry")}
				return v
			},
			main: "pay.retry", wait: "pay",
			inferred: []string{base("pay"), "a loop: publishers' exchanges feed pay.retry, not pay"},
			findings: []string{"warning stuck pay", "warning no-dlq pay.retry"},
		},
		{
			name: "loop: names over the shorter-name guess",
			v:    func() *Vhost { return loop("zz.retry", "worker.main") },
			main: "worker.main", wait: "zz.retry",
			inferred: []string{base("zz.retry"), "names: zz.retry reads as a wait queue"},
			findings: []string{"warning no-dlq worker.main", "warning stuck zz.retry"},
		},
		{
			name: "loop: a queue TTL over everything: the TTL side is a tier",
			v: func() *Vhost {
				v := loop("a", "b")
				seedQueue(v, "a").Arguments["x-message-ttl"] = int32(5000)
				return seen(v, "b", Seen{Expiration: true})
			},
			main:     "b",
			findings: []string{"warning no-dlq b"},
		},
		{
			name: "standalone delay queue, neutral names, work queue with no DLX",
			v: func() *Vhost {
				return &Vhost{Queues: []Queue{
					{Name: "orders.incoming", Ready: 2, Messages: 2, Arguments: dl("orders.process")},
					{Name: "orders.process", Ready: 2},
				}}
			},
			main: "orders.process", wait: "orders.incoming",
			inferred:         []string{base("orders.incoming"), "a guess: nothing tells orders.incoming and orders.process apart and nothing consumes orders.incoming; it dead-letters into orders.process, which does not send back, so it is taken as its wait queue"},
			findings:         []string{"warning hol-risk orders.incoming", "warning no-dlq orders.process"},
			consumersConfirm: true,
		},
		{
			name: "x-death says messages are rejected in it: a work queue and its DLQ",
			v: func() *Vhost {
				return &Vhost{Queues: []Queue{
					{Name: "orders.incoming", Ready: 2, Messages: 2, Seen: Seen{Rejected: true}, Arguments: dl("orders.process")},
					{Name: "orders.process", Ready: 2},
				}}
			},
			deadEnd: [2]string{"orders.incoming", "orders.process"},
		},
		{
			name: "per-message expiration seen over a DLQ-like name",
			v: func() *Vhost {
				return &Vhost{Queues: []Queue{
					{Name: "a", Ready: 2, Messages: 2, Seen: Seen{Expiration: true}, Arguments: dl("a.dead")},
					{Name: "a.dead", Ready: 2},
				}}
			},
			main: "a.dead", wait: "a",
			inferred: []string{base("a"), "messages seen: per-message expiration in a"},
			findings: []string{"warning hol-risk a", "warning no-dlq a.dead"},
		},
		{
			name: "publishers feed the target, not the source: over a DLQ-like name",
			v: func() *Vhost {
				return &Vhost{
					Queues: []Queue{
						{Name: "x.failed", Ready: 2, Messages: 2, Arguments: dl("x")},
						{Name: "x", Ready: 2},
					},
					Exchanges: []Exchange{{Name: "front", Type: ExchangeDirect}},
					Bindings:  []Binding{bind("front", "x")},
				}
			},
			main: "x", wait: "x.failed",
			inferred: []string{base("x.failed"), "publishers' exchanges feed x, not x.failed: it is a work queue, not x.failed's DLQ"},
			findings: []string{"warning no-dlq x", "warning hol-risk x.failed"},
		},
		{
			name: "a DLQ name with nothing else: a ladder into it",
			v: func() *Vhost {
				return &Vhost{Queues: []Queue{
					{Name: "orders", Ready: 2, Messages: 2, Arguments: dl("orders.rejected")},
					{Name: "orders.rejected", Ready: 2},
				}}
			},
			deadEnd: [2]string{"orders", "orders.rejected"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first []retry.Ladder
			for _, c := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
				v := tt.v()
				var qs []string
				for _, q := range v.Queues {
					qs = append(qs, q.Name)
				}
				onMain, onWait := tt.main, tt.wait
				if tt.main == "" { // no ladder: consume both queues anyway
					onMain, onWait = qs[0], qs[1]
				}
				if onWait == "" {
					onWait = qs[0]
				}
				seedQueue(v, onMain).Consumers = c[0]
				seedQueue(v, onWait).Consumers = c[1]
				ls := Discover(v)
				if tt.consumersConfirm && c[1] > 0 {
					if want := []retry.Ladder{{Main: onWait, DLQ: onMain, RetriesInConsumer: true}}; !reflect.DeepEqual(ls, want) {
						t.Errorf("consumers %v: a consumed %s with nothing else to tell is a work queue; ladders %+v, want %+v", c, onWait, ls, want)
					}
					continue
				}
				if first == nil {
					first = ls
					switch {
					case tt.main == "":
						if want := []retry.Ladder{{Main: tt.deadEnd[0], DLQ: tt.deadEnd[1], RetriesInConsumer: true}}; !reflect.DeepEqual(ls, want) {
							t.Fatalf("ladders %+v, want %+v", ls, want)
						}
					case len(ls) != 1 || ls[0].Main != tt.main || !reflect.DeepEqual(ls[0].InferredFrom, tt.inferred):
						t.Fatalf("ladders %+v, want main %s, inferred %q", ls, tt.main, tt.inferred)
					case tt.wait != "" && !reflect.DeepEqual(ls[0].WaitQueues, []string{tt.wait}):
						t.Fatalf("wait queues %v, want %s", ls[0].WaitQueues, tt.wait)
					}
				} else if !reflect.DeepEqual(ls, first) {
					t.Fatalf("consumers %v on %s/%s changed the ladders:\n%+v\nwas\n%+v", c, onMain, onWait, ls, first)
				}
				var got []string
				for _, f := range Findings(v, ls) {
					switch {
					case f.Code == CodeNoConsumers && f.Queue != tt.main && f.Queue != tt.deadEnd[0]:
						t.Errorf("consumers %v: no-consumers on %s, which is no main", c, f.Queue)
					case f.Code == CodeNoConsumers && c[0] > 0:
						t.Errorf("consumers %v: no-consumers on a consumed main", c)
					case f.Code == CodeWaitQueueConsumers && (tt.main == "" || f.Queue != onWait || c[1] == 0):
						t.Errorf("consumers %v: %s on %s", c, f.Code, f.Queue)
					case f.Code != CodeNoConsumers && f.Code != CodeWaitQueueConsumers:
						got = append(got, string(f.Severity)+" "+f.Code+" "+f.Queue)
					}
				}
				if !reflect.DeepEqual(got, tt.findings) {
					t.Errorf("consumers %v: findings %q, want %q", c, got, tt.findings)
				}
				if tt.main != "" && c[1] > 0 && !slices.ContainsFunc(Findings(v, ls), func(f Finding) bool { return f.Code == CodeWaitQueueConsumers }) {
					t.Errorf("consumers %v: a consumer on wait queue %s is not reported", c, tt.wait)
				}
			}
		})
	}
}

// The commonest topology, a worked queue dead-lettering into a DLQ whose
// name says nothing: while its worker runs it is no wait queue (no hol-risk
// on a healthy main) but a ladder of its own into that DLQ; with nothing
// consuming, the guess says so.
func TestDiscoverConsumedQueueIntoANeutralQueueIsALadderIntoIt(t *testing.T) {
	v := &Vhost{Queues: []Queue{
		{Name: "emails", Consumers: 2, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "emails.archive"}},
		{Name: "emails.archive"},
	}}
	ls := Discover(v)
	if want := []retry.Ladder{{Main: "emails", DLQ: "emails.archive", RetriesInConsumer: true}}; !reflect.DeepEqual(ls, want) {
		t.Fatalf("ladders %+v, want %+v", ls, want)
	}
	for _, f := range Findings(v, ls) {
		if f.Code == CodeHoLRisk {
			t.Errorf("finding %+v on a worked queue", f)
		}
	}
	v.Queues[0].Consumers = 0
	ls = Discover(v)
	if len(ls) != 1 || !strings.Contains(strings.Join(ls[0].InferredFrom, " "), "nothing consumes emails") {
		t.Errorf("worker down: ladders %+v, want the guess, saying so", ls)
	}
}

// A work queue with a TTL expiring stale messages into its DLQ is no tier
// of that DLQ, with its workers running or down: a ladder of its own.
func TestDiscoverTTLQueueIntoADLQIsNoTierWithWorkersDown(t *testing.T) {
	for _, workers := range []int{3, 0} {
		v := &Vhost{Queues: []Queue{
			{Name: "fresh", Consumers: workers, Arguments: map[string]any{"x-message-ttl": int32(3600000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "fresh.dlq"}},
			{Name: "fresh.dlq"},
		}}
		if ls, want := Discover(v), []retry.Ladder{{Main: "fresh", DLQ: "fresh.dlq", RetriesInConsumer: true}}; !reflect.DeepEqual(ls, want) {
			t.Errorf("workers %d: ladders %+v, want %+v", workers, ls, want)
		}
	}
}

func TestVhostObserve(t *testing.T) {
	v := &Vhost{Queues: []Queue{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}}
	v.Observe("a", true, nil)
	v.Observe("b", false, []retry.Death{
		{Queue: "c", Reason: retry.ReasonRejected, HasOriginalExpiration: true}, // expiration it had in c says nothing of waiting
		{Queue: "d", Reason: retry.ReasonExpired},
		{Queue: "gone", Reason: retry.ReasonExpired},
		{Queue: "b", Reason: retry.ReasonMaxlen},
	})
	v.Observe("d", false, []retry.Death{{Queue: "c", Reason: retry.ReasonDeliveryLimit}})
	got := map[string]Seen{}
	for _, q := range v.Queues {
		got[q.Name] = q.Seen
	}
	want := map[string]Seen{"a": {Expiration: true}, "b": {}, "c": {Rejected: true}, "d": {Expiration: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("seen = %+v, want %+v", got, want)
	}
}
