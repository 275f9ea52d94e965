package moveplan

import (
	"encoding/json"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
	"math"
	"strings"
	"testing"
	"time"
)

// headersLadder is the Go seed as `demo --real` declares it: the retry
// exchange is a headers exchange picking the tier by retry-tier.
func headersLadder() *topology.Vhost {
	v := seedGo()
	for i := range v.Exchanges {
		if v.Exchanges[i].Name == "orders.retry" {
			v.Exchanges[i].Type = topology.ExchangeHeaders
		}
	}
	v.Exchanges = v.Exchanges[:3] // no delayed exchange
	var bs []topology.Binding
	for _, b := range v.Bindings {
		switch {
		case b.Source == "orders.delayed":
		case b.Source == "orders.retry":
			b.RoutingKey, b.Arguments = "", map[string]any{"x-match": "all", "retry-tier": b.Destination}
			bs = append(bs, b)
		default:
			bs = append(bs, b)
		}
	}
	v.Bindings = bs
	return v
}

func mustPlanner(t *testing.T, v *topology.Vhost, spec Spec) *Planner {
	t.Helper()
	p, err := NewPlanner(v, topology.Discover(v), spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// deadIn is a DLQ message that died in orders.process, published with key.
func deadIn(pos int, id, key string, h retry.Headers) Message {
	out := h.Clone()
	out["x-death"] = []any{map[string]any{"count": int64(1), "reason": "rejected", "queue": "orders.process", "exchange": "orders.topic", "routing-keys": []any{key}}}
	return Message{Position: pos, MessageID: id, Exchange: "orders.dlx", RoutingKey: key, Headers: out}
}

// The cached route is keyed by the headers bindings match on: a message
// carrying the 5m tier's header is not sent the 5s message's way (the
// cache held one route per exchange and key, and put it in the 5m tier).
func TestPlannerRoutesEachMessageByItsOwnHeaders(t *testing.T) {
	p := mustPlanner(t, headersLadder(), Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}, Delay: 5 * time.Second})
	a := p.Plan(deadIn(0, "a", "orders.created", retry.Headers{"retry-tier": "orders.wait.5s"}))
	b := p.Plan(deadIn(1, "b", "orders.created", retry.Headers{"retry-tier": "orders.wait.5m"}))
	for _, r := range []Route{a, b} {
		if r.Via != topology.ViaTier || r.Queue != "orders.wait.5s" || r.Exchange != "orders.retry" || r.RoutingKey != "orders.created" {
			t.Fatalf("%s: %+v", r.MessageID, r)
		}
	}
	// The one already carrying the 5s header needs no edit; the other gets
	// the 5s tier's selector, so it waits where the plan says.
	if _, set := a.SetHeaders["retry-tier"]; set {
		t.Errorf("a: header rewritten needlessly: %v", a.SetHeaders)
	}
	if b.SetHeaders["retry-tier"] != "orders.wait.5s" || !strings.Contains(b.Note, "retry-tier=orders.wait.5s") {
		t.Errorf("b: %v, note %q", b.SetHeaders, b.Note)
	}
	h := b.Apply(deadIn(1, "b", "orders.created", retry.Headers{"retry-tier": "orders.wait.5m"}).Headers)
	if got := topology.NewRouter(headersLadder()).Route(b.Exchange, b.RoutingKey, h).Queues; len(got) != 1 || got[0] != "orders.wait.5s" {
		t.Errorf("b published as planned lands in %v", got)
	}
}

