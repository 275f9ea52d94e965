package moveplan

import (
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
	"slices"
	"strings"
	"testing"
	"time"
)

// springGroups is what Spring Cloud Stream's RabbitMQ binder declares for
// destination orders with consumer groups billing and audit (defaults,
// autoBindDlq): topic exchange orders, queues orders.<group> bound with
// "#", dead-lettering to the direct exchange DLX with their own name as key,
// DLQs orders.<group>.dlq bound to DLX by that name
// (RabbitExchangeQueueProvisioner).
func springGroups() *topology.Vhost {
	v := &topology.Vhost{Name: "/", Exchanges: []topology.Exchange{
		{Name: "orders", Type: topology.ExchangeTopic, MessagesDelayed: -1},
		{Name: "DLX", Type: topology.ExchangeDirect, MessagesDelayed: -1},
	}}
	for _, g := range []string{"billing", "audit"} {
		q := "orders." + g
		v.Queues = append(v.Queues,
			topology.Queue{Name: q, Type: topology.QueueClassic, Arguments: map[string]any{"x-dead-letter-exchange": "DLX", "x-dead-letter-routing-key": q}},
			topology.Queue{Name: q + ".dlq", Type: topology.QueueClassic})
		v.Bindings = append(v.Bindings,
			topology.Binding{Source: "orders", Destination: q, DestinationType: "queue", RoutingKey: "#"},
			topology.Binding{Source: "DLX", Destination: q + ".dlq", DestinationType: "queue", RoutingKey: q})
	}
	return v
}

func rejectedIn(queue, exchange string, keys ...string) retry.Headers {
	ks := make([]any, len(keys))
	for i, k := range keys {
		ks[i] = k
	}
	return retry.Headers{"x-death": []any{map[string]any{"count": int64(1), "reason": "rejected", "queue": queue, "exchange": exchange, "routing-keys": ks}}}
}

func springRepublished() retry.Headers {
	return retry.Headers{"x-original-exchange": "orders", "x-original-routingKey": "orders", "x-exception-message": "boom"}
}

func TestFailedInReadsXDeathAndSpringRepublish(t *testing.T) {
	v := springGroups()
	r := topology.NewRouter(v)
	for _, tt := range []struct {
		name string
		h    retry.Headers
		want string
		by   string
	}{
		{"consumer reject", rejectedIn("orders.audit", "orders", "orders"), "orders.audit", "x-death"},
		{"republished by Spring, no x-death", springRepublished(), "orders.audit", "x-original-exchange/x-original-routingKey"},
	} {
		f, ok := failedIn(r, topology.Discover(v), "orders.audit.dlq", tt.h)
		if !ok || f.Queue != tt.want || f.By != tt.by || len(f.Routes) != 1 || f.Routes[0] != (retry.Origin{Exchange: "orders", RoutingKey: "orders"}) {
			t.Errorf("%s: %+v %v, want %s by %s", tt.name, f, ok, tt.want, tt.by)
		}
	}
	// Nothing recorded: only the name says, and the answer says so.
	if f, ok := failedIn(r, topology.Discover(v), "orders.audit.dlq", retry.Headers{}); !ok || f.Queue != "orders.audit" || f.By != "inferred from the name orders.audit.dlq" {
		t.Errorf("nothing recorded: got %+v %v, want orders.audit inferred from the name", f, ok)
	}
}

// A message that went round the Go seed's wait tiers failed in the main
// queue, not in a tier it last expired in.
func TestFailedInLooksPastWaitTiers(t *testing.T) {
	v := seedGo()
	r := topology.NewRouter(v)
	ls := topology.Discover(v)
	tierThenMain := retry.Headers{"x-death": []any{
		map[string]any{"count": int64(2), "reason": "rejected", "queue": "orders.process", "exchange": "orders.topic", "routing-keys": []any{"orders.paid"}},
		map[string]any{"count": int64(1), "reason": "expired", "queue": "orders.wait.5s", "exchange": "orders.retry", "routing-keys": []any{"orders.wait.5s"}},
	}}
	// Last expired in a tier (the worker then took it from the main queue
	// and published it to the DLQ itself): the tier's work queue failed.
	tierLast := retry.Headers{"x-death": []any{
		map[string]any{"count": int64(1), "reason": "expired", "queue": "orders.wait.30s", "exchange": "orders.retry", "routing-keys": []any{"orders.created"}},
	}}
	for name, h := range map[string]retry.Headers{"main then tier": tierThenMain, "tier only": tierLast} {
		f, ok := failedIn(r, ls, "orders.dlq", h)
		if !ok || f.Queue != "orders.process" {
			t.Errorf("%s: failed in %+v %v, want orders.process", name, f, ok)
		}
	}
	f, _ := failedIn(r, ls, "orders.dlq", tierLast)
	if !slices.Contains(f.Routes, retry.Origin{Exchange: "orders.topic", RoutingKey: "orders.created"}) {
		t.Errorf("tier only: routes %v lack the tier's way back (orders.topic, its own key)", f.Routes)
	}
}

