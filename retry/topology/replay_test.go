package topology

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

func planReplay(t *testing.T, v *Vhost, ex, key string, d time.Duration) ReplayRoute {
	t.Helper()
	rt, err := PlanReplay(NewRouter(v), Discover(v), ex, key, nil, d)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestPlanReplayNoDelayIsDirectMandatory(t *testing.T) {
	rt := planReplay(t, seedGo(), "orders.topic", "orders.created", 0)
	if rt.Via != ViaDirect || rt.Exchange != "orders.topic" || rt.RoutingKey != "orders.created" || !rt.Mandatory {
		t.Fatalf("%+v", rt)
	}
}

// The Go seed's tiers keep the routing key and are entered by tier name, so
// a message re-entering with orders.created cannot use them: the delayed
// exchange routes that key to the same queue, never mandatory.
func TestPlanReplayGoSeedUsesDelayedExchange(t *testing.T) {
	rt := planReplay(t, seedGo(), "orders.topic", "orders.created", 5*time.Second)
	if rt.Via != ViaDelayedExchange || rt.Exchange != "orders.delayed" || rt.RoutingKey != "orders.created" || rt.Mandatory || rt.XDelay != 5000 {
		t.Fatalf("%+v", rt)
	}
}

func TestPlanReplayFallsBackToDelayQueue(t *testing.T) {
	v := seedGo()
	v.Exchanges = v.Exchanges[:3] // no delayed exchange
	v.Bindings = append(v.Bindings[:1], v.Bindings[2:]...)
	rt := planReplay(t, v, "orders.topic", "orders.created", 4*time.Second)
	if rt.Via != ViaDelayQueue || rt.Exchange != "" || !rt.Mandatory {
		t.Fatalf("%+v", rt)
	}
	if !strings.HasPrefix(rt.Queue, "ladder.delay.4000.orders.topic.orders.created.") || rt.RoutingKey != rt.Queue {
		t.Fatalf("queue %q", rt.Queue)
	}
	want := retry.Headers{"x-message-ttl": int64(4000), "x-dead-letter-exchange": "orders.topic", "x-dead-letter-routing-key": "orders.created", "x-expires": 4000 + retry.WaitQueueLinger.Milliseconds()}
	for k, v := range want {
		if rt.QueueArgs[k] != v {
			t.Errorf("arg %s = %#v, want %#v", k, rt.QueueArgs[k], v)
		}
	}
}

// fixedKeyLadder: a tier that rewrites the routing key on its way back.
func fixedKeyLadder() *Vhost {
	return &Vhost{
		Name:      "/",
		Exchanges: []Exchange{{Name: "ex", Type: ExchangeDirect, MessagesDelayed: -1}, {Name: "in", Type: ExchangeTopic, MessagesDelayed: -1}},
		Queues: []Queue{
			{Name: "m", Type: QueueClassic},
			{Name: "m.wait.4s", Type: QueueClassic, Arguments: map[string]any{"x-message-ttl": int32(4000), "x-dead-letter-exchange": "ex", "x-dead-letter-routing-key": "k"}},
			{Name: "m.wait.9s", Type: QueueClassic, Arguments: map[string]any{"x-message-ttl": int32(9000), "x-dead-letter-exchange": "ex"}},
		},
		Bindings: []Binding{
			{Source: "ex", Destination: "m", DestinationType: "queue", RoutingKey: "k"},
			{Source: "in", Destination: "m.wait.9s", DestinationType: "queue", RoutingKey: "#"},
		},
	}
}

func TestPlanReplayExactTierWithFixedKey(t *testing.T) {
	rt := planReplay(t, fixedKeyLadder(), "ex", "k", 4*time.Second)
	if rt.Via != ViaTier || rt.Queue != "m.wait.4s" || rt.Exchange != "" || rt.RoutingKey != "m.wait.4s" || !rt.Mandatory {
		t.Fatalf("%+v", rt)
	}
}

func TestPlanReplayTierKeepingKeyEnteredThroughExchange(t *testing.T) {
	rt := planReplay(t, fixedKeyLadder(), "ex", "k", 9*time.Second)
	if rt.Via != ViaTier || rt.Queue != "m.wait.9s" || rt.Exchange != "in" || rt.RoutingKey != "k" {
		t.Fatalf("%+v", rt)
	}
}

func TestPlanReplayNeverUsesALongerTier(t *testing.T) {
	rt := planReplay(t, fixedKeyLadder(), "ex", "k", 3*time.Second)
	if rt.Via != ViaDelayQueue || rt.QueueArgs["x-message-ttl"] != int64(3000) {
		t.Fatalf("%+v", rt)
	}
}

func TestPlanReplayMissingExchange(t *testing.T) {
	_, err := PlanReplay(NewRouter(seedGo()), nil, "nope", "k", nil, time.Second)
	if err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("err %v", err)
	}
}

func TestReplayQueueNameBounded(t *testing.T) {
	if got := retry.ReplayQueueName("", "orders.dlq", 500); !strings.HasPrefix(got, "ladder.delay.500.default.orders.dlq.") {
		t.Fatal(got)
	}
	// Dotted names that read alike still get their own queues.
	if retry.ReplayQueueName("a", "b.c", 500) == retry.ReplayQueueName("a.b", "c", 500) {
		t.Fatal("exchange a + key b.c and exchange a.b + key c share a wait queue")
	}
	long := retry.ReplayQueueName("x", strings.Repeat("k", 250), 1000)
	if len(long) > 255 || !strings.HasPrefix(long, "ladder.delay.1000.") {
		t.Fatalf("%d %q", len(long), long)
	}
	if long == retry.ReplayQueueName("x", strings.Repeat("k", 249), 1000) {
		t.Fatal("different targets share a wait queue")
	}
}

