package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// holQueue is the HoL wait queue of the issue, published to straight: a
// 1-hour head and 500 behind it at 5 s, no queue TTL, dead-lettering to
// work; by the time it is read the 500 are overdue.
func holQueue(t *testing.T) *Sim {
	s := quiet(t)
	s.testDeclare(t, "work", nil)
	s.testDeclare(t, "work.delay", map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"})
	s.testPublish(t, "", "work.delay", "head", "3600000", nil)
	for i := range 500 {
		s.testPublish(t, "", "work.delay", fmt.Sprint("short-", i), "5000", nil)
	}
	s.Advance(10 * time.Second)
	return s
}

// A read past the head of a wait queue whose messages carry their own TTLs
// releases the overdue ones: the simulation, as RabbitMQ, expires only its
// head. A peek says so first and is refused without consent (nothing
// released); forced, it releases them and says how many and where; a dry
// run likewise, and read-only mode refuses even forced.
func TestPeekOfAnOverdueWaitQueueAsksFirst(t *testing.T) {
	s := holQueue(t)
	ctx := context.Background()
	_, err := s.Peek(ctx, "work.delay", broker.PeekOptions{Limit: 100})
	var refused *broker.PeekRefused
	if !errors.As(err, &refused) || !errors.Is(err, broker.ErrPeekReleases) || !errors.Is(err, broker.ErrPeekNeedsConsent) {
		t.Fatalf("peek without consent: %v, want a refusal for the release", err)
	}
	if !strings.Contains(err.Error(), "at most 500 messages, to queue work") || refused.Cost.Releases != 500 {
		t.Errorf("refusal %q (releases %d) does not say at most 500 to queue work", err, refused.Cost.Releases)
	}
	if d := depth(t, s, "work.delay"); d != 501 {
		t.Fatalf("refused peek changed the queue: %d left, want 501", d)
	}

	// A dry run of a move reads it too: refused alike, then forced.
	req := broker.MoveRequest{From: "work.delay", To: moveplan.Target{Kind: moveplan.TargetQueue, Name: "work"}, DryRun: true}
	if _, err := s.Move(ctx, req, nil); !errors.Is(err, broker.ErrPeekReleases) {
		t.Fatalf("dry run without consent: %v", err)
	}
	req.ForcePeek = true
	rep, err := s.Move(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "500 messages left the queue during the peek") {
		t.Errorf("dry run notes do not say what its read released: %q", rep.Notes)
	}
	if d := depth(t, s, "work"); d != 500 {
		t.Errorf("work holds %d after the dry run's read, want the 500 released", d)
	}

	// Once released, a read reads the head and finds nothing overdue.
	res, err := s.Peek(ctx, "work.delay", broker.PeekOptions{Limit: 100, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Released != 0 || len(res.Messages) != 1 {
		t.Errorf("second read: released %d, %d messages", res.Released, len(res.Messages))
	}
}

func TestForcedPeekOfAnOverdueWaitQueueReportsTheRelease(t *testing.T) {
	s := holQueue(t)
	res, err := s.Peek(context.Background(), "work.delay", broker.PeekOptions{Limit: 100, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Released != 500 || res.ReleasedTo != "queue work" || len(res.Messages) != 1 {
		t.Errorf("released %d to %q, %d read; want 500 to queue work, the head read", res.Released, res.ReleasedTo, len(res.Messages))
	}
	if d := depth(t, s, "work"); d != 500 {
		t.Errorf("work holds %d, want 500", d)
	}
}

func TestReadOnlyRefusesAPeekThatReleases(t *testing.T) {
	s := holQueue(t)
	s.opt.ReadOnly = true
	_, err := s.Peek(context.Background(), "work.delay", broker.PeekOptions{Limit: 100, Force: true})
	if !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("read-only forced peek: %v, want refused", err)
	}
	if d := depth(t, s, "work.delay"); d != 501 {
		t.Errorf("work.delay holds %d, want 501", d)
	}
}
