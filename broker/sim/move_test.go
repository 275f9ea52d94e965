package sim

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/pace"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// dlqWith puts messages in orders.dlq the way the worker does: published to
// orders.topic, rejected from orders.process.
func dlqWith(t *testing.T, s *Sim, keys ...string) {
	t.Helper()
	for i, k := range keys {
		s.testPublish(t, OrdersExchange, k, "m"+string(rune('0'+i)), "", retry.Headers{"x-retry-count": int32(3)})
		s.testReject(t, OrdersMain)
	}
}

func move(t *testing.T, s *Sim, req broker.MoveRequest) *broker.MoveReport {
	t.Helper()
	rep, err := s.Move(context.Background(), req, nil)
	if err != nil && !(errors.Is(err, broker.ErrPartial) && rep.Moved < rep.Requested) {
		t.Fatal(err)
	}
	return rep
}

func TestMoveToOriginReturnsWithTheOriginalKey(t *testing.T) {
	s := quiet(t)
	dlqWith(t, s, "orders.created", "orders.paid")
	s.testPublish(t, "", OrdersDLQ, "no-origin", "", nil) // never dead-lettered
	rep := move(t, s, broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}})
	if rep.Requested != 3 || rep.Moved != 2 || rep.Skipped != 1 || rep.Via[topology.ViaDirect] != 2 || rep.Target != "origin" {
		t.Errorf("report = %+v", rep)
	}
	if len(rep.Planned) != 1 || rep.Planned[0].MessageID != "no-origin" || rep.Planned[0].Skip == "" {
		t.Errorf("planned = %+v, want the skipped message with its reason", rep.Planned)
	}
	if got := ids(peek(t, s, OrdersDLQ)); !slices.Equal(got, []string{"no-origin"}) {
		t.Errorf("left in the DLQ: %v", got)
	}
	back := peek(t, s, OrdersMain)
	if len(back) != 2 {
		t.Fatalf("orders.process holds %d, want 2", len(back))
	}
	for i, key := range []string{"orders.created", "orders.paid"} {
		m := back[i]
		if m.Exchange != OrdersExchange || m.RoutingKey != key || m.Headers[MovedFromHeader] != OrdersDLQ {
			t.Errorf("moved message %d: via %s/%s, moved-from %v", i, m.Exchange, m.RoutingKey, m.Headers[MovedFromHeader])
		}
		if m.Retry.Count != 3 {
			t.Errorf("retry count changed without ResetRetries: %+v", m.Retry)
		}
		if id, _ := m.Headers[broker.HeaderMoveID].(string); !strings.HasPrefix(id, "sim") {
			t.Errorf("moved message %d has no %s: %v", i, broker.HeaderMoveID, m.Headers)
		}
	}
}

func TestMoveWithDelayUsesTheExactTier(t *testing.T) {
	s := quiet(t)
	dlqWith(t, s, "orders.paid")
	rep := move(t, s, broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}, Delay: 30 * time.Second})
	if rep.Moved != 1 || rep.Via[topology.ViaTier] != 1 || rep.DelayMS != 30_000 {
		t.Fatalf("report = %+v", rep)
	}
	if d := depth(t, s, OrdersWait30s); d != 1 {
		t.Fatalf("orders.wait.30s holds %d, want the moved message", d)
	}
	s.Advance(29 * time.Second)
	if d := depth(t, s, OrdersMain); d != 0 {
		t.Fatal("back before the tier's TTL")
	}
	s.Advance(time.Second)
	back := peek(t, s, OrdersMain)
	if len(back) != 1 || back[0].Exchange != OrdersExchange || back[0].RoutingKey != "orders.paid" {
		t.Fatalf("after 30s orders.process holds %+v, want the message with orders.paid", back)
	}
}

