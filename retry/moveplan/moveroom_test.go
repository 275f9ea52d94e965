package moveplan

import (
	"github.com/ladder-tui/ladder/retry/topology"
	"strings"
	"testing"
)

// limited is a source and a target "orders" with the given arguments and
// policy, holding ready messages.
func limited(args, policy map[string]any, ready int64) *topology.Vhost {
	return &topology.Vhost{Name: "/", Queues: []topology.Queue{
		{Name: "src", Type: topology.QueueClassic},
		{Name: "orders", Type: topology.QueueClassic, Arguments: args, Policy: policy, Ready: ready, ReadyBytes: ready * 10},
	}}
}

func planN(p *Planner, n, size int) (moved, stopped int, rs []Route) {
	for i := range n {
		r := p.Plan(Message{Position: i, MessageID: "m", Body: make([]byte, size)})
		rs = append(rs, r)
		switch {
		case r.Moves():
			moved++
		case r.Stop:
			stopped++
		}
	}
	return moved, stopped, rs
}

func toOrders(force bool) Spec {
	return Spec{From: "src", To: Target{Kind: TargetQueue, Name: "orders"}, Force: force}
}

// x-max-length 100 (drop-head), 500 to move: 100 move, the move stops at
// the 101st, and the plan says by how much it would overflow.
func TestPlanStopsBeforeADropHeadTargetDrops(t *testing.T) {
	p := mustPlanner(t, limited(map[string]any{"x-max-length": int64(100)}, nil, 0), toOrders(false))
	moved, stopped, rs := planN(p, 500, 10)
	if moved != 100 || stopped != 400 {
		t.Fatalf("moved %d, stopped %d; want 100 and 400", moved, stopped)
	}
	if !strings.Contains(rs[100].Skip, "orders is full (at most 100 messages): moving it would drop the oldest message from its head") ||
		!strings.Contains(rs[101].Skip, "the move stops at message #100") {
		t.Errorf("skips %q / %q", rs[100].Skip, rs[101].Skip)
	}
	notes := p.RoomNotes()
	if len(notes) != 1 || !strings.Contains(notes[0], "orders holds at most 100 messages (0 ready): 500 would drop 400 from its head, so the move stops after 100 and 400 stay in src") {
		t.Errorf("notes %q", notes)
	}
	// --force moves them all, saying what it does.
	p = mustPlanner(t, limited(map[string]any{"x-max-length": int64(100)}, nil, 0), toOrders(true))
	if moved, _, rs := planN(p, 500, 10); moved != 500 || !strings.Contains(rs[499].Note, "--force moves it anyway") {
		t.Errorf("forced: moved %d, note %q", moved, rs[499].Note)
	}
}

// Ready messages count, a policy limit counts (the smaller of argument and
// policy), bytes count, and reject-publish-dlx stops too.
func TestPlanRoomFromPolicyReadyAndBytes(t *testing.T) {
	for _, tt := range []struct {
		name         string
		args, policy map[string]any
		ready        int64
		size, moved  int
	}{
		{"policy max-length", nil, map[string]any{"max-length": 50}, 20, 10, 30},
		{"argument below policy", map[string]any{"x-max-length": int64(40)}, map[string]any{"max-length": 50}, 0, 10, 40},
		{"bytes", map[string]any{"x-max-length-bytes": int64(1000)}, nil, 10, 100, 9}, // 100 bytes ready
		{"reject-publish-dlx", map[string]any{"x-max-length": int64(5), "x-overflow": "reject-publish-dlx"}, nil, 0, 1, 5},
	} {
		p := mustPlanner(t, limited(tt.args, tt.policy, tt.ready), toOrders(false))
		if moved, _, _ := planN(p, 100, tt.size); moved != tt.moved {
			t.Errorf("%s: moved %d, want %d", tt.name, moved, tt.moved)
		}
	}
}