// A headers-exchange target: the same exchange and key route two messages
// to different queues, and the cache must not merge them.
func TestPlannerCacheKeyHoldsRoutingHeaders(t *testing.T) {
	v := &topology.Vhost{
		Name:      "/",
		Exchanges: []topology.Exchange{{Name: "hx", Type: topology.ExchangeHeaders, MessagesDelayed: -1}},
		Queues:    []topology.Queue{{Name: "src"}, {Name: "eu"}, {Name: "us"}},
		Bindings: []topology.Binding{
			{Source: "hx", Destination: "eu", DestinationType: "queue", Arguments: map[string]any{"region": "eu"}},
			{Source: "hx", Destination: "us", DestinationType: "queue", Arguments: map[string]any{"region": "us"}},
		},
	}
	p := mustPlanner(t, v, Spec{From: "src", To: Target{Kind: TargetExchange, Name: "hx"}})
	eu := p.Plan(Message{Position: 0, RoutingKey: "k", Headers: retry.Headers{"region": "eu"}})
	us := p.Plan(Message{Position: 1, RoutingKey: "k", Headers: retry.Headers{"region": "us"}})
	none := p.Plan(Message{Position: 2, RoutingKey: "k", Headers: retry.Headers{"other": 1}})
	if len(eu.Reaches) != 1 || eu.Reaches[0] != "eu" || len(us.Reaches) != 1 || us.Reaches[0] != "us" {
		t.Errorf("reaches eu %v us %v", eu.Reaches, us.Reaches)
	}
	if none.Moves() || !strings.Contains(none.Skip, "routes to no queue") {
		t.Errorf("a message no binding matches: %+v", none)
	}
}

func TestPlannerRefusesBadSpecsNamingTheThing(t *testing.T) {
	v := seedGo()
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{From: "nope", To: Target{Kind: TargetOrigin}}, `source queue "nope" does not exist`},
		{Spec{From: "orders.dlq", To: Target{Kind: TargetQueue, Name: "gone"}}, `target queue "gone" does not exist`},
		{Spec{From: "orders.dlq", To: Target{Kind: TargetQueue, Name: "orders.dlq"}}, "is the source"},
		{Spec{From: "orders.dlq", To: Target{Kind: TargetExchange, Name: "gone"}}, `target exchange "gone" does not exist`},
		{Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}, Delay: -time.Second}, "--delay -1s is negative"},
	} {
		if _, err := NewPlanner(v, topology.Discover(v), c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}

// A message whose plan differs from the confirmed one is stopped, and the
// message shown at a position must be the one found there.
func TestPlannerHoldsToTheConfirmedPlan(t *testing.T) {
	v := headersLadder()
	spec := Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}, Delay: 5 * time.Second}
	shown := mustPlanner(t, v, spec).Plan(deadIn(0, "a", "orders.created", nil))
	// The tier is gone by the time the move runs.
	var qs []topology.Queue
	for _, q := range v.Queues {
		if q.Name != "orders.wait.5s" {
			qs = append(qs, q)
		}
	}
	v.Queues = qs
	spec.Expect = []Route{shown}
	now := mustPlanner(t, v, spec).Plan(deadIn(0, "a", "orders.created", nil))
	if now.Moves() || !strings.Contains(now.Skip, "the plan changed since the preview (via tier orders.wait.5s") || !strings.Contains(now.Skip, "now via delay_queue") {
		t.Errorf("%+v", now)
	}
	spec = Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}, Positions: []int{3}, PositionIDs: []string{"shown"}}
	if r := mustPlanner(t, v, spec).Plan(deadIn(3, "other", "orders.created", nil)); r.Moves() || !strings.Contains(r.Skip, `expected message "shown" at position 3, found "other"`) {
		t.Errorf("%+v", r)
	}
}

// Delayed routes keep the message's expiration in a header; reset writes
// the count in the message's own convention; skipped plans publish nothing.
func TestPlannerHeaderEdits(t *testing.T) {
	v := headersLadder()
	p := mustPlanner(t, v, Spec{From: "orders.dlq", To: Target{Kind: TargetQueue, Name: "orders.process"}, Delay: 3 * time.Second, ResetRetries: true})
	m := deadIn(0, "a", "orders.created", retry.Headers{"x-retry-count": int16(4)})
	m.Expiration = "60000"
	r := p.Plan(m)
	if r.Via != topology.ViaDelayQueue || r.Expiration != "" || r.SetHeaders[HeaderOriginalExpiration] != "60000" ||
		r.SetHeaders["x-retry-count"] != int16(0) || r.SetHeaders[HeaderMovedFrom] != "orders.dlq" {
		t.Errorf("%+v", r)
	}
	if r.WaitQueueArgs["x-message-ttl"] != int64(3000) || r.WaitQueueArgs["x-dead-letter-routing-key"] != "orders.process" {
		t.Errorf("wait queue %v", r.WaitQueueArgs)
	}
	origin := mustPlanner(t, v, Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}})
	if s := origin.Plan(Message{Position: 1, MessageID: "never-dead"}); s.Moves() || s.SetHeaders != nil || s.Via != "" {
		t.Errorf("skipped plan carries a way: %+v", s)
	}
}