// No tier waits 7 s: a per-delay queue is declared that dead-letters to the
// target, and it is deleted (x-expires) once unused.
func TestMoveWithDelayWithoutTierDeclaresADelayQueue(t *testing.T) {
	s := quiet(t)
	dlqWith(t, s, "orders.created")
	rep := move(t, s, broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}, Delay: 7 * time.Second})
	name := retry.ReplayQueueName(OrdersExchange, "orders.created", 7000)
	if rep.Moved != 1 || rep.Via[topology.ViaDelayQueue] != 1 {
		t.Fatalf("report = %+v", rep)
	}
	if d := depth(t, s, name); d != 1 {
		t.Fatalf("%s holds %d", name, d)
	}
	snap, _ := s.Snapshot(context.Background())
	q, ok := snap.Queue(name)
	if !ok || q.Arguments["x-expires"] != 7000+retry.WaitQueueLinger.Milliseconds() || q.Arguments["x-dead-letter-exchange"] != OrdersExchange {
		t.Errorf("delay queue = %+v", q)
	}
	s.Advance(7 * time.Second)
	if back := peek(t, s, OrdersMain); len(back) != 1 || back[0].RoutingKey != "orders.created" {
		t.Fatalf("after 7s orders.process holds %+v", back)
	}
	s.Advance(retry.WaitQueueLinger - time.Second)
	snap, _ = s.Snapshot(context.Background())
	if _, ok := snap.Queue(name); !ok {
		t.Fatal("the delay queue was deleted before its x-expires")
	}
	s.Advance(time.Second)
	snap, _ = s.Snapshot(context.Background())
	if _, ok := snap.Queue(name); ok {
		t.Error("the delay queue outlived its x-expires")
	}
}

func TestMoveDryRunMovesNothing(t *testing.T) {
	s := quiet(t)
	dlqWith(t, s, "orders.created", "orders.paid")
	rep := move(t, s, broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}, Delay: 5 * time.Second, DryRun: true})
	if !rep.DryRun || rep.Moved != 0 || rep.Requested != 2 || len(rep.Planned) != 2 || rep.Via[topology.ViaTier] != 2 {
		t.Fatalf("report = %+v", rep)
	}
	if p := rep.Planned[1]; p.Exchange != OrdersRetry || p.RoutingKey != "orders.paid" || p.Queue != OrdersWait5s || p.SetHeaders[TierHeader] != OrdersWait5s {
		t.Errorf("planned = %+v", p)
	}
	if depth(t, s, OrdersDLQ) != 2 || depth(t, s, OrdersWait5s) != 0 {
		t.Error("a dry run moved messages")
	}
}

func TestMovePositionsLimitAndReset(t *testing.T) {
	s := quiet(t)
	dlqWith(t, s, "orders.created", "orders.created", "orders.created", "orders.created")
	rep := move(t, s, broker.MoveRequest{
		From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: OrdersMain},
		Positions: []int{3, 1, 0}, Limit: 2, ResetRetries: true,
	})
	if rep.Moved != 2 || rep.Target != "queue:"+OrdersMain {
		t.Fatalf("report = %+v", rep)
	}
	if got := ids(peek(t, s, OrdersDLQ)); !slices.Equal(got, []string{"m2", "m3"}) {
		t.Errorf("left = %v, want [m2 m3]", got)
	}
	back := peek(t, s, OrdersMain)
	if got := ids(back); !slices.Equal(got, []string{"m0", "m1"}) {
		t.Errorf("moved = %v, want [m0 m1] in queue order", got)
	}
	if back[0].Headers["x-retry-count"] != int32(0) || back[0].Exchange != "" || back[0].RoutingKey != OrdersMain {
		t.Errorf("moved message: count %#v via %q/%q", back[0].Headers["x-retry-count"], back[0].Exchange, back[0].RoutingKey)
	}
}

