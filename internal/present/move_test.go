package present

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

func TestViaReadsAsWords(t *testing.T) {
	if got := Via(retry.ViaDelayQueue); got != "via a ladder delay queue" {
		t.Errorf("Via(delay_queue) = %q", got)
	}
	for _, v := range []retry.Via{retry.ViaDelayedExchange, retry.ViaDelayQueue, retry.ViaTier, retry.ViaDirect, "some_new_way"} {
		if got := Via(v); strings.ContainsAny(got, "_") || got == "" {
			t.Errorf("Via(%q) = %q: not words", v, got)
		}
	}
}

func TestTargetNamesWhereMessagesGo(t *testing.T) {
	origin := retry.Target{Kind: retry.TargetOrigin}
	one := []retry.MoveRoute{{TargetExchange: "pay.topic", TargetRoutingKey: "pay.charge", Via: retry.ViaDirect, Reaches: []string{"pay.process"}}, {Skip: "no origin"}}
	two := append(one, retry.MoveRoute{TargetExchange: "", TargetRoutingKey: "refund.process", Via: retry.ViaDirect, Reaches: []string{"refund.process"}})
	for _, c := range []struct {
		t       retry.Target
		n       int
		planned []retry.MoveRoute
		want    string
	}{
		{origin, 1, nil, "its origin"},
		{origin, 2, nil, "their origin"},
		{origin, 1, one, "its origin (pay.process)"},
		{origin, 2, two, "their origins (2 queues)"},
		{retry.Target{Kind: retry.TargetQueue, Name: "q"}, 3, nil, "queue q"},
		{retry.Target{Kind: retry.TargetExchange, Name: "x"}, 3, nil, "exchange x, each with its own routing key"},
		{retry.Target{Kind: retry.TargetExchange, Name: "x", RoutingKey: "k", HasKey: true}, 3, nil, `exchange x with key "k"`},
	} {
		if got := Target(c.t, c.n, c.planned); got != c.want {
			t.Errorf("%+v/%d: %q, want %q", c.t, c.n, got, c.want)
		}
	}
}

func TestRoutesAndWays(t *testing.T) {
	counts := retry.CountRoutes([]retry.MoveRoute{
		{Via: retry.ViaTier, Queue: "w.3s"}, {Via: retry.ViaTier, Queue: "w.3s"}, {Via: retry.ViaDelayQueue, Queue: "ladder.delay.3000.x"}, {Skip: "gone"},
	})
	if got := Routes(counts); got != "2 via tier w.3s, 1 via a ladder delay queue" {
		t.Errorf("%q", got)
	}
	// The VIA column in words, never the raw JSON value.
	for _, c := range []struct {
		r    retry.MoveRoute
		want string
	}{
		{retry.MoveRoute{Via: retry.ViaDelayedExchange, Exchange: "dx"}, "delayed exchange dx"},
		{retry.MoveRoute{Via: retry.ViaDelayQueue, Queue: "ladder.delay.3000.x"}, "ladder delay queue ladder.delay.3000.x"},
		{retry.MoveRoute{Via: retry.ViaTier, Queue: "w.3s"}, "tier w.3s"},
		{retry.MoveRoute{Via: retry.ViaDirect}, "direct"},
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
		h    *retry.HoLMark
		form DueForm
		want string
	}{
		{nil, DueCell, NoValue},
		{&retry.HoLMark{NeverDue: true}, DueCell, "never"},
		{&retry.HoLMark{DueAt: at.Add(4 * time.Second)}, DueCell, "4s"},
		{&retry.HoLMark{DueAt: at.Add(4 * time.Second)}, DueWide, "in 4s"},
		{&retry.HoLMark{Overdue: 192 * time.Second}, DueCell, "late 3m"},
		{&retry.HoLMark{Overdue: 192 * time.Second}, DueWide, "overdue 3m12s"},
		{&retry.HoLMark{Overdue: 192 * time.Second, TTL: 5 * time.Second, Blocked: true, BlockedBy: 0}, DueSentence, "overdue by 3m12s (TTL 5s); held back by #0 ahead of it (head-of-line blocking)"},
		{&retry.HoLMark{DueAt: at}, DueCell, "due"},
	} {
		if got := Due(c.h, at, c.form); got != c.want {
			t.Errorf("%+v form %d: %q, want %q", c.h, c.form, got, c.want)
		}
	}
	if Blocked(&retry.HoLMark{Blocked: true, BlockedBy: 3}, true) != "HoL←#3" || Blocked(nil, true) != "" {
		t.Error("Blocked")
	}
}

// Every queue a plan reaches is named, per set of queues, with counts.
func TestReachesNamesEveryQueue(t *testing.T) {
	a := retry.MoveRoute{Via: retry.ViaDirect, Reaches: []string{"orders.audit"}}
	ab := retry.MoveRoute{Via: retry.ViaDirect, Reaches: []string{"orders.audit", "orders.billing"}}
	for _, c := range []struct {
		planned []retry.MoveRoute
		want    string
	}{
		{nil, ""},
		{[]retry.MoveRoute{a, a, {Skip: "x"}}, "orders.audit"},
		{[]retry.MoveRoute{ab}, "orders.audit + orders.billing"},
		{[]retry.MoveRoute{a, ab, a}, "2 → orders.audit, 1 → orders.audit + orders.billing"},
	} {
		if got := Reaches(c.planned); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
	if got := CrashRisk([]retry.MoveRoute{{Via: retry.ViaTier, CrashRisk: "x"}, {Via: retry.ViaDelayQueue}}); got != "a broker crash during the wait can lose 1 of them" {
		t.Errorf("%q", got)
	}
	if got := Pace(0.1); got != "at most 6 a minute" {
		t.Errorf("%q", got)
	}
}
