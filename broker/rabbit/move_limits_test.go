package rabbit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// countAll counts every message of the queues by id (taking them out).
func (f *fixture) countAll(queues ...string) map[string]int {
	f.t.Helper()
	out := map[string]int{}
	for _, q := range queues {
		for id, n := range idsOf(f.drain(q, 500*time.Millisecond)) {
			out[id] += n
		}
	}
	return out
}

// everyOnce checks that ids prefix-0 … prefix-(n-1) are each there once.
func everyOnce(t *testing.T, seen map[string]int, prefix string, n int) {
	t.Helper()
	missing, dups := 0, 0
	for i := range n {
		switch c := seen[fmt.Sprintf("%s-%d", prefix, i)]; {
		case c == 0:
			missing++
		case c > 1:
			dups += c - 1
		}
	}
	if missing > 0 || dups > 0 || len(seen) != n {
		t.Errorf("%d missing, %d duplicated, %d ids (want %d)", missing, dups, len(seen), n)
	}
}

// x-max-length 100 (drop-head) and 500 to move: the dry run says 400
// would drop, the move stops at 100 and 400 stay; none lost.
func TestMoveStopsBeforeADropHeadTargetDrops(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", amqp.Table{"x-max-length": int32(100)})
	const n = 500
	f.publishN(src, n, "m")
	l := f.live(false)
	req := broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}
	dry := req
	dry.DryRun = true
	plan, err := l.Move(context.Background(), dry, nil)
	if err != nil {
		t.Fatal(err)
	}
	moving, stops := 0, 0
	for _, p := range plan.Planned {
		switch {
		case p.Moves():
			moving++
		case p.Stop:
			stops++
		}
	}
	want := fmt.Sprintf("%s holds at most 100 messages (0 ready): 500 would drop 400 from its head, so the move stops after 100 and 400 stay in %s", dst, src)
	if moving != 100 || stops != 400 || !strings.Contains(strings.Join(plan.Notes, "\n"), want) {
		t.Fatalf("dry run: %d moving, %d stopped, notes %q", moving, stops, plan.Notes)
	}
	rep, err := l.Move(context.Background(), req, nil)
	if !errors.Is(err, broker.ErrPartial) || rep.Moved != 100 || rep.DuplicatesPossible {
		t.Fatalf("move: %+v %v", rep, err)
	}
	f.waitStable(src)
	if f.depth(dst) != 100 || f.depth(src) != 400 {
		t.Errorf("dst %d, src %d", f.depth(dst), f.depth(src))
	}
	everyOnce(t, f.countAll(src, dst), "m", n)
}

// reject-publish: the broker refuses what does not fit (basic.nack); those
// stay in the source and nothing is claimed as a possible duplicate.
func TestMoveToARejectPublishTargetKeepsWhatItRefuses(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", amqp.Table{"x-max-length": int32(100), "x-overflow": "reject-publish"})
	const n = 300
	f.publishN(src, n, "m")
	rep, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}, nil)
	if !errors.Is(err, broker.ErrPartial) || rep.Moved != 100 || rep.Failed != 200 || rep.DuplicatesPossible {
		t.Fatalf("move: %+v %v", rep, err)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "refuses more (x-overflow reject-publish)") {
		t.Errorf("notes %q", rep.Notes)
	}
	f.waitStable(src)
	everyOnce(t, f.countAll(src, dst), "m", n)
}

// A policy limits the target while the move runs: the move reads its
// target again, stops before it overflows, and loses nothing.
func TestMoveStopsWhenAPolicyLimitsTheTargetMidMove(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newVhostFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	const n, limit = 20000, 8000
	f.publishN(src, n, "m")
	policy, _ := json.Marshal(map[string]any{"pattern": "^" + dst + "$", "apply-to": "queues", "definition": map[string]any{"max-length": limit}})
	set := false
	l := f.live(false)
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Rate: 4000},
		func(p broker.MoveProgress) {
			if !set && p.Moved >= 1000 {
				set = true
				if err := brokertest.API(f.r, http.MethodPut, "policies/"+url.PathEscape(f.r.Vhost)+"/ladder-test-limit", policy); err != nil {
					t.Error(err)
				}
			}
		})
	if !set {
		t.Fatalf("the move ended before the policy: %+v %v", rep, err)
	}
	if !errors.Is(err, broker.ErrPartial) || rep.Moved > limit || rep.Moved < 1000 {
		t.Fatalf("move: moved %d of %d (%v), notes %q", rep.Moved, n, err, rep.Notes)
	}
	t.Logf("moved %d of %d; stopped: %v", rep.Moved, n, err)
	for deadline := time.Now().Add(30 * time.Second); f.depth(src)+f.depth(dst) < n && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // held messages are back in the source
	}
	if d := f.depth(dst); d > limit {
		t.Errorf("dst holds %d", d)
	}
	everyOnce(t, f.countAll(src, dst), "m", n)
}

// A slow step after taking a message (a wait queue's declare on a busy
// broker) is not the source going quiet: with deliveries waiting, the move
// goes on. (It stopped after the first message about half the times each
// such step came: the idle tick and a waiting delivery were picked at
// random.)
func TestASlowTakeIsNotAnIdleSource(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	const n = 50
	f.publishN(src, n, "m")
	rabbit.SlowTake(t, 5, 2500*time.Millisecond) // each longer than moveIdle
	rep, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}, nil)
	if err != nil || rep.Moved != n {
		t.Fatalf("moved %d of %d: %v", rep.Moved, n, err)
	}
	everyOnce(t, f.countAll(src, dst), "m", n)
}