// reject-publish: the broker refuses what does not fit and it stays in
// the source; ladder publishes (the queue may have room by then) and says
// how many it expects refused.
func TestPlanRejectPublishTargetIsNotedNotStopped(t *testing.T) {
	p := mustPlanner(t, limited(map[string]any{"x-max-length": int64(100), "x-overflow": "reject-publish"}, nil, 0), toOrders(false))
	moved, stopped, rs := planN(p, 500, 1)
	if moved != 500 || stopped != 0 || !strings.Contains(rs[300].Note, "refuses more (x-overflow reject-publish)") {
		t.Fatalf("moved %d stopped %d note %q", moved, stopped, rs[300].Note)
	}
	if n := p.RoomNotes(); len(n) != 1 || !strings.Contains(n[0], "about 400 of 500 will be refused and stay in src") {
		t.Errorf("notes %q", n)
	}
}

// A long move reads the target again: a policy added mid-move (or the
// queue filling from elsewhere) stops it before it drops anything.
func TestRereadSeesAPolicyAddedMidMove(t *testing.T) {
	v := limited(nil, nil, 0)
	policy := map[string]any{}
	spec := toOrders(false)
	spec.Policy = func(q, typ string) (map[string]any, bool) {
		return policy, q == "orders" && typ == topology.QueueClassic
	}
	p := mustPlanner(t, v, spec)
	if moved, _, _ := planN(p, 50, 1); moved != 50 {
		t.Fatal("no limit yet, yet not moved")
	}
	if got := p.ReachedQueues(); len(got) != 1 || got[0] != "orders" {
		t.Fatalf("reached %v", got)
	}
	policy["max-length"] = 60
	p.Reread("orders", 45, 5) // 45 ready now, 5 more in flight
	moved, stopped, _ := planN(p, 20, 1)
	if moved != 10 || stopped != 10 {
		t.Errorf("after the policy: moved %d stopped %d, want 10 and 10", moved, stopped)
	}
}

// The policy that applies is worked out as the broker does: pattern and
// apply-to, the highest priority, operator limits merged in (the smaller).
func TestEffectivePolicy(t *testing.T) {
	user := []topology.PolicyDef{
		{Name: "low", Pattern: "^orders", ApplyTo: "queues", Priority: 0, Definition: map[string]any{"max-length": float64(500), "message-ttl": float64(1)}},
		{Name: "high", Pattern: "^orders\\.", ApplyTo: "all", Priority: 5, Definition: map[string]any{"max-length": float64(300)}},
		{Name: "exchanges", Pattern: ".*", ApplyTo: "exchanges", Priority: 9, Definition: map[string]any{"alternate-exchange": "x"}},
		{Name: "qq", Pattern: ".*", ApplyTo: "quorum_queues", Priority: 8, Definition: map[string]any{"max-length": float64(7)}},
	}
	op := []topology.PolicyDef{{Name: "cap", Pattern: ".*", ApplyTo: "queues", Definition: map[string]any{"max-length": float64(200), "max-length-bytes": float64(9)}}}
	def, ok := topology.EffectivePolicy("orders.audit", topology.QueueClassic, user, op)
	if !ok || def["max-length"] != float64(200) || def["max-length-bytes"] != float64(9) || def["message-ttl"] != nil {
		t.Errorf("classic: %v %v", def, ok)
	}
	if def, _ := topology.EffectivePolicy("orders.audit", topology.QueueQuorum, user, nil); def["max-length"] != float64(7) {
		t.Errorf("quorum: %v", def)
	}
	if def, _ := topology.EffectivePolicy("payments", topology.QueueClassic, user, nil); len(def) != 0 {
		t.Errorf("no match: %v", def)
	}
	if _, ok := topology.EffectivePolicy("q", topology.QueueClassic, []topology.PolicyDef{{Pattern: "(?<=a)b"}}, nil); ok {
		t.Error("a pattern Go cannot read must not be taken as matching nothing")
	}
}
