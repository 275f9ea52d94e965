package retry

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func unblockInputs(now time.Time, ttls ...time.Duration) []UnblockInput {
	var in []HoLInput
	for _, d := range ttls {
		in = append(in, HoLInput{Expiration: d, HasExpiration: true, Timestamp: now.Add(-time.Second)})
	}
	marks := HoL(in, 0, now).Marks
	out := make([]UnblockInput, len(marks))
	for i, m := range marks {
		out[i] = UnblockInput{MessageID: fmt.Sprint("m", i), BodyDigest: "d", Mark: m}
	}
	return out
}

var waitSet = QueueSettings{HasDeadLetterExchange: true, DeadLetterExchange: "", HasDeadLetterRoutingKey: true, DeadLetterRoutingKey: "work"}

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
	in[0].Mark = HoLMark{Position: 0, NeverDue: true, BlockedBy: -1}
	in[1].Mark.Estimated = true
	u, err := PlanUnblock("delay", waitSet, in, 0, now)
	if err != nil || len(u.Picks) != 0 || len(u.Notes) != 2 ||
		!strings.Contains(u.Notes[0], "never-due") || !strings.Contains(u.Notes[1], "no timestamp") {
		t.Fatalf("%+v %v", u, err)
	}
	if _, err := PlanUnblock("delay", QueueSettings{}, in, 0, now); err == nil || !strings.Contains(err.Error(), "no dead-letter exchange") {
		t.Errorf("no DLX: %v", err)
	}
	if _, err := PlanUnblock("delay", QueueSettings{HasDeadLetterExchange: true}, in, 0, now); err == nil || !strings.Contains(err.Error(), "back to itself") {
		t.Errorf("default exchange, own keys: %v", err)
	}
}

// The planner moves exactly the picked messages, each into a per-delay
// queue with its own remaining delay; the rest are left alone.
func TestMovePlannerPicksWithTheirOwnDelays(t *testing.T) {
	v := &Vhost{Queues: []Queue{
		{Name: "work", Type: QueueClassic},
		{Name: "delay", Type: QueueClassic, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}},
	}}
	spec := MoveSpec{From: "delay", To: Target{Kind: TargetQueue, Name: "work"},
		Pick: map[string]time.Duration{PickKey("head", "d0"): 599 * time.Second, PickKey("mid", "d2"): 42 * time.Second}}
	p := mustPlanner(t, v, spec)
	msgs := []MoveMessage{{Position: 0, MessageID: "head", BodyDigest: "d0", Expiration: "600000"}, {Position: 1, MessageID: "short", BodyDigest: "d1", Expiration: "5000"},
		{Position: 2, MessageID: "mid", BodyDigest: "d2", Expiration: "60000"}}
	want := map[string]int64{"head": 599000, "mid": 42000}
	for _, m := range msgs {
		r := p.Plan(m)
		ms, picked := want[m.MessageID]
		switch {
		case !picked && !r.Unmatched:
			t.Errorf("%s moves: %+v", m.MessageID, r)
		case picked && (r.Via != ViaDelayQueue || r.WaitQueueArgs["x-message-ttl"] != ms || r.Expiration != "" || r.WaitQueueArgs["x-dead-letter-routing-key"] != "work"):
			t.Errorf("%s: %+v", m.MessageID, r)
		}
	}
	// The confirmed plan is matched by identity: positions shift once the
	// head leaves and the broker expires what was due behind it.
	head := p.Plan(msgs[0])
	spec.Expect = []MoveRoute{head}
	p = mustPlanner(t, v, spec)
	moved := msgs[0]
	moved.Position = 7
	if r := p.Plan(moved); !r.Moves() {
		t.Errorf("the head at another position: %+v", r)
	}
}