// ladder's own wait queues are never tiers, never in findings, and are
// listed with the ladder they return to.
func TestLadderOwnQueuesAreNotTiers(t *testing.T) {
	v := seedGo()
	own := retry.ReplayQueueName("orders.topic", "orders.created", 7000)
	v.Queues = append(v.Queues, topology.Queue{Name: own, Type: topology.QueueClassic, Messages: 3,
		Arguments: map[string]any{"x-message-ttl": int64(7000), "x-dead-letter-exchange": "orders.topic", "x-dead-letter-routing-key": "orders.created", "x-expires": 7000 + retry.WaitQueueLinger.Milliseconds()}})
	ls := topology.Discover(v)
	if len(ls) != 1 {
		t.Fatalf("ladders %+v", ls)
	}
	for _, tr := range ls[0].Tiers {
		if retry.OwnedByLadder(tr.Queue) {
			t.Errorf("ladder's queue %s is a tier", tr.Queue)
		}
	}
	if len(ls[0].DelayQueues) != 1 || ls[0].DelayQueues[0] != own {
		t.Errorf("delay queues %v", ls[0].DelayQueues)
	}
	for _, f := range topology.Findings(v, ls) {
		if f.Queue == own {
			t.Errorf("finding on ladder's own queue: %+v", f)
		}
	}
	// A 7s replay is not sent through ladder's own 7s queue as if a tier.
	p := mustPlanner(t, v, Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}, Delay: 7 * time.Second})
	if r := p.Plan(deadIn(0, "a", "orders.created", nil)); r.Via != topology.ViaDelayedExchange {
		t.Errorf("%+v", r)
	}
	s, err := retry.Schedule(retry.Policy{Backoff: retry.BackoffFixed, Base: 7 * time.Second}, 1, &ls[0])
	if err != nil || len(s.Attempts) != 1 || retry.OwnedByLadder(s.Attempts[0].Tier) {
		t.Errorf("schedule picks ladder's queue: %v %+v", err, s.Attempts)
	}
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]Target{
		"origin":         {Kind: TargetOrigin},
		"queue:q":        {Kind: TargetQueue, Name: "q"},
		"exchange:x":     {Kind: TargetExchange, Name: "x"},
		"exchange:x:k":   {Kind: TargetExchange, Name: "x", RoutingKey: "k", HasKey: true},
		"exchange:x:":    {Kind: TargetExchange, Name: "x", HasKey: true},
		"exchange:x:a:b": {Kind: TargetExchange, Name: "x", RoutingKey: "a:b", HasKey: true},
	} {
		got, err := ParseTarget(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("%q: %+v %v (%q)", in, got, err, got.String())
		}
	}
	for _, bad := range []string{"", "queue:", "exchange:", "topic:x"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Two messages whose routing headers print alike must not share a cached
// route: the second would be confirmed into a delay queue that leads
// nowhere and be dropped after the delay.
func TestPlannerCacheNeverMergesDistinctRoutingHeaders(t *testing.T) {
	v := &topology.Vhost{
		Name:      "/",
		Exchanges: []topology.Exchange{{Name: "hx", Type: topology.ExchangeHeaders, MessagesDelayed: -1}},
		Queues:    []topology.Queue{{Name: "src"}, {Name: "q1"}},
		Bindings: []topology.Binding{
			{Source: "hx", Destination: "q1", DestinationType: "queue", Arguments: map[string]any{"tags": []any{"a b"}, "a": "x"}},
		},
	}
	for _, d := range []time.Duration{0, 2 * time.Second} {
		p := mustPlanner(t, v, Spec{From: "src", To: Target{Kind: TargetExchange, Name: "hx"}, Delay: d})
		one := p.Plan(Message{Position: 0, Headers: retry.Headers{"tags": []any{"a b"}, "a": "x"}})
		two := p.Plan(Message{Position: 1, Headers: retry.Headers{"tags": []any{"a", "b"}, "a": "x"}})
		nul := p.Plan(Message{Position: 2, Headers: retry.Headers{"a": "x\x00tags=[]interface {}:[a b]"}})
		if !one.Moves() || len(one.Reaches) != 1 {
			t.Fatalf("delay %v: the matching message: %+v", d, one)
		}
		for _, r := range []Route{two, nul} {
			if r.Moves() || !strings.Contains(r.Skip, "routes to no queue") {
				t.Errorf("delay %v: #%d took another message's route: %+v", d, r.Position, r)
			}
		}
	}
}

// A tier's selector header is written in the type the message already uses
// for it (management JSON gives every number as a double), int32 otherwise.
func TestPlannerWritesTierSelectorsInTheMessagesType(t *testing.T) {
	v := headersLadder()
	for i, b := range v.Bindings {
		if b.Source == "orders.retry" {
			tier := map[string]float64{"orders.wait.5s": 1, "orders.wait.30s": 2, "orders.wait.5m": 3}[b.Destination]
			v.Bindings[i].Arguments = map[string]any{"x-match": "all", "tier": tier}
		}
	}
	p := mustPlanner(t, v, Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}, Delay: 5 * time.Second})
	if r := p.Plan(deadIn(0, "a", "orders.created", retry.Headers{"tier": int16(3)})); r.Via != topology.ViaTier || r.SetHeaders["tier"] != int16(1) {
		t.Errorf("with an int16 header: %+v", r.SetHeaders)
	}
	if r := p.Plan(deadIn(1, "b", "orders.created", nil)); r.Via != topology.ViaTier || r.SetHeaders["tier"] != int32(1) {
		t.Errorf("without the header: %+v", r.SetHeaders)
	}
}

