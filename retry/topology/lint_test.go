package topology

import (
	"fmt"
	"github.com/ladder-tui/ladder/retry"
	"strings"
	"testing"
	"time"
)

func lintVhost() *Vhost {
	return &Vhost{
		Name: "/",
		Exchanges: []Exchange{
			{Name: "delayed", Type: ExchangeDelayed, Arguments: map[string]any{"x-delayed-type": "direct"}},
			{Name: "plain", Type: ExchangeDirect},
		},
		Queues: []Queue{
			{Name: "lazy", Type: QueueClassic, Arguments: map[string]any{"x-queue-mode": "lazy"}},
			{Name: "lazy-by-policy", Type: QueueClassic, Policy: map[string]any{"queue-mode": "lazy"}},
			{Name: "v1", Type: QueueClassic, Arguments: map[string]any{"x-queue-version": int32(1)}},
			{Name: "v2", Type: QueueClassic, Arguments: map[string]any{"x-queue-version": int32(2)}},
			{Name: "mirrored", Type: QueueClassic, Policy: map[string]any{"ha-mode": "all"}},
			{Name: "qq", Type: QueueQuorum},
			{Name: "qq-dlx", Type: QueueQuorum, Arguments: map[string]any{"x-dead-letter-exchange": "plain"}},
			{Name: "qq-unlimited", Type: QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int64(-1)}},
			{Name: "temp", Type: QueueClassic, Transient: true},
			{Name: "fine", Type: QueueClassic},
		},
	}
}

// Each upgrade hazard is found exactly where it is, for the versions it
// concerns.
func TestLintFindsWhatBreaksOnUpgrade(t *testing.T) {
	got := func(target string) string {
		fs, err := Lint(lintVhost(), target)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, string(f.Severity)+" "+f.Code+" "+f.Queue+f.Exchange)
		}
		return strings.Join(out, "\n")
	}
	want43 := strings.Join([]string{
		"error queue-version-1 v1", "error classic-mirroring mirrored", "error delayed-exchange-plugin delayed",
		"warning queue-mode lazy", "warning queue-mode lazy-by-policy",
		"warning quorum-no-dead-letter qq", "warning transient-queue temp",
	}, "\n")
	if g := got("4.3"); g != want43 {
		t.Errorf("4.3:\n%s\nwant\n%s", g, want43)
	}
	want40 := strings.Join([]string{
		"error classic-mirroring mirrored", "warning queue-mode lazy", "warning queue-mode lazy-by-policy",
		"warning quorum-no-dead-letter qq", "warning transient-queue temp", "warning delayed-exchange-plugin delayed",
	}, "\n")
	if g := got("4.0"); g != want40 {
		t.Errorf("4.0:\n%s\nwant\n%s", g, want40)
	}
	if _, err := Lint(lintVhost(), "5"); err == nil || !strings.Contains(err.Error(), `--for "5"`) {
		t.Errorf("bad target: %v", err)
	}
}

// A 4.3 quorum queue with built-in delayed retry is a ladder of its own,
// with its DLQ; its delays preview as min(min × count, max).
func TestDelayedRetryQueueIsALadder(t *testing.T) {
	v := &Vhost{Name: "/", Queues: []Queue{
		{Name: "jobs", Type: QueueQuorum, Arguments: map[string]any{"x-delayed-retry-type": "failed", "x-delayed-retry-min": int64(1000),
			"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs.dlq"}, Policy: map[string]any{"delayed-retry-max": float64(2500)}},
		{Name: "jobs.dlq", Type: QueueQuorum},
		{Name: "off", Type: QueueQuorum, Arguments: map[string]any{"x-delayed-retry-type": "disabled"}},
	}}
	ls := Discover(v)
	if len(ls) != 1 || ls[0].Main != "jobs" || ls[0].DLQ != "jobs.dlq" || ls[0].DelayedRetry == nil {
		t.Fatalf("%+v", ls)
	}
	d := *ls[0].DelayedRetry
	if d.Type != "failed" || d.Min != time.Second || d.Max != 2500*time.Millisecond || d.Delay(2) != 2*time.Second || d.Delay(3) != 2500*time.Millisecond {
		t.Errorf("%+v", d)
	}
	s, err := retry.Schedule(d.Policy(), 3, &ls[0])
	if err != nil || s.Attempts[0].Delay != time.Second || s.Attempts[2].Delay != 2500*time.Millisecond {
		t.Errorf("%+v %v", s, err)
	}
}