// A message that retried through a tier and was then rejected into the DLQ:
// its first death is the tier (entered via the retry exchange), but it
// belongs back where orders.process got it from.
func TestOriginInPrefersTheMainQueuesEntry(t *testing.T) {
	h := retry.Headers{
		"x-death": []any{
			map[string]any{"queue": "orders.process", "reason": "rejected", "count": int64(1), "exchange": "orders.topic", "routing-keys": []any{"orders.created"}},
			map[string]any{"queue": "orders.wait.5s", "reason": "expired", "count": int64(3), "exchange": "orders.retry", "routing-keys": []any{"orders.wait.5s"}},
		},
		"x-first-death-queue": "orders.wait.5s", "x-first-death-reason": "expired", "x-first-death-exchange": "orders.retry",
	}
	x := retry.DecodeXDeath(h)
	if o, _ := x.Origin(); o.Exchange != "orders.retry" {
		t.Fatalf("precondition: first-death origin %+v", o)
	}
	o, ok := retry.OriginIn(x, retry.MainQueues(Discover(seedGo())))
	if !ok || o.Exchange != "orders.topic" || o.RoutingKey != "orders.created" {
		t.Fatalf("got %+v %v", o, ok)
	}
	// No main-queue entry: x-first-death's answer.
	o, ok = retry.OriginIn(x, map[string]bool{"elsewhere": true})
	if !ok || o.Exchange != "orders.retry" {
		t.Fatalf("fallback %+v %v", o, ok)
	}
}

// After a delay nothing can return a message: a target that routes nowhere
// (or nowhere ladder can tell) is refused instead of dropped later.
func TestPlanReplayRefusesADelayToNowhere(t *testing.T) {
	v := fixedKeyLadder()
	r := NewRouter(v)
	if _, err := PlanReplay(r, Discover(v), "ex", "no-binding", nil, 3*time.Second); err == nil || !strings.Contains(err.Error(), "routes to no queue") {
		t.Fatalf("unroutable: %v", err)
	}
	if rt, err := PlanReplay(r, Discover(v), "ex", "no-binding", nil, 0); err != nil || rt.Via != ViaDirect {
		t.Fatalf("without a delay mandatory publishing reports it: %+v %v", rt, err)
	}
	v.Exchanges = append(v.Exchanges, Exchange{Name: "hx", Type: ExchangeHeaders, MessagesDelayed: -1})
	v.Bindings = append(v.Bindings, Binding{Source: "hx", Destination: "m", DestinationType: "queue", Arguments: map[string]any{"x-match": "all", "k": "v"}})
	r = NewRouter(v)
	if !r.UsesHeaders("hx") || r.UsesHeaders("ex") {
		t.Fatal("UsesHeaders")
	}
	// Through a headers exchange the message's own headers decide.
	if _, err := PlanReplay(r, Discover(v), "hx", "", map[string]any{"k": "other"}, 3*time.Second); err == nil || !strings.Contains(err.Error(), "routes to no queue") {
		t.Fatalf("headers that match nothing: %v", err)
	}
	if rt, err := PlanReplay(r, Discover(v), "hx", "", map[string]any{"k": "v"}, 3*time.Second); err != nil || rt.Via != ViaDelayQueue {
		t.Fatalf("matching headers: %+v %v", rt, err)
	}
}

// A tier that would bring the message back with another routing key (here
// a wait queue of an earlier move, returning with "k") is not used for a
// message bound for "k2", though both keys reach the same queue.
func TestPlanReplayNeverChangesTheRoutingKey(t *testing.T) {
	v := fixedKeyLadder()
	v.Bindings = append(v.Bindings, Binding{Source: "ex", Destination: "m", DestinationType: "queue", RoutingKey: "k2"})
	rt := planReplay(t, v, "ex", "k2", 4*time.Second)
	if rt.Via != ViaDelayQueue || rt.QueueArgs["x-dead-letter-routing-key"] != "k2" {
		t.Fatalf("%+v", rt)
	}
	if !strings.Contains(rt.Note, "m.wait.4s") {
		t.Errorf("no note on the passed-over tier: %q", rt.Note)
	}
}

// ladder's own per-delay wait queues show in a ladder, but a replay's wait
// there is not a retry.
func TestDeathQueuesLeaveOutLaddersOwnWaitQueues(t *testing.T) {
	l := &retry.Ladder{Main: "m", Tiers: []retry.Tier{{Queue: "m.wait.5s"}, {Queue: retry.ReplayQueueName("ex", "k", 5000)}}}
	got := retry.DeathQueues(l)
	if !got["m.wait.5s"] || len(got) != 1 {
		t.Fatalf("%v", got)
	}
}

func TestRetryAndReplayShareTheWaitQueue(t *testing.T) {
	// A retry's wait queue and a replay's to the same queue are one queue,
	// declared with the same arguments.
	l := &retry.Ladder{Main: "orders.process"}
	a, err := retry.Plan(retry.Headers{}, retry.RetryState{}, retry.PlanOptions{Policy: retry.Policy{Backoff: retry.BackoffExponential, Base: 5 * time.Second, Factor: 5}, MaxAttempts: 1, Ladder: l})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := PlanReplay(NewRouter(&Vhost{Queues: []Queue{{Name: "orders.process"}}}), nil, "", "orders.process", nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if a.Queue != rt.Queue || !reflect.DeepEqual(a.QueueArgs, rt.QueueArgs) {
		t.Errorf("retry wait queue %q %v, replay wait queue %q %v", a.Queue, a.QueueArgs, rt.Queue, rt.QueueArgs)
	}
}