// A tier entered by setting a header is used only when, carrying it, the
// message still returns to the queues a direct publish reaches.
func TestPlannerRefusesATierWhoseHeaderChangesWhereItLands(t *testing.T) {
	v := headersLadder()
	v.Exchanges = append(v.Exchanges, topology.Exchange{Name: "audit.hx", Type: topology.ExchangeHeaders, MessagesDelayed: -1})
	v.Queues = append(v.Queues, topology.Queue{Name: "audit"})
	v.Bindings = append(v.Bindings,
		topology.Binding{Source: "orders.topic", Destination: "audit.hx", DestinationType: "exchange", RoutingKey: "#"},
		topology.Binding{Source: "audit.hx", Destination: "audit", DestinationType: "queue", Arguments: map[string]any{"retry-tier": "orders.wait.5s"}})
	p := mustPlanner(t, v, Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}, Delay: 5 * time.Second})
	r := p.Plan(deadIn(0, "a", "orders.created", nil))
	if r.Via != topology.ViaDelayQueue || len(r.Reaches) != 1 || r.Reaches[0] != "orders.process" {
		t.Errorf("%+v", r)
	}
	if !strings.Contains(r.Note, "would return to other queues") {
		t.Errorf("note %q", r.Note)
	}
}

// The confirmed plan binds where the message lands and which message it is,
// not only the way: a changed binding, or another body at the position of
// an id-less message, stops it.
func TestPlannerConfirmedPlanCoversReachesAndIdentity(t *testing.T) {
	v := seedGo()
	spec := Spec{From: "orders.dlq", To: Target{Kind: TargetExchange, Name: "orders.topic", RoutingKey: "orders.created", HasKey: true}}
	m := Message{Position: 0, BodyDigest: BodyDigest([]byte("one"))}
	shown := mustPlanner(t, v, spec).Plan(m)
	v.Queues = append(v.Queues, topology.Queue{Name: "audit"})
	v.Bindings = append(v.Bindings, topology.Binding{Source: "orders.topic", Destination: "audit", DestinationType: "queue", RoutingKey: "#"})
	spec.Expect = []Route{shown}
	if r := mustPlanner(t, v, spec).Plan(m); r.Moves() {
		t.Errorf("moved to other queues than shown: %+v", r)
	}
	v = seedGo()
	other := Message{Position: 0, BodyDigest: BodyDigest([]byte("two"))}
	if r := mustPlanner(t, v, spec).Plan(other); r.Moves() || !strings.Contains(r.Skip, "plan changed") {
		t.Errorf("another id-less message at the position moved: %+v", r)
	}
	if r := mustPlanner(t, v, spec).Plan(m); !r.Moves() {
		t.Errorf("the same message, same plan: %+v", r)
	}
}