// springLoop is what Spring Cloud Stream's RabbitMQ binder declares for
// destination "orders" with groups audit and billing (autoBindDlq=true;
// spring-cloud-stream: RabbitExchangeQueueProvisioner autoBindDLQ and
// queueArgs): the topic exchange "orders", each group's queue bound to it
// with "#" and dead-lettering to the direct exchange DLX with its own name
// as key, its DLQ <queue>.dlq bound to DLX with that name. The audit group
// also sets dlqTtl=5000 and dlqDeadLetterExchange= (empty: the default
// exchange), the binder docs' retry loop: its DLQ expires back to
// orders.audit by the key it kept. billing has a plain DLQ.
func springLoop(prefix string) *Vhost {
	v := &Vhost{Name: "/",
		Exchanges: []Exchange{{Name: prefix + "orders", Type: ExchangeTopic}, {Name: prefix + "DLX", Type: ExchangeDirect}}}
	for _, g := range []string{"audit", "billing"} {
		q := prefix + "orders." + g
		dlqArgs := map[string]any{}
		if g == "audit" {
			dlqArgs = map[string]any{"x-message-ttl": int32(5000), "x-dead-letter-exchange": ""}
		}
		v.Queues = append(v.Queues,
			Queue{Name: q, Type: QueueClassic, Consumers: 1, Arguments: map[string]any{"x-dead-letter-exchange": prefix + "DLX", "x-dead-letter-routing-key": q}},
			Queue{Name: q + ".dlq", Type: QueueClassic, Arguments: dlqArgs})
		v.Bindings = append(v.Bindings,
			Binding{Source: prefix + "orders", Destination: q, DestinationType: "queue", RoutingKey: "#"},
			Binding{Source: prefix + "DLX", Destination: q + ".dlq", DestinationType: "queue", RoutingKey: q})
	}
	return v
}

// nsbDelayLevels is NServiceBus's delay infrastructure as its RabbitMQ
// transport declares it (Particular/NServiceBus.RabbitMQ:
// src/NServiceBus.Transport.RabbitMQ/DelayedDelivery/DelayInfrastructure.cs,
// Build): 28 quorum queues nsb.v2.delay-level-NN with TTL 2^N s, each bound
// to its own topic exchange and dead-lettering to the next lower level's
// (level 00 to nsb.v2.delay-delivery), the exchanges bound level to level;
// an endpoint "Sales" is bound to the delivery exchange with "#.Sales"
// (BindingKey) through its own exchange, and consumed. Nothing consumes a
// delay level.
func nsbDelayLevels() *Vhost {
	const maxLevel = 27
	level := func(n int) string { return fmt.Sprintf("nsb.v2.delay-level-%02d", n) }
	v := &Vhost{Name: "/"}
	key := "1.#"
	for n := maxLevel; n >= 0; n-- {
		dlx := "nsb.v2.delay-delivery"
		if n > 0 {
			dlx = level(n - 1)
		}
		v.Exchanges = append(v.Exchanges, Exchange{Name: level(n), Type: ExchangeTopic})
		v.Queues = append(v.Queues, Queue{Name: level(n), Type: QueueQuorum, Arguments: map[string]any{
			"x-queue-type": "quorum", "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish",
			"x-message-ttl": int64(1<<n) * 1000, "x-dead-letter-exchange": dlx}})
		v.Bindings = append(v.Bindings, Binding{Source: level(n), Destination: level(n), DestinationType: "queue", RoutingKey: key})
		key = "*." + key
	}
	key = "0.#"
	for n := maxLevel; n >= 1; n-- {
		v.Bindings = append(v.Bindings, Binding{Source: level(n), Destination: level(n - 1), DestinationType: "exchange", RoutingKey: key})
		key = "*." + key
	}
	v.Exchanges = append(v.Exchanges, Exchange{Name: "nsb.v2.delay-delivery", Type: ExchangeTopic}, Exchange{Name: "Sales", Type: ExchangeFanout})
	v.Bindings = append(v.Bindings,
		Binding{Source: level(0), Destination: "nsb.v2.delay-delivery", DestinationType: "exchange", RoutingKey: key},
		Binding{Source: "nsb.v2.delay-delivery", Destination: "Sales", DestinationType: "exchange", RoutingKey: "#.Sales"},
		Binding{Source: "Sales", Destination: "Sales", DestinationType: "queue"})
	v.Queues = append(v.Queues, Queue{Name: "Sales", Type: QueueQuorum, Consumers: 2, Arguments: map[string]any{"x-queue-type": "quorum"}},
		Queue{Name: "error", Type: QueueQuorum, Arguments: map[string]any{"x-queue-type": "quorum"}})
	return v
}

// xDeathFindings are Lint's client-published-x-death findings for target.
func xDeathFindings(t *testing.T, v *Vhost, target string) []Finding {
	t.Helper()
	fs, err := Lint(v, target)
	if err != nil {
		t.Fatal(err)
	}
	var out []Finding
	for _, f := range fs {
		if f.Code == CodeClientXDeath {
			out = append(out, f)
		}
	}
	return out
}