// --to origin sends each message back to the queue it failed in and only
// there: Spring's topic exchange routes to every consumer group, so the
// message is published to orders.audit directly, the recorded route kept
// in headers, the note saying why. Both kinds of dead letter alike.
func TestOriginIsTheQueueItFailedInOnly(t *testing.T) {
	v := springGroups()
	for _, h := range []retry.Headers{rejectedIn("orders.audit", "orders", "orders"), springRepublished()} {
		p := mustPlanner(t, v, Spec{From: "orders.audit.dlq", To: Target{Kind: TargetOrigin}})
		r := p.Plan(Message{MessageID: "m", Headers: h})
		if !r.Moves() || r.Exchange != "" || r.RoutingKey != "orders.audit" || !slices.Equal(r.Reaches, []string{"orders.audit"}) {
			t.Fatalf("plan %+v", r)
		}
		if r.SetHeaders[HeaderOriginalExchange] != "orders" || r.SetHeaders[HeaderOriginalRoutingKey] != "orders" {
			t.Errorf("original route not kept: %v", r.SetHeaders)
		}
		if !strings.Contains(r.Note, `exchange "orders" key "orders" routes to orders.billing too`) {
			t.Errorf("note %q does not say why", r.Note)
		}
	}
}

// The recorded route is used when it reaches that queue alone; else
// another recorded key (a CC key) that does.
func TestOriginUsesARecordedKeyThatReachesOnlyThatQueue(t *testing.T) {
	v := &topology.Vhost{Name: "/", Exchanges: []topology.Exchange{{Name: "x", Type: topology.ExchangeDirect}, {Name: "dlx", Type: topology.ExchangeFanout}},
		Queues: []topology.Queue{{Name: "a", Arguments: map[string]any{"x-dead-letter-exchange": "dlx"}}, {Name: "b"}, {Name: "dlq"}},
		Bindings: []topology.Binding{{Source: "x", Destination: "a", DestinationType: "queue", RoutingKey: "ka"},
			{Source: "x", Destination: "b", DestinationType: "queue", RoutingKey: "kab"},
			{Source: "x", Destination: "a", DestinationType: "queue", RoutingKey: "kab"},
			{Source: "dlx", Destination: "dlq", DestinationType: "queue"}}}
	// Published with key kab and CC [ka]: x-death records both keys; the
	// message kept its CC header (no dead-letter routing key).
	h := rejectedIn("a", "x", "kab", "ka")
	h["CC"] = []any{"ka"}
	p := mustPlanner(t, v, Spec{From: "dlq", To: Target{Kind: TargetOrigin}})
	r := p.Plan(Message{MessageID: "m", Headers: h})
	if r.Exchange != "x" || r.RoutingKey != "ka" || !slices.Equal(r.Reaches, []string{"a"}) || r.Note != "" {
		t.Fatalf("plan %+v, want x/ka reaching a alone", r)
	}
	// Key kab alone (with CC ka) reaches b as well: never chosen.
	h2 := rejectedIn("a", "x", "kab")
	h2["CC"] = []any{"ka"}
	r = p.Plan(Message{Position: 1, MessageID: "m2", Headers: h2})
	if r.Exchange != "" || r.RoutingKey != "a" || !slices.Equal(r.Reaches, []string{"a"}) {
		t.Fatalf("plan %+v, want a directly", r)
	}
}

