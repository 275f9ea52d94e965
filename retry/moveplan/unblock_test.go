package moveplan

import (
	"fmt"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
	"slices"
	"strings"
	"testing"
	"time"
)

func unblockInputs(now time.Time, ttls ...time.Duration) []UnblockInput {
	var in []topology.HoLInput
	for _, d := range ttls {
		in = append(in, topology.HoLInput{Expiration: d, HasExpiration: true, Timestamp: now.Add(-time.Second)})
	}
	marks := topology.HoL(in, 0, now).Marks
	out := make([]UnblockInput, len(marks))
	for i, m := range marks {
		out[i] = UnblockInput{MessageID: fmt.Sprint("m", i), BodyDigest: "d", Mark: m}
	}
	return out
}

var waitSet = topology.QueueSettings{HasDeadLetterExchange: true, DeadLetterExchange: "", HasDeadLetterRoutingKey: true, DeadLetterRoutingKey: "work"}

// The messages holding others back are those with a longer remaining
// delay than one behind them; each keeps that delay, rounded up to the
// second; what is left is in due order.
func TestPlanUnblockPicksTheHolders(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	ttls := []time.Duration{10 * time.Minute}
	for range 1000 {
		ttls = append(ttls, 5*time.Second)
	}
	u, err := PlanUnblock("delay", waitSet, unblockInputs(now, ttls...), 0, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Picks) != 1 || u.Picks[0].Position != 0 || u.Picks[0].Remaining != 10*time.Minute-time.Second || u.Behind != 1000 || u.To != "queue:work" {
		t.Fatalf("%+v", u)
	}

	u, _ = PlanUnblock("delay", waitSet, unblockInputs(now, 10*time.Minute, 5*time.Second, 8*time.Minute, 3*time.Second, 4*time.Second), 0, now)
	var pos []int
	for _, p := range u.Picks {
		pos = append(pos, p.Position)
	}
	if fmt.Sprint(pos) != "[0 1 2]" {
		t.Errorf("picks %v, want [0 1 2] (3s and 4s are in due order)", pos)
	}

	// In due order already: nothing to do.
	u, _ = PlanUnblock("delay", waitSet, unblockInputs(now, time.Second, 2*time.Second, time.Minute), 0, now)
	if len(u.Picks) != 0 {
		t.Errorf("in order: %+v", u.Picks)
	}
	// A peek released what was due behind the head: the head held them.
	u, _ = PlanUnblock("delay", waitSet, unblockInputs(now, 10*time.Minute), 250, now)
	if len(u.Picks) != 1 || u.Behind != 250 {
		t.Errorf("released behind the head: %+v", u)
	}
	// Sub-second remainders round up: a move never makes a message early.
	in := unblockInputs(now, 90*time.Second, time.Second)
	in[0].Mark.DueAt = now.Add(61*time.Second + 300*time.Millisecond)
	if u, _ = PlanUnblock("delay", waitSet, in, 0, now); len(u.Picks) != 1 || u.Picks[0].Remaining != 62*time.Second {
		t.Errorf("rounding: %+v", u.Picks)
	}
}

func TestPlanUnblockLeavesWhatItCannotTime(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	in := unblockInputs(now, time.Minute, time.Minute, time.Second)
	in[0].Mark = topology.HoLMark{Position: 0, NeverDue: true, BlockedBy: -1}
	in[1].Mark.Estimated = true
	u, err := PlanUnblock("delay", waitSet, in, 0, now)
	if err != nil || len(u.Picks) != 0 || len(u.Notes) != 2 ||
		!strings.Contains(u.Notes[0], "never-due") || !strings.Contains(u.Notes[1], "no timestamp") {
		t.Fatalf("%+v %v", u, err)
	}
	// One of each reads in the singular.
	for i, want := range []string{
		"1 never-due message holds others back and stays: with no TTL there is no delay to keep (move it with ladder move)",
		"1 message holding others back has no timestamp, so its remaining delay is not known: it stays",
	} {
		if u.Notes[i] != want {
			t.Errorf("note %q, want %q", u.Notes[i], want)
		}
	}
	if _, err := PlanUnblock("delay", topology.QueueSettings{}, in, 0, now); err == nil || !strings.Contains(err.Error(), "no dead-letter exchange") {
		t.Errorf("no DLX: %v", err)
	}
	if _, err := PlanUnblock("delay", topology.QueueSettings{HasDeadLetterExchange: true}, in, 0, now); err == nil || !strings.Contains(err.Error(), "back to itself") {
		t.Errorf("default exchange, own keys: %v", err)
	}
}

