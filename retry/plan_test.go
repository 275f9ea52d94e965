package retry

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPlanThroughTiers(t *testing.T) {
	l := ladderGoSeed()
	o := PlanOptions{Policy: polGo, MaxAttempts: 3, Ladder: l}
	tests := []struct {
		count   any // x-retry-count on the failed message; nil = none
		attempt int
		queue   string
		match   TierMatch
		delay   time.Duration
	}{
		{nil, 1, "orders.wait.5s", TierExact, 5 * time.Second},
		{int32(1), 2, "orders.wait.30s", TierLonger, 30 * time.Second},
		{int32(2), 3, "orders.wait.5m", TierLonger, 5 * time.Minute},
	}
	for _, tt := range tests {
		h := Headers{"content-kind": "order"}
		if tt.count != nil {
			h["x-retry-count"] = tt.count
		}
		a, err := Plan(h, ReadState(h, DeathQueues(l)), o)
		if err != nil {
			t.Fatal(err)
		}
		if a.Kind != ActionTier || a.Attempt != tt.attempt || a.Queue != tt.queue || a.Match != tt.match || a.Delay != tt.delay {
			t.Errorf("count %v: got %+v", tt.count, a)
		}
		if a.Headers["x-retry-count"] != int32(tt.attempt) || a.Headers["content-kind"] != "order" {
			t.Errorf("count %v: headers %v", tt.count, a.Headers)
		}
		if _, ok := a.Headers["x-delay"]; ok {
			t.Errorf("a tier retry should not set x-delay: %v", a.Headers)
		}
		if _, had := h["x-retry-count"]; had != (tt.count != nil) {
			t.Errorf("Plan modified its input headers")
		}
	}
}

func TestPlanExhausted(t *testing.T) {
	l := ladderGoSeed()
	h := Headers{"x-retry-count": int32(3), "x-last-error": "boom"}
	a, err := Plan(h, ReadState(h, nil), PlanOptions{Policy: polGo, MaxAttempts: 3, Ladder: l})
	if err != nil {
		t.Fatal(err)
	}
	if a.Kind != ActionPark || a.Queue != "orders.dlq" || !reflect.DeepEqual(a.Headers, h) || a.Attempt != 0 {
		t.Errorf("exhausted with a DLQ should park unchanged, got %+v", a)
	}
	l.DLQ = ""
	a, _ = Plan(h, ReadState(h, nil), PlanOptions{Policy: polGo, MaxAttempts: 3, Ladder: l})
	if a.Kind != ActionDrop || a.Headers != nil {
		t.Errorf("exhausted without a DLQ should drop, got %+v", a)
	}
	// MaxAttempts 0: never retry.
	a, _ = Plan(Headers{}, RetryState{}, PlanOptions{Policy: polGo, MaxAttempts: 0, Ladder: ladderGoSeed()})
	if a.Kind != ActionPark {
		t.Errorf("max attempts 0 should park the first failure, got %+v", a)
	}
}

func TestPlanDelayedExchange(t *testing.T) {
	l := &Ladder{Main: "orders.process", DelayedExchanges: []DelayedExchange{{Name: "orders.delayed", MessagesDelayed: -1}}}
	h := Headers{"x-retry-count": int16(2)}
	a, err := Plan(h, ReadState(h, nil), PlanOptions{Policy: polGo, MaxAttempts: 5, Ladder: l})
	if err != nil {
		t.Fatal(err)
	}
	if a.Kind != ActionDelayedExchange || a.Exchange != "orders.delayed" || a.Delay != 125*time.Second {
		t.Errorf("got %+v", a)
	}
	if a.Headers["x-delay"] != int64(125000) || a.Headers["x-retry-count"] != int16(3) {
		t.Errorf("headers %#v", a.Headers)
	}
	// Beyond 2^32−1 ms the plugin would route at once: use a wait queue.
	far := Policy{Backoff: BackoffFixed, Base: (MaxXDelay + 1) * time.Millisecond}
	a, _ = Plan(Headers{}, RetryState{}, PlanOptions{Policy: far, MaxAttempts: 1, Ladder: l})
	if a.Kind != ActionDelayQueue {
		t.Errorf("x-delay beyond the plugin's range: got %+v", a)
	}
	atMax := Policy{Backoff: BackoffFixed, Base: MaxXDelay * time.Millisecond}
	a, _ = Plan(Headers{}, RetryState{}, PlanOptions{Policy: atMax, MaxAttempts: 1, Ladder: l})
	if a.Kind != ActionDelayedExchange || a.Headers["x-delay"] != int64(MaxXDelay) {
		t.Errorf("x-delay at the plugin's maximum: got %+v", a)
	}
	// A zero delay (full jitter's low end) is not a valid x-delay.
	zero := Policy{Backoff: BackoffFixed}
	a, _ = Plan(Headers{}, RetryState{}, PlanOptions{Policy: zero, MaxAttempts: 1, Ladder: l})
	if a.Kind != ActionDelayQueue || !strings.HasPrefix(a.Queue, "ladder.delay.0.default.orders.process.") {
		t.Errorf("zero delay: got %+v", a)
	}
}

