package present

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

func TestViaReadsAsWords(t *testing.T) {
	if got := Via(topology.ViaDelayQueue); got != "via a ladder delay queue" {
		t.Errorf("Via(delay_queue) = %q", got)
	}
	for _, v := range []topology.Via{topology.ViaDelayedExchange, topology.ViaDelayQueue, topology.ViaTier, topology.ViaDirect, "some_new_way"} {
		if got := Via(v); strings.ContainsAny(got, "_") || got == "" {
			t.Errorf("Via(%q) = %q: not words", v, got)
		}
	}
}

func TestTargetNamesWhereMessagesGo(t *testing.T) {
	origin := moveplan.Target{Kind: moveplan.TargetOrigin}
	one := []moveplan.Route{{TargetExchange: "pay.topic", TargetRoutingKey: "pay.charge", Via: topology.ViaDirect, Reaches: []string{"pay.process"}}, {Skip: "no origin"}}
	two := append(one, moveplan.Route{TargetExchange: "", TargetRoutingKey: "refund.process", Via: topology.ViaDirect, Reaches: []string{"refund.process"}})
	for _, c := range []struct {
		t       moveplan.Target
		n       int
		planned []moveplan.Route
		want    string
	}{
		{origin, 1, nil, "its origin"},
		{origin, 2, nil, "their origin"},
		{origin, 1, one, "its origin (pay.process)"},
		{origin, 2, two, "their origins (2 queues)"},
		{moveplan.Target{Kind: moveplan.TargetQueue, Name: "q"}, 3, nil, "queue q"},
		{moveplan.Target{Kind: moveplan.TargetExchange, Name: "x"}, 3, nil, "exchange x, each with its own routing key"},
		{moveplan.Target{Kind: moveplan.TargetExchange, Name: "x", RoutingKey: "k", HasKey: true}, 3, nil, `exchange x with key "k"`},
	} {
		if got := Target(c.t, c.n, c.planned); got != c.want {
			t.Errorf("%+v/%d: %q, want %q", c.t, c.n, got, c.want)
		}
	}
}

func TestRoutesAndWays(t *testing.T) {
	counts := moveplan.CountRoutes([]moveplan.Route{
		{Via: topology.ViaTier, Queue: "w.3s"}, {Via: topology.ViaTier, Queue: "w.3s"}, {Via: topology.ViaDelayQueue, Queue: "ladder.delay.3000.x"}, {Skip: "gone"},
	})
	if got := Routes(counts); got != "2 via tier w.3s, 1 via a ladder delay queue" {
		t.Errorf("%q", got)
	}
	// The VIA column in words, never the raw JSON value.
	for _, c := range []struct {
		r    moveplan.Route
		want string
	}{
		{moveplan.Route{Via: topology.ViaDelayedExchange, Exchange: "dx"}, "delayed exchange dx"},
		{moveplan.Route{Via: topology.ViaDelayQueue, Queue: "ladder.delay.3000.x"}, "ladder delay queue ladder.delay.3000.x"},
		{moveplan.Route{Via: topology.ViaTier, Queue: "w.3s"}, "tier w.3s"},
		{moveplan.Route{Via: topology.ViaDirect}, "direct"},
	} {
		if r, want := c.r, c.want; Way(r) != want {
			got := Way(r)
			t.Errorf("Way(%+v) = %q, want %q", r, got, want)
		}
	}
	if Publish("", "q") != "queue q" || Publish("x", "k") != "x → k" || Publish("", "") != NoValue {
		t.Error("Publish")
	}
	if Delay(0) != "no delay" || Delay(5*time.Minute) != "delay 5m" {
		t.Error("Delay")
	}
}

func TestDueReadsFromThePeekTime(t *testing.T) {
	at := fixedNow
	for _, c := range []struct {
		h    *topology.HoLMark
		form DueForm
		want string
	}{
		{nil, DueCell, NoValue},
		{&topology.HoLMark{NeverDue: true}, DueCell, "never"},
		{&topology.HoLMark{DueAt: at.Add(4 * time.Second)}, DueCell, "4s"},
		{&topology.HoLMark{DueAt: at.Add(4 * time.Second)}, DueWide, "in 4s"},
		{&topology.HoLMark{Overdue: 192 * time.Second}, DueCell, "late 3m"},
		{&topology.HoLMark{Overdue: 192 * time.Second}, DueWide, "overdue 3m12s"},
		{&topology.HoLMark{Overdue: 192 * time.Second, TTL: 5 * time.Second, Blocked: true, BlockedBy: 0}, DueSentence, "overdue by 3m12s (TTL 5s); held back by #0 ahead of it (head-of-line blocking)"},
		{&topology.HoLMark{DueAt: at}, DueCell, "due"},
	} {
		if got := Due(c.h, at, c.form); got != c.want {
			t.Errorf("%+v form %d: %q, want %q", c.h, c.form, got, c.want)
		}
	}
	if Blocked(&topology.HoLMark{Blocked: true, BlockedBy: 3}, true) != "HoL←#3" || Blocked(nil, true) != "" {
		t.Error("Blocked")
	}
}

// Every queue a plan reaches is named, per set of queues, with counts.
func TestReachesNamesEveryQueue(t *testing.T) {
	a := moveplan.Route{Via: topology.ViaDirect, Reaches: []string{"orders.audit"}}
	ab := moveplan.Route{Via: topology.ViaDirect, Reaches: []string{"orders.audit", "orders.billing"}}
	for _, c := range []struct {
		planned []moveplan.Route
		want    string
	}{
		{nil, ""},
		{[]moveplan.Route{a, a, {Skip: "x"}}, "orders.audit"},
		{[]moveplan.Route{ab}, "orders.audit + orders.billing"},
		{[]moveplan.Route{a, ab, a}, "2 → orders.audit, 1 → orders.audit + orders.billing"},
	} {
		if got := Reaches(c.planned); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
	if got := CrashRisk([]moveplan.Route{{Via: topology.ViaTier, CrashRisk: "x"}, {Via: topology.ViaDelayQueue}}); got != "a broker crash during the wait can lose 1 of them" {
		t.Errorf("%q", got)
	}
	if got := Pace(0.1); got != "at most 6 a minute" {
		t.Errorf("%q", got)
	}
}