// The planner moves exactly the picked messages, each into a per-delay
// queue with its own remaining delay; the rest are left alone.
func TestMovePlannerPicksWithTheirOwnDelays(t *testing.T) {
	v := &topology.Vhost{Queues: []topology.Queue{
		{Name: "work", Type: topology.QueueClassic},
		{Name: "delay", Type: topology.QueueClassic, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}},
	}}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	spec := Spec{From: "delay", To: Target{Kind: TargetQueue, Name: "work"}, Now: now, Pick: []Pick{
		{Position: 0, MessageID: "head", BodyDigest: "d0", Expiration: "600000", Delay: 599 * time.Second, DueAt: now.Add(598500 * time.Millisecond)},
		{Position: 2, MessageID: "mid", BodyDigest: "d2", Expiration: "60000", Delay: 42 * time.Second, DueAt: now.Add(42 * time.Second)}}}
	p := mustPlanner(t, v, spec)
	msgs := []Message{{Position: 0, MessageID: "head", BodyDigest: "d0", Expiration: "600000"}, {Position: 1, MessageID: "short", BodyDigest: "d1", Expiration: "5000"},
		{Position: 2, MessageID: "mid", BodyDigest: "d2", Expiration: "60000"}}
	want := map[string][2]any{"head": {int64(599000), "598500"}, "mid": {int64(42000), "42000"}}
	for _, m := range msgs {
		r := p.Plan(m)
		w, picked := want[m.MessageID]
		switch {
		case !picked && !r.Unmatched:
			t.Errorf("%s moves: %+v", m.MessageID, r)
		case picked && (r.Via != topology.ViaDelayQueue || r.WaitQueueArgs["x-message-ttl"] != w[0] || r.Expiration != w[1] || r.WaitQueueArgs["x-dead-letter-routing-key"] != "work"):
			t.Errorf("%s: %+v", m.MessageID, r)
		}
	}
	// The confirmed plan is held to pick by pick: positions shift forward
	// once the head leaves and the broker expires what was due behind it.
	p = mustPlanner(t, v, spec)
	head, mid := p.Plan(msgs[0]), p.Plan(msgs[2])
	spec.Expect = []Route{head, mid}
	p = mustPlanner(t, v, spec)
	shifted := msgs[2]
	shifted.Position = 0
	if r := p.Plan(shifted); !r.Moves() || r.Pick != 2 {
		t.Errorf("mid, moved up to the head: %+v", r)
	}
	// A pick not in the confirmed plan stays.
	spec.Expect = []Route{mid}
	p = mustPlanner(t, v, spec)
	if r := p.Plan(msgs[0]); r.Moves() || r.Unmatched || !strings.Contains(r.Skip, "not part of the confirmed plan") {
		t.Errorf("head, not confirmed: %+v", r)
	}
}

