package sim

import (
	"context"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// t0 is the fixed wall clock of every test: only Advance moves the sim.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fixedClock() time.Time { return t0 }

// quiet is the demo topology with no workload.
func quiet(t *testing.T) *Sim {
	t.Helper()
	s := New(Options{Seed: 1, Now: fixedClock, Quiet: true})
	t.Cleanup(func() { s.Close() })
	return s
}

func busy(t *testing.T, opt Options) *Sim {
	t.Helper()
	opt.Now = fixedClock
	s := New(opt)
	t.Cleanup(func() { s.Close() })
	return s
}

func (s *Sim) testDeclare(t *testing.T, name string, args map[string]any) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.declareQueue(name, args); err != nil {
		t.Fatal(err)
	}
}

func (s *Sim) testPublish(t *testing.T, exchange, key, id, expiration string, h retry.Headers) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.now.Truncate(time.Second)
	p := broker.Properties{MessageID: id, Expiration: expiration, Timestamp: &ts, ContentType: "application/json"}
	if _, err := s.publish(exchange, key, p, h, []byte(`{"id":"`+id+`"}`)); err != nil {
		t.Fatal(err)
	}
}

// testReject is a consumer taking the head of queue and nacking it with
// requeue=false.
func (s *Sim) testReject(t *testing.T, queue string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.byName[queue]
	if q == nil || len(q.ready) == 0 {
		t.Fatalf("nothing to reject in %s", queue)
	}
	s.deadLetter(q, q.pop(), retry.ReasonRejected)
}

func depth(t *testing.T, s *Sim, queue string) int {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.byName[queue]
	if q == nil {
		t.Fatalf("no queue %s", queue)
	}
	return len(q.ready)
}

func peek(t *testing.T, s *Sim, queue string) []broker.Message {
	t.Helper()
	// Forced: the tests that use it look at what a read shows, overdue
	// messages released included (peek_overdue_test.go asks first).
	r, err := s.Peek(context.Background(), queue, broker.PeekOptions{Limit: 1000, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	return r.Messages
}

func ids(ms []broker.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Properties.MessageID
	}
	return out
}
