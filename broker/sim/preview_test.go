package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// deliveryCounts are the delivery counts of queue's ready messages, in order.
func deliveryCounts(s *Sim, queue string) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for _, m := range s.byName[queue].ready {
		out = append(out, m.deliveryCount)
	}
	return out
}

// limitedWait is a quorum wait queue on RabbitMQ 4.0 with x-delivery-limit
// 3, dead-lettering to dlq: m-0 (10 minutes) holds m-1 (1 second) back.
func limitedWait(t *testing.T, readOnly bool) *Sim {
	s := New(Options{Seed: 1, Now: fixedClock, Quiet: true, BrokerVersion: "4.0.5", ReadOnly: readOnly})
	t.Cleanup(func() { s.Close() })
	s.testDeclare(t, "dlq", nil)
	s.testDeclare(t, "qq", map[string]any{"x-queue-type": "quorum", "x-delivery-limit": int64(3), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"})
	s.testPublish(t, "", "qq", "m-0", "600000", nil)
	s.testPublish(t, "", "qq", "m-1", "1000", nil)
	return s
}

// The simulation's dry run reads its source as the live one does, by a
// peek's rules: on a quorum queue whose every read counts a delivery
// toward a limit, refused before it touches the queue (read-only outright,
// otherwise unless ForcePeek), and forced, it counts the delivery and says
// so, as the live dry run does.
func TestSimPreviewOfALimitedQuorumQueueNeedsConsent(t *testing.T) {
	ctx := context.Background()
	dry := broker.MoveRequest{From: "qq", To: moveplan.Target{Kind: moveplan.TargetQueue, Name: "dlq"}, DryRun: true}
	ro := limitedWait(t, true)
	for _, force := range []bool{false, true} {
		dry.ForcePeek = force
		if _, err := ro.Move(ctx, dry, nil); !errors.Is(err, broker.ErrReadOnly) {
			t.Fatalf("read-only, ForcePeek %v: %v", force, err)
		}
	}
	s := limitedWait(t, false)
	dry.ForcePeek = false
	_, err := s.Move(ctx, dry, nil)
	var refused *broker.PeekRefused
	if !errors.As(err, &refused) || !errors.Is(err, broker.ErrPeekCostsDelivery) || refused.Limit != 2 || !strings.HasPrefix(err.Error(), "dry run: peek qq: ") {
		t.Fatalf("unforced: %v (%+v)", err, refused)
	}
	if got := fmt.Sprint(deliveryCounts(s, "qq")); got != "[0 0]" {
		t.Fatalf("the refused preview counted: %s", got)
	}
	dry.ForcePeek = true
	rep, err := s.Move(ctx, dry, nil)
	if err != nil || rep.Requested != 2 || !strings.Contains(strings.Join(rep.Notes, " "), "dry run: quorum queue: each peek increments x-delivery-count") {
		t.Fatalf("forced: %v, requested %d, notes %q", err, rep.Requested, rep.Notes)
	}
	if got := fmt.Sprint(deliveryCounts(s, "qq")); got != "[1 1]" {
		t.Fatalf("after the forced preview: %s", got)
	}
}

// ladder unblock reads the queue twice where each read counts a delivery:
// its look and the move's preview. Unforced, the look is refused; forced,
// the request it returns carries the yes to the preview; and when the look
// shows that the preview would dead-letter a message, the unblock is
// refused before the preview reads anything.
func TestUnblockOfALimitedQuorumQueueNeedsConsent(t *testing.T) {
	ctx := context.Background()
	s := limitedWait(t, false)
	if _, _, _, err := usecase.PrepareUnblock(ctx, s, "qq", 0); !errors.Is(err, broker.ErrPeekCostsDelivery) {
		t.Fatalf("unforced: %v", err)
	}
	req, plan, _, err := usecase.PrepareUnblockWith(ctx, s, "qq", usecase.UnblockOptions{ForcePeek: true})
	if err != nil || len(plan.Picks) != 1 || !req.ForcePeek {
		t.Fatalf("forced: %v, picks %+v, request %+v", err, plan.Picks, req)
	}
	req.DryRun = true
	if _, err := s.Move(ctx, req, nil); err != nil {
		t.Fatalf("the preview after the forced look: %v", err)
	}
	// The preview reads no further than the last pick (m-0).
	if got := fmt.Sprint(deliveryCounts(s, "qq")); got != "[2 1]" {
		t.Fatalf("after the look and the preview: %s", got)
	}
	// m-0 was delivered twice: the look is its third, and the preview's
	// read would pass the limit of 3.
	_, plan, _, err = usecase.PrepareUnblockWith(ctx, s, "qq", usecase.UnblockOptions{ForcePeek: true})
	if !errors.Is(err, usecase.ErrPreviewDeadLetters) || len(plan.Picks) != 1 ||
		!strings.Contains(err.Error(), "would dead-letter 1 message the look saw, delivered as often as the delivery limit of 3 allows") {
		t.Fatalf("third read: %v", err)
	}
	if got := fmt.Sprint(deliveryCounts(s, "qq")); got != "[3 2]" || depth(t, s, "dlq") != 0 {
		t.Fatalf("after the refusal: counts %s, %d dead-lettered", got, depth(t, s, "dlq"))
	}
}