// Repro D of issue 12: messages with no id and the same body are told
// apart by their expiration (and position): each moves with its own delay,
// and a message is never taken for one the peek saw ahead of it.
func TestMovePlannerTellsSameBodiesApart(t *testing.T) {
	v := &topology.Vhost{Queues: []topology.Queue{
		{Name: "work3", Type: topology.QueueClassic},
		{Name: "work3.delay", Type: topology.QueueClassic, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work3"}},
	}}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ts := now.Add(-5 * time.Second)
	x, z := BodyDigest([]byte("x")), BodyDigest([]byte("z"))
	var in []UnblockInput
	msgs := []Message{
		{Position: 0, BodyDigest: x, Expiration: "60000", Timestamp: ts},
		{Position: 1, BodyDigest: x, Expiration: "600000", Timestamp: ts},
		{Position: 2, BodyDigest: z, Expiration: "20000", Timestamp: ts},
	}
	for i, m := range msgs {
		ttl, _ := time.ParseDuration(m.Expiration + "ms")
		in = append(in, UnblockInput{BodyDigest: m.BodyDigest, Expiration: m.Expiration, Timestamp: ts,
			Mark: topology.HoLMark{Position: i, DueAt: ts.Add(ttl), TTL: ttl, BlockedBy: -1}})
	}
	u, err := PlanUnblock("work3.delay", topology.QueueSettings{HasDeadLetterExchange: true, HasDeadLetterRoutingKey: true, DeadLetterRoutingKey: "work3"}, in, 0, now)
	if err != nil || len(u.Picks) != 2 {
		t.Fatalf("plan: %+v %v", u, err)
	}
	spec := Spec{From: "work3.delay", To: u.Target, Now: now, Pick: u.Pick()}
	p := mustPlanner(t, v, spec)
	got := []string{}
	for _, m := range msgs {
		r := p.Plan(m)
		got = append(got, fmt.Sprintf("%v %s %s", r.Moves(), r.Queue, r.Expiration))
	}
	want := []string{"true " + retry.ReplayQueueName("", "work3", 55000) + " 55000", "true " + retry.ReplayQueueName("", "work3", 595000) + " 595000", "false  "}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// The 10-minute one seen first (the 60 s one left) is not the 60 s
	// pick; one further back than the peek saw it is no pick at all.
	p = mustPlanner(t, v, spec)
	ten := msgs[1]
	ten.Position = 0
	if r := p.Plan(ten); !r.Moves() || r.Pick != 2 || r.Expiration != "595000" {
		t.Errorf("the 10-minute one at the head: %+v", r)
	}
	p = mustPlanner(t, v, spec)
	back := msgs[0]
	back.Position = 1
	if r := p.Plan(back); !r.Unmatched {
		t.Errorf("further back than the peek saw it: %+v", r)
	}
	if p.PicksMissed() != 2 {
		t.Errorf("missed %d", p.PicksMissed())
	}
}

// A pick is published with what remains of its delay then, not at the
// peek: its own expiration to the millisecond, in the wait queue of that
// delay rounded up to the second, so the time spent confirming adds no
// lateness. The plan confirmed at the peek still holds (the same way to
// the same target), and an overdue pick still dead-letters, at once.
func TestMovePlannerPublishesThePickWithWhatRemains(t *testing.T) {
	v := &topology.Vhost{Queues: []topology.Queue{
		{Name: "work", Type: topology.QueueClassic},
		{Name: "delay", Type: topology.QueueClassic, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}},
	}}
	peek := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := peek
	pick := Pick{Position: 0, MessageID: "head", Expiration: "600000", Delay: 600 * time.Second, DueAt: peek.Add(599500 * time.Millisecond)}
	spec := Spec{From: "delay", To: Target{Kind: TargetQueue, Name: "work"}, Now: peek, Pick: []Pick{pick},
		Clock: func() time.Time { return clock }}
	m := Message{MessageID: "head", Expiration: "600000"}
	preview := mustPlanner(t, v, spec).Plan(m)
	confirmed := spec
	confirmed.Expect = []Route{preview}
	for _, c := range []struct {
		after time.Duration
		ttl   int64
		want  string
	}{{0, 600000, "599500"}, {30 * time.Second, 570000, "569500"}, {30*time.Second + 600*time.Millisecond, 569000, "568900"}, {10 * time.Minute, 1000, "0"}} {
		clock = peek.Add(c.after)
		r := mustPlanner(t, v, confirmed).Plan(m)
		if !r.Moves() || r.Queue != retry.ReplayQueueName("", "work", c.ttl) || r.WaitQueueArgs["x-message-ttl"] != c.ttl || r.Expiration != c.want || r.SetHeaders[HeaderOriginalExpiration] != "600000" {
			t.Errorf("published %v after the peek: %+v", c.after, r)
		}
	}
}