// Spring's binder loop (republishToDlq by default, dlqTtl back to the
// queue, a limit read from x-death) never trips on 4.x: flagged, as an
// error, on its work queue alone, for both targets, and saying what to
// change; billing's plain DLQ is no loop.
func TestLintFlagsSpringRetryLoopCountedFromXDeath(t *testing.T) {
	for _, target := range LintTargets {
		fs := xDeathFindings(t, springLoop(""), target)
		if len(fs) != 1 || fs[0].Queue != "orders.audit" || fs[0].Severity != SeverityError {
			t.Fatalf("%s: %+v", target, fs)
		}
		for _, want := range []string{`"orders.audit.dlq" (TTL 5s)`, "republishToDlq", "x-death", "loop forever", "x-retry-count", "delivery-limit", "delayed retry"} {
			if !strings.Contains(fs[0].Message, want) {
				t.Errorf("%s: message lacks %q: %s", target, want, fs[0].Message)
			}
		}
	}
	// The binder's prefix property prefixes the queues and DLX alike.
	if fs := xDeathFindings(t, springLoop("shop."), "4.3"); len(fs) != 1 || fs[0].Queue != "shop.orders.audit" {
		t.Errorf("prefixed: %+v", fs)
	}
	// Consumers unknown (stats off, no Prometheus): still a loop.
	v := springLoop("")
	q := seedQueue(v, "orders.audit")
	q.Consumers, q.ConsumersUnknown = 0, true
	if fs := xDeathFindings(t, v, "4.3"); len(fs) != 1 {
		t.Errorf("consumers unknown: %+v", fs)
	}
}

// Up to 3.13 the broker carries a republished x-death on, so the same loop
// stops where it should: not flagged; and lint refuses a 3.x target rather
// than say nothing.
func TestLintSpringLoopIsNoFindingBefore4(t *testing.T) {
	for _, target := range []string{"3.10", "3.13"} {
		if fs := xDeathLoops(springLoop(""), target); len(fs) != 0 {
			t.Errorf("%s: %+v", target, fs)
		}
		if _, err := Lint(springLoop(""), target); err == nil {
			t.Errorf("Lint accepted --for %s", target)
		}
	}
}

// What is not the loop: the route is read, so a DLQ the dead letters do not
// reach or whose own go elsewhere, a DLQ without a TTL, and a work queue
// nothing consumes are no finding.
func TestLintSpringShapeWithoutALoopIsNoFinding(t *testing.T) {
	for name, change := range map[string]func(v *Vhost){
		"nothing consumes the work queue": func(v *Vhost) { seedQueue(v, "orders.audit").Consumers = 0 },
		"DLQ without a TTL":               func(v *Vhost) { delete(seedQueue(v, "orders.audit.dlq").Arguments, "x-message-ttl") },
		"DLQ expires to a parking lot": func(v *Vhost) {
			seedQueue(v, "orders.audit.dlq").Arguments["x-dead-letter-routing-key"] = "orders.audit.parkingLot"
			v.Queues = append(v.Queues, Queue{Name: "orders.audit.parkingLot", Type: QueueClassic})
		},
		"DLX not bound to the DLQ": func(v *Vhost) { v.Bindings[1].RoutingKey = "elsewhere" },
		"another dead-letter exchange than the binder's": func(v *Vhost) {
			seedQueue(v, "orders.audit").Arguments["x-dead-letter-exchange"] = "orders.dlx"
			v.Exchanges = append(v.Exchanges, Exchange{Name: "orders.dlx", Type: ExchangeDirect})
			v.Bindings[1].Source = "orders.dlx"
		},
		"a DLQ not named as the binder names it": func(v *Vhost) {
			seedQueue(v, "orders.audit.dlq").Name = "orders.audit.retry"
			v.Bindings[1].Destination = "orders.audit.retry"
		},
		"dead letters keep their own key": func(v *Vhost) {
			delete(seedQueue(v, "orders.audit").Arguments, "x-dead-letter-routing-key")
		},
	} {
		v := springLoop("")
		change(v)
		if fs := xDeathFindings(t, v, "4.3"); len(fs) != 0 {
			t.Errorf("%s: %+v", name, fs)
		}
	}
}

// NServiceBus's delay levels are 28 TTL queues dead-lettering into each
// other that nothing consumes, and its endpoint queue has no dead-letter
// route: none of them is a retry loop counted from x-death. Nor is a lone
// TTL queue nothing consumes, nor the seeds' ladders (the Go seed's worker
// publishes into its tiers but counts in x-retry-count; the Python seed's
// main dead-letters into its tier, so the broker counts).
func TestLintLeavesDelayLevelsAndUnconsumedQueuesAlone(t *testing.T) {
	if fs := xDeathFindings(t, nsbDelayLevels(), "4.3"); len(fs) != 0 {
		t.Errorf("NServiceBus delay levels: %d findings, first %+v", len(fs), fs[0])
	}
	lone := &Vhost{Name: "/", Queues: []Queue{
		{Name: "cache.expire", Type: QueueClassic, Arguments: map[string]any{"x-message-ttl": int32(60000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}},
		{Name: "work", Type: QueueClassic, Consumers: 1, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "cache.expire"}},
	}}
	for name, v := range map[string]*Vhost{"lone TTL queue": lone, "seed Go": seedGo(), "seed Python": seedPython()} {
		if fs := xDeathFindings(t, v, "4.3"); len(fs) != 0 {
			t.Errorf("%s: %+v", name, fs)
		}
	}
}