// A reset counts only what it changes: a NaN header is not an edit (and
// the plan stays JSON-encodable).
func TestPlannerResetLeavesNaNHeadersAlone(t *testing.T) {
	p := mustPlanner(t, seedGo(), Spec{From: "orders.dlq", To: Target{Kind: TargetQueue, Name: "orders.process"}, ResetRetries: true})
	r := p.Plan(Message{Headers: retry.Headers{"x-retry-count": int32(2), "score": math.NaN()}})
	if _, ok := r.SetHeaders["score"]; ok || r.SetHeaders["x-retry-count"] != int32(0) {
		t.Errorf("%+v", r.SetHeaders)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Error(err)
	}
}

// A skipped plan keeps its own reason, even under a confirmed plan.
func TestPlannerSkipKeepsItsReason(t *testing.T) {
	v := seedGo()
	spec := Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}, Positions: []int{0}, PositionIDs: []string{"shown"}}
	spec.Expect = []Route{{Position: 0, MessageID: "shown", Via: topology.ViaDirect}}
	r := mustPlanner(t, v, spec).Plan(Message{Position: 0, MessageID: "other"})
	if !strings.Contains(r.Skip, `expected message "shown"`) || r.Note != "" || r.SetHeaders != nil {
		t.Errorf("%+v", r)
	}
}

// To a 4.x broker a move carries x-death on in x-ladder-deaths (and drops
// x-death, which the broker would not carry); to 3.x it leaves both alone.
func TestPlannerCarriesDeathsForFourX(t *testing.T) {
	m := deadIn(0, "a", "orders.created", nil)
	for _, carry := range []bool{false, true} {
		p := mustPlanner(t, seedGo(), Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}, CarryDeaths: carry})
		r := p.Plan(m)
		_, set := r.SetHeaders[retry.HeaderCarriedDeaths]
		dropped := len(r.DropHeaders) == 1 && r.DropHeaders[0] == "x-death"
		if set != carry || dropped != carry {
			t.Errorf("carry %v: set %v dropped %v (%+v)", carry, set, dropped, r)
		}
		if carry && len(retry.DecodeXDeath(r.Apply(m.Headers)).Deaths) != 1 {
			t.Errorf("the carried history is not read back")
		}
	}
}

// On 4.3 the delayed-message exchange plugin is gone: a delayed move whose
// ladder still lists such an exchange waits in a per-delay queue instead.
func TestDelayNeverUsesADelayedExchangeOn43(t *testing.T) {
	v := seedGo()
	for _, ver := range []string{"3.13.7", "4.2.1", "4.3.6", "4.10.0"} {
		spec := Spec{From: "orders.dlq", To: Target{Kind: TargetOrigin}, Delay: 7 * time.Second}
		spec.ForBroker(ver)
		r := mustPlanner(t, v, spec).Plan(deadIn(0, "a", "orders.created", nil))
		want := topology.ViaDelayedExchange
		if topology.DelayedExchangesGone(ver) {
			want = topology.ViaDelayQueue
		}
		if r.Via != want {
			t.Errorf("%s: via %s, want %s (%+v)", ver, r.Via, want, r)
		}
	}
	if !topology.DelayedExchangesGone("4.3.6") || topology.DelayedExchangesGone("4.2.9") || !topology.CarriesDeaths("4.0.5") || topology.CarriesDeaths("3.13.7") {
		t.Error("version rules")
	}
}