func TestPlanDelayQueue(t *testing.T) {
	l := &Ladder{Main: "main_queue", Tiers: []Tier{{Queue: "retry_queue", TTL: time.Minute}}}
	h := Headers{"x-retry-count": int8(9), "x-retry-delay": int32(60000)}
	o := PlanOptions{Policy: Policy{Backoff: BackoffExponential, Base: time.Second, Factor: 2, Cap: 300 * time.Second}, MaxAttempts: 20, Ladder: l}
	a, err := Plan(h, ReadState(h, nil), o)
	if err != nil {
		t.Fatal(err)
	}
	want := Headers{"x-message-ttl": int64(300000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "main_queue", "x-expires": int64(300000) + WaitQueueLinger.Milliseconds()}
	if a.Kind != ActionDelayQueue || !strings.HasPrefix(a.Queue, "ladder.delay.300000.default.main_queue.") || a.Delay != 300*time.Second || !reflect.DeepEqual(a.QueueArgs, want) {
		t.Errorf("got %+v", a)
	}
	// The Python seed's x-retry-delay is kept up to date, in its own type.
	if a.Headers["x-retry-delay"] != int32(300000) || a.Headers["x-retry-count"] != int8(10) {
		t.Errorf("headers %#v", a.Headers)
	}
	if _, err := Plan(h, ReadState(h, nil), PlanOptions{Policy: o.Policy, MaxAttempts: 20, Ladder: &Ladder{}}); err == nil {
		t.Error("a ladder with no main queue cannot have a wait queue")
	}
}

func TestPlanUsesJitterAndLastDelay(t *testing.T) {
	l := &Ladder{Main: "m"}
	p := Policy{Backoff: BackoffFixed, Base: time.Second, Jitter: JitterDecorrelated}
	h := Headers{"x-retry-count": int32(1), "x-retry-delay": int64(10000)}
	a, err := Plan(h, ReadState(h, nil), PlanOptions{Policy: p, MaxAttempts: 5, Ladder: l, Rand: &edgeRand{top: true}})
	if err != nil {
		t.Fatal(err)
	}
	// Largest draw from [base, 3 × the previous 10s].
	if a.Delay != 30*time.Second || a.Wanted != 30*time.Second {
		t.Errorf("decorrelated jitter should grow from x-retry-delay: got %v", a.Delay)
	}
}

func TestPlanErrors(t *testing.T) {
	if _, err := Plan(Headers{}, RetryState{}, PlanOptions{Policy: polGo, MaxAttempts: 1}); err == nil {
		t.Error("no ladder should fail")
	}
	if _, err := Plan(Headers{}, RetryState{}, PlanOptions{Policy: Policy{}, MaxAttempts: 1, Ladder: ladderGoSeed()}); err == nil ||
		err.Error() != "retry: plan: policy: no backoff kind" {
		t.Errorf("invalid policy should fail with context once, got %v", err)
	}
	if _, err := Plan(Headers{}, RetryState{}, PlanOptions{Policy: polGo, MaxAttempts: 1, Ladder: &Ladder{}}); err == nil ||
		err.Error() != "retry: plan attempt 1: no tier or delayed exchange fits 5s and the ladder has no main queue to wait for" {
		t.Errorf("unroutable retry: got %v", err)
	}
	if _, err := Plan(Headers{}, RetryState{}, PlanOptions{Policy: polGo, MaxAttempts: -1, Ladder: ladderGoSeed()}); err == nil {
		t.Error("negative max attempts should fail")
	}
}

func TestActionJSON(t *testing.T) {
	h := Headers{"x-retry-count": int32(1)}
	a, err := Plan(h, ReadState(h, nil), PlanOptions{Policy: polGo, MaxAttempts: 3, Ladder: ladderGoSeed()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"tier","attempt":2,"delay_ms":30000,"wanted_ms":25000,"queue":"orders.wait.30s","routing_key":"orders.wait.30s","tier_match":"longer","headers":{"x-retry-count":2}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(Action{Kind: ActionDrop})
	if string(b) != `{"kind":"drop","delay_ms":0,"wanted_ms":0}` {
		t.Errorf("drop: %s", b)
	}
}

func TestDelayQueueName(t *testing.T) {
	if got := delayQueueName("orders.process", 5000); !strings.HasPrefix(got, "ladder.delay.5000.default.orders.process.") {
		t.Errorf("got %q", got)
	}
	if long := delayQueueName(strings.Repeat("q", 300), 5000); len(long) > 255 {
		t.Errorf("name of %d bytes is over the broker's limit", len(long))
	}
}

// An action names what to publish with: the tier's exchange and name, the
// delayed exchange with the message's own key, or the default exchange.
func TestPlanNamesWhereToPublish(t *testing.T) {
	l := ladderGoSeed()
	l.Tiers[0].Exchange = "orders.retry"
	o := PlanOptions{Policy: polGo, MaxAttempts: 3, Ladder: l, RoutingKey: "orders.created"}
	a, err := Plan(Headers{}, RetryState{}, o)
	if err != nil || a.Kind != ActionTier || a.Exchange != "orders.retry" || a.RoutingKey != "orders.wait.5s" {
		t.Errorf("tier with an exchange: %+v %v", a, err)
	}
	h := Headers{"x-retry-count": int32(1)}
	if a, _ = Plan(h, ReadState(h, nil), o); a.Exchange != "" || a.RoutingKey != "orders.wait.30s" {
		t.Errorf("tier through the default exchange: %+v", a)
	}
	h = Headers{"x-retry-count": int32(3)}
	if a, _ = Plan(h, ReadState(h, nil), o); a.Kind != ActionPark || a.Exchange != "" || a.RoutingKey != "orders.dlq" {
		t.Errorf("park: %+v", a)
	}
	l.Tiers = nil
	l.DelayedExchanges = []DelayedExchange{{Name: "orders.delayed"}}
	if a, _ = Plan(Headers{}, RetryState{}, o); a.Kind != ActionDelayedExchange || a.Exchange != "orders.delayed" || a.RoutingKey != "orders.created" {
		t.Errorf("delayed exchange: %+v", a)
	}
	l.DelayedExchanges = nil
	if a, _ = Plan(Headers{}, RetryState{}, o); a.Kind != ActionDelayQueue || a.Exchange != "" || a.RoutingKey != a.Queue {
		t.Errorf("delay queue: %+v", a)
	}
}
