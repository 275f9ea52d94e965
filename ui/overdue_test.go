package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/sim"
)

// The demo's payments.wait is fed by a worker publishing retries with
// their own expirations (no queue TTL): a read past its head releases the
// overdue messages behind it (the simulation expires only the head, as
// RabbitMQ does). Opening it asks first, saying at most how many and
// where; n reads nothing and releases nothing; y peeks, and the banner
// says what the read released.
func TestOpeningAnOverdueWaitQueueAsksFirst(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := sim.New(sim.Options{Seed: 3, Now: func() time.Time { return now }, WarmUp: 10 * time.Minute})
	t.Cleanup(func() { s.Close() })
	h := newHarnessOn(t, s, Options{PeekLimit: 1000}, 160, 40).start()
	depth := func() int64 {
		snap, err := s.Snapshot(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		q, _ := snap.Queue(sim.PaymentsWait)
		return q.Ready
	}
	before := depth()
	h.key("/")
	h.typeText(sim.PaymentsWait)
	h.key("enter", "enter")
	if h.m.top() != h.m.prompt {
		t.Fatalf("opened without asking: on %T\n%s", h.m.top(), h.plain())
	}
	got := flat(h.plain())
	if !strings.Contains(got, "overdue messages to queue payments.process") || !strings.Contains(got, "may release at most") {
		t.Fatalf("the question does not say what the read releases, and where:\n%s", h.plain())
	}
	h.key("n")
	if h.m.top() == screen(h.m.browser) {
		t.Fatalf("n opened the queue")
	}
	if d := depth(); d != before {
		t.Fatalf("n released messages: %d ready, was %d", d, before)
	}
	h.key("enter")
	if h.m.top() != h.m.prompt {
		t.Fatalf("opened again without asking: on %T\n%s", h.m.top(), h.plain())
	}
	h.key("y")
	h.mustContain("left the queue during the peek")
	if d := depth(); d >= before {
		t.Errorf("y released nothing: %d ready, was %d", d, before)
	}
}