func TestRouteTakesCCAndBCCAsRoutingKeys(t *testing.T) {
	v := &topology.Vhost{Name: "/", Exchanges: []topology.Exchange{{Name: "x", Type: topology.ExchangeDirect}, {Name: "t", Type: topology.ExchangeTopic}},
		Queues: []topology.Queue{{Name: "a"}, {Name: "b"}, {Name: "c"}},
		Bindings: []topology.Binding{{Source: "x", Destination: "a", DestinationType: "queue", RoutingKey: "ka"},
			{Source: "x", Destination: "b", DestinationType: "queue", RoutingKey: "kb"},
			{Source: "t", Destination: "c", DestinationType: "queue", RoutingKey: "c.*"}}}
	r := topology.NewRouter(v)
	for _, tt := range []struct {
		ex, key string
		h       retry.Headers
		want    []string
	}{
		{"x", "ka", retry.Headers{"CC": []any{"kb"}}, []string{"a", "b"}},
		{"x", "ka", retry.Headers{"BCC": []any{"kb"}}, []string{"a", "b"}},
		{"x", "ka", retry.Headers{"CC": []any{int32(1), "zz"}}, []string{"a"}}, // non-strings ignored, as the broker does
		{"t", "nope", retry.Headers{"CC": []any{"c.1"}}, []string{"c"}},
		{"", "a", retry.Headers{"CC": []any{"b"}}, []string{"a", "b"}}, // the default exchange routes CC keys as queue names
	} {
		if got := r.Route(tt.ex, tt.key, tt.h).Queues; !slices.Equal(got, tt.want) {
			t.Errorf("Route(%q, %q, %v) = %v, want %v", tt.ex, tt.key, tt.h, got, tt.want)
		}
	}
	if got := r.RouteKeys("x", []string{"ka"}, retry.Headers{"CC": []any{"kb"}}).Queues; !slices.Equal(got, []string{"a"}) {
		t.Errorf("RouteKeys looked at CC: %v", got)
	}
	if _, err := topology.PublishKeys(retry.Headers{"CC": "kb"}); err == nil || !strings.Contains(err.Error(), "CC header (string) is not an array") {
		t.Errorf("a string CC: %v", err)
	}
	// A message the broker would refuse is left where it is.
	p := mustPlanner(t, v, Spec{From: "a", To: Target{Kind: TargetQueue, Name: "b"}})
	if r := p.Plan(Message{MessageID: "m", Headers: retry.Headers{"CC": "kb"}}); r.Moves() || !strings.Contains(r.Skip, "not an array") {
		t.Errorf("bad CC planned: %+v", r)
	}
}

// A delayed message is published into its wait and dead-lettered out of
// it: its CC header is taken off (kept aside) so it goes by its key alone,
// and reaches says so.
func TestDelayedMoveTakesCCOff(t *testing.T) {
	v := &topology.Vhost{Name: "/", Exchanges: []topology.Exchange{{Name: "x", Type: topology.ExchangeDirect}},
		Queues: []topology.Queue{{Name: "a"}, {Name: "b"}, {Name: "src"}},
		Bindings: []topology.Binding{{Source: "x", Destination: "a", DestinationType: "queue", RoutingKey: "ka"},
			{Source: "x", Destination: "b", DestinationType: "queue", RoutingKey: "kb"}}}
	p := mustPlanner(t, v, Spec{From: "src", To: Target{Kind: TargetExchange, Name: "x", RoutingKey: "ka", HasKey: true}, Delay: 3 * time.Second})
	r := p.Plan(Message{MessageID: "m", Headers: retry.Headers{"CC": []any{"kb"}}})
	if !slices.Contains(r.DropHeaders, "CC") || r.SetHeaders[HeaderOriginalCC] == nil || !slices.Equal(r.Reaches, []string{"a"}) {
		t.Fatalf("plan %+v", r)
	}
	p = mustPlanner(t, v, Spec{From: "src", To: Target{Kind: TargetExchange, Name: "x", RoutingKey: "ka", HasKey: true}})
	if r := p.Plan(Message{MessageID: "m", Headers: retry.Headers{"CC": []any{"kb"}}}); !slices.Equal(r.Reaches, []string{"a", "b"}) || len(r.DropHeaders) != 0 {
		t.Fatalf("direct: CC must route as the broker does: %+v", r)
	}
}

// A delayed origin waits in a wait queue that dead-letters to exactly the
// queue it failed in; on a 3.10+ broker a quorum queue that does so at
// least once (so a crash loses nothing), else the plan says it may lose.
func TestDelayedOriginWaitsForThatQueueOnly(t *testing.T) {
	for _, quorum := range []bool{true, false} {
		p := mustPlanner(t, springGroups(), Spec{From: "orders.audit.dlq", To: Target{Kind: TargetOrigin}, Delay: 5 * time.Second, QuorumDelayQueues: quorum})
		r := p.Plan(Message{MessageID: "m", Headers: springRepublished()})
		a := r.WaitQueueArgs
		if r.Via != topology.ViaDelayQueue || a["x-dead-letter-exchange"] != "" || a["x-dead-letter-routing-key"] != "orders.audit" || !slices.Equal(r.Reaches, []string{"orders.audit"}) {
			t.Fatalf("quorum %v: plan %+v", quorum, r)
		}
		if quorum != (a["x-queue-type"] == "quorum" && a["x-dead-letter-strategy"] == "at-least-once" && a["x-overflow"] == "reject-publish") {
			t.Errorf("quorum %v: wait queue args %v", quorum, a)
		}
		if a["x-expires"] != 5000+retry.WaitQueueLinger.Milliseconds() {
			t.Errorf("x-expires %v", a["x-expires"])
		}
		if quorum != (r.CrashRisk == "") {
			t.Errorf("quorum %v: crash risk %q", quorum, r.CrashRisk)
		}
	}
	// A tier of the user's (classic) dead-letters at most once.
	p := mustPlanner(t, headersLadder(), Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}, Delay: 5 * time.Second, QuorumDelayQueues: true})
	r := p.Plan(deadIn(0, "a", "orders.created", retry.Headers{}))
	if r.Via != topology.ViaTier || !strings.Contains(r.CrashRisk, "tier orders.wait.5s") {
		t.Errorf("tier plan %+v", r)
	}
}

