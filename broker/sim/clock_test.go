package sim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// The simulation follows the wall clock lazily, times Speed, on every call.
func TestClockFollowsWallTimesSpeed(t *testing.T) {
	var mu sync.Mutex
	wall := t0
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return wall }
	tick := func(d time.Duration) { mu.Lock(); wall = wall.Add(d); mu.Unlock() }

	s := New(Options{Speed: 10, Now: now, Quiet: true})
	defer s.Close()
	start := s.Now()
	if !start.Equal(t0) {
		t.Fatalf("sim starts at %v, want the wall clock %v", start, t0)
	}
	s.testPublish(t, "", OrdersWait5s, "m", "", nil)
	tick(400 * time.Millisecond) // 4 s simulated: still waiting
	if d := depth(t, s, OrdersWait5s); d != 1 {
		t.Fatalf("depth %d (depth itself does not advance; Now does)", d)
	}
	if got := s.Now().Sub(start); got != 4*time.Second {
		t.Fatalf("sim advanced %v, want 4s", got)
	}
	tick(100 * time.Millisecond)
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := snap.Queue(OrdersWait5s); q.Messages != 0 {
		t.Errorf("after 5 simulated seconds the tier still holds %d", q.Messages)
	}
	if !snap.TakenAt.Equal(t0.Add(5 * time.Second)) {
		t.Errorf("TakenAt = %v", snap.TakenAt)
	}
	s.Advance(time.Minute)
	if got := s.Now().Sub(start); got != 65*time.Second {
		t.Errorf("after Advance: %v", got)
	}
}

func TestWarmUpStartsInThePast(t *testing.T) {
	s := New(Options{Now: fixedClock, WarmUp: 2 * time.Minute, Seed: 2})
	defer s.Close()
	if !s.Now().Equal(t0) {
		t.Errorf("after warm-up the sim reads %v, want the wall clock", s.Now())
	}
	if st := s.Stats(); st.Published < 100 {
		t.Errorf("warm-up published %d", st.Published)
	}
}

func TestCloseStopsEverything(t *testing.T) {
	s := New(Options{Now: fixedClock})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Snapshot(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Snapshot after Close: %v", err)
	}
	if _, err := s.Peek(ctx, OrdersMain, broker.PeekOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Peek after Close: %v", err)
	}
	if _, err := s.Move(ctx, broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Move after Close: %v", err)
	}
	if _, err := s.Vhosts(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Vhosts after Close: %v", err)
	}
}

func TestVhosts(t *testing.T) {
	s := quiet(t)
	v, err := s.Vhosts(context.Background())
	if err != nil || len(v) != 1 || v[0] != "/" || s.Vhost() != "/" {
		t.Errorf("vhosts %v %v, vhost %q", v, err, s.Vhost())
	}
}

// The UI calls the client from many goroutines; run with -race.
func TestConcurrentCalls(t *testing.T) {
	var mu sync.Mutex
	wall := t0
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); wall = wall.Add(50 * time.Millisecond); return wall }
	s := New(Options{Speed: 20, Now: now, Seed: 5})
	defer s.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 30 {
				switch i % 4 {
				case 0:
					if _, err := s.Snapshot(ctx); err != nil {
						t.Error(err)
					}
				case 1:
					if _, err := s.Peek(ctx, PaymentsWait, broker.PeekOptions{Limit: 20, Force: true}); err != nil {
						t.Error(err)
					}
				case 2:
					_, err := s.Move(ctx, broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}, Limit: 1},
						func(broker.MoveProgress) { _, _ = s.Snapshot(ctx) }) // the callback may call back in
					if err != nil && !errors.Is(err, broker.ErrPartial) { // the worker may take it first
						t.Error(err)
					}
				case 3:
					s.Advance(time.Second)
				}
			}
		})
	}
	wg.Wait()
}
