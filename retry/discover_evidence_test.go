package retry

import (
	"reflect"
	"slices"
	"testing"
)

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
			findings: []string{"error stuck billing.second", "warning no-dlq billing"},
		},
		{
			name: "loop: x-death says where messages were rejected, over the name guess",
			v:    func() *Vhost { return seen(loop("billing", "billing.second"), "billing.second", Seen{Rejected: true}) },
			main: "billing.second", wait: "billing",
			inferred: []string{base("billing"), "x-death: messages were rejected in billing.second, not in billing"},
			findings: []string{"error stuck billing", "warning no-dlq billing.second"},
		},
		{
			name: "loop: per-message expiration seen on one side, over the name guess",
			v:    func() *Vhost { return seen(loop("billing", "billing.second"), "billing", Seen{Expiration: true}) },
			main: "billing.second", wait: "billing",
			inferred: []string{base("billing"), "messages seen: per-message expiration in billing, not in billing.second"},
			findings: []string{"error stuck billing", "warning no-dlq billing.second"},
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
			findings: []string{"error stuck a", "warning no-dlq b"},
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
			findings: []string{"error stuck pay", "warning no-dlq pay.retry"},
		},
		{
			name: "loop: names over the shorter-name guess",
			v:    func() *Vhost { return loop("zz.retry", "worker.main") },
			main: "worker.main", wait: "zz.retry",
			inferred: []string{base("zz.retry"), "names: zz.retry reads as a wait queue"},
			findings: []string{"error stuck zz.retry", "warning no-dlq worker.main"},
		},
		{
			name: "loop: a queue TTL over everything: the TTL side is a tier",
			v: func() *Vhost {
				v := loop("a", "b")
				seedQueue(v, "a").Arguments["x-message-ttl"] = int32(5000)
				return seen(v, "b", Seen{Expiration: true})
			},
			main: "b",
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
			inferred: []string{base("orders.incoming"), "a guess: nothing tells orders.incoming and orders.process apart; orders.incoming dead-letters into orders.process, which does not send back, so it is taken as its wait queue"},
			findings: []string{"warning hol-risk orders.incoming", "warning no-dlq orders.process"},
		},
		{
			name: "x-death says messages are rejected in it: a work queue and its DLQ",
			v: func() *Vhost {
				return &Vhost{Queues: []Queue{
					{Name: "orders.incoming", Ready: 2, Messages: 2, Seen: Seen{Rejected: true}, Arguments: dl("orders.process")},
					{Name: "orders.process", Ready: 2},
				}}
			},
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
			name: "a DLQ name with nothing else: no ladder",
			v: func() *Vhost {
				return &Vhost{Queues: []Queue{
					{Name: "orders", Ready: 2, Messages: 2, Arguments: dl("orders.rejected")},
					{Name: "orders.rejected", Ready: 2},
				}}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first []Ladder
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
				if first == nil {
					first = ls
					switch {
					case tt.main == "" && len(ls) != 0:
						t.Fatalf("ladders %+v, want none", ls)
					case tt.main == "":
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
					case f.Code == CodeNoConsumers && f.Queue != tt.main:
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

func TestVhostObserve(t *testing.T) {
	v := &Vhost{Queues: []Queue{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}}
	v.Observe("a", true, nil)
	v.Observe("b", false, []Death{
		{Queue: "c", Reason: ReasonRejected, HasOriginalExpiration: true}, // expiration it had in c says nothing of waiting
		{Queue: "d", Reason: ReasonExpired},
		{Queue: "gone", Reason: ReasonExpired},
		{Queue: "b", Reason: ReasonMaxlen},
	})
	v.Observe("d", false, []Death{{Queue: "c", Reason: ReasonDeliveryLimit}})
	got := map[string]Seen{}
	for _, q := range v.Queues {
		got[q.Name] = q.Seen
	}
	want := map[string]Seen{"a": {Expiration: true}, "b": {}, "c": {Rejected: true}, "d": {Expiration: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("seen = %+v, want %+v", got, want)
	}
}