// A rascal-style delay loop: the worker forwards a failed message to the
// delay exchange with its own routing key and CC "delay.1m" (the CC routes
// it into the delay queue, the key brings it back), the delay queue
// dead-letters through "retry" with both keys, and after the last attempt
// the work queue rejects it into dead_letters (a dead-letter routing key of
// its own; 4.x keeps the CC header). Origin is the work queue, by the
// retry exchange and the message's own key, CC and all.
func TestOriginThroughARascalDelayLoop(t *testing.T) {
	v := &topology.Vhost{Name: "/", Exchanges: []topology.Exchange{
		{Name: "service", Type: topology.ExchangeDirect}, {Name: "delay", Type: topology.ExchangeDirect}, {Name: "retry", Type: topology.ExchangeDirect}, {Name: "dead_letters", Type: topology.ExchangeDirect},
	}, Queues: []topology.Queue{
		{Name: "work", Arguments: map[string]any{"x-dead-letter-exchange": "dead_letters", "x-dead-letter-routing-key": "work.dead_letter"}},
		{Name: "delay:1m", Arguments: map[string]any{"x-message-ttl": int64(60000), "x-dead-letter-exchange": "retry"}},
		{Name: "dead_letters"},
	}, Bindings: []topology.Binding{
		{Source: "service", Destination: "work", DestinationType: "queue", RoutingKey: "foo"},
		{Source: "delay", Destination: "delay:1m", DestinationType: "queue", RoutingKey: "delay.1m"},
		{Source: "retry", Destination: "work", DestinationType: "queue", RoutingKey: "foo"},
		{Source: "dead_letters", Destination: "dead_letters", DestinationType: "queue", RoutingKey: "work.dead_letter"},
	}}
	h := retry.Headers{"CC": []any{"delay.1m"}, "x-death": []any{
		map[string]any{"count": int64(3), "reason": "rejected", "queue": "work", "exchange": "retry", "routing-keys": []any{"foo", "delay.1m"}},
		map[string]any{"count": int64(3), "reason": "expired", "queue": "delay:1m", "exchange": "delay", "routing-keys": []any{"foo", "delay.1m"}},
	}}
	for _, delay := range []time.Duration{0, 5 * time.Second} {
		p := mustPlanner(t, v, Spec{From: "dead_letters", To: Target{Kind: TargetOrigin}, Delay: delay, QuorumDelayQueues: true})
		r := p.Plan(Message{MessageID: "m", Headers: h})
		if !r.Moves() || r.TargetExchange != "retry" || r.TargetRoutingKey != "foo" || !slices.Equal(r.Reaches, []string{"work"}) {
			t.Errorf("delay %v: plan %+v", delay, r)
		}
	}
}

// A shared wait queue (amqplib-retry.delayed, no TTL) serves every queue
// whose messages name it as where they return by header; its x-death entry
// in a message now in its ready queue names no work queue, so the origin is
// not the wait queue: with nothing else recorded, there is none.
func TestFailedInSharedWaitIsNoOrigin(t *testing.T) {
	v := &topology.Vhost{Name: "/", Exchanges: []topology.Exchange{{Name: "amqplib-retry", Type: topology.ExchangeDirect}},
		Queues: []topology.Queue{
			{Name: "amqplib-retry.delayed", Arguments: map[string]any{"x-dead-letter-exchange": "amqplib-retry", "x-dead-letter-routing-key": "ready"}},
			{Name: "amqplib-retry.ready"},
			{Name: "orders", Consumers: 1}, {Name: "billing", Consumers: 1},
		},
		Bindings: []topology.Binding{{Source: "amqplib-retry", Destination: "amqplib-retry.ready", DestinationType: "queue", RoutingKey: "ready"}},
	}
	v.Apply(topology.Evidence{"amqplib-retry.delayed": {Expiration: true}, "amqplib-retry.ready": {FailedIn: []string{"billing", "orders"}}})
	ladders := topology.Discover(v)
	if len(ladders) != 2 || len(ladders[0].Delays) != 1 {
		t.Fatalf("ladders %+v, want billing and orders, each with the shared wait", ladders)
	}
	h := retry.Headers{"x-death": []any{map[string]any{"count": int64(1), "reason": "expired", "queue": "amqplib-retry.delayed",
		"exchange": "", "routing-keys": []any{"amqplib-retry.delayed"}}}}
	if f, ok := FailedIn(topology.NewRouter(v), ladders, "amqplib-retry.ready", h); ok {
		t.Errorf("FailedIn = %+v, want none: the shared wait queue is no work queue", f)
	}
}