func TestMoveExchangeTargetUnroutableStays(t *testing.T) {
	s := quiet(t)
	dlqWith(t, s, "orders.created")
	rep := move(t, s, broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetExchange, Name: OrdersExchange, RoutingKey: "nothing.here", HasKey: true}})
	if rep.Skipped != 1 || rep.Moved != 0 || depth(t, s, OrdersDLQ) != 1 || !strings.Contains(rep.Planned[0].Skip, "routes to no queue") {
		t.Errorf("report = %+v, DLQ depth %d", rep, depth(t, s, OrdersDLQ))
	}
	if _, err := s.Move(context.Background(), broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetExchange, Name: "missing"}}, nil); err == nil {
		t.Error("moving to a missing exchange: no error")
	}
}

func TestMoveReportsProgressPerBatch(t *testing.T) {
	s := quiet(t)
	for range 250 {
		s.testPublish(t, "", OrdersDLQ, "m", "", nil)
	}
	var seen []broker.MoveProgress
	rep, err := s.Move(context.Background(), broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: OrdersMain}},
		func(p broker.MoveProgress) { seen = append(seen, p) })
	if err != nil || rep.Moved != 250 {
		t.Fatalf("rep %+v err %v", rep, err)
	}
	if len(seen) != 3 || seen[2].Done != 250 || seen[2].Total != 250 || seen[0].Moved != moveBatch {
		t.Errorf("progress = %+v", seen)
	}
}

func TestMoveReadOnly(t *testing.T) {
	s := New(Options{Now: fixedClock, Quiet: true, ReadOnly: true})
	defer s.Close()
	dlqWith(t, s, "orders.created")
	_, err := s.Move(context.Background(), broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}}, nil)
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("err = %v, want a read-only refusal", err)
	}
	if !s.ReadOnly() {
		t.Error("ReadOnly() false")
	}
	rep, err := s.Move(context.Background(), broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}, DryRun: true}, nil)
	if err != nil || len(rep.Planned) != 1 {
		t.Errorf("a dry run changes nothing and is allowed read-only: %+v, %v", rep, err)
	}
	if depth(t, s, OrdersDLQ) != 1 {
		t.Error("read-only move moved")
	}
}

// An exhausted retry's origin is the retry exchange (x-first-death is the
// first tier): moving there lands it in a tier again, and the report says so.
// An exhausted retry first died in a tier (entered through orders.retry);
// "origin" still sends it back to orders.topic, where orders.process got it.
func TestMoveExhaustedRetryToOriginGoesBackToTheMainExchange(t *testing.T) {
	s := busy(t, Options{Seed: 7})
	s.Advance(10 * time.Minute)
	var pos []int
	for _, m := range peek(t, s, OrdersDLQ) {
		if len(m.Deaths) > 1 {
			pos = append(pos, m.Position)
		}
	}
	if len(pos) == 0 {
		t.Fatal("no exhausted retry in the DLQ")
	}
	rep := move(t, s, broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}, Positions: pos[:1], DryRun: true})
	if len(rep.Planned) != 1 || rep.Planned[0].Exchange != OrdersExchange {
		t.Errorf("planned = %+v, want it published to %s", rep.Planned, OrdersExchange)
	}
}

// A paused move takes nothing more until it is resumed.
func TestMovePausesAtTheGate(t *testing.T) {
	s := quiet(t)
	for range 250 {
		s.testPublish(t, "", OrdersDLQ, "m", "", nil)
	}
	var g pace.Hold
	g.Pause()
	done := make(chan *broker.MoveReport)
	go func() {
		rep, _ := s.Move(context.Background(), broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: OrdersMain}, Hold: &g}, nil)
		done <- rep
	}()
	time.Sleep(100 * time.Millisecond)
	if d := depth(t, s, OrdersMain); d != 0 || !g.Paused() {
		t.Fatalf("moved %d while paused", d)
	}
	g.Resume()
	select {
	case rep := <-done:
		if rep.Moved != 250 {
			t.Errorf("%+v", rep)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a resumed move never finished")
	}
}
