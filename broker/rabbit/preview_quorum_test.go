package rabbit_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// headCount is the x-delivery-count the head of q carries now, read by a
// forced peek of it (which counts one more: the caller allows for it).
func headCount(t *testing.T, f *fixture, q string) int64 {
	t.Helper()
	res, err := f.live(false).Peek(context.Background(), q, broker.PeekOptions{Limit: 1, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := res.Messages[0].Headers["x-delivery-count"].(int64)
	return n
}

// A move's preview (its dry run) reads the source as a peek does: where
// that counts a delivery toward a delivery limit (a quorum queue before
// 4.3), it is refused before touching the queue, as the peek is — read-only
// outright, otherwise unless the request says the user accepted the cost
// (ForcePeek), and then what it cost is in the plan's notes. ladder unblock's
// look is refused the same way. On 4.3 the preview costs no delivery and
// runs.
func TestMovePreviewOfALimitedQuorumQueueNeedsConsent(t *testing.T) {
	onEachBroker(t, func(t *testing.T, f *fixture, version string) {
		q, dlq := limitedQuorum(f, 3)
		ctx := context.Background()
		dry := broker.MoveRequest{From: q, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dlq}, DryRun: true}
		if costless(version) {
			rep, err := f.live(true).Move(ctx, dry, nil)
			if err != nil || rep.Requested != 3 {
				t.Fatalf("RabbitMQ %s: %v, planned %+v", version, err, rep)
			}
			return
		}
		_, err := f.live(true).Move(ctx, dry, nil)
		var refused *broker.PeekRefused
		if !errors.As(err, &refused) || !errors.Is(err, broker.ErrReadOnly) {
			t.Fatalf("read-only preview: %v", err)
		}
		l := f.live(false)
		_, err = l.Move(ctx, dry, nil)
		if !errors.As(err, &refused) || !errors.Is(err, broker.ErrPeekCostsDelivery) || refused.Limit != 3 ||
			!strings.Contains(err.Error(), "delivery limit of 3") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("unforced preview: %v (%+v)", err, refused)
		}
		_, _, _, err = usecase.PrepareUnblock(ctx, l, q, 0)
		if !errors.Is(err, broker.ErrPeekCostsDelivery) {
			t.Fatalf("unforced unblock: %v", err)
		}
		if n := headCount(t, f, q); n != 0 {
			t.Fatalf("the refused previews counted %d deliveries", n)
		}
		f.waitDepth(q, 3)
		dry.ForcePeek = true
		rep, err := l.Move(ctx, dry, nil)
		if err != nil || rep.Requested != 3 || !strings.Contains(strings.Join(rep.Notes, " "), "increments x-delivery-count") {
			t.Fatalf("forced preview: %v, requested %d, notes %q", err, rep.Requested, rep.Notes)
		}
		f.waitDepth(q, 3)
		// The forced look shows what was counted: the first forced peek,
		// then the preview.
		_, _, res, err := usecase.PrepareUnblockWith(ctx, l, q, usecase.UnblockOptions{ForcePeek: true})
		if err != nil {
			t.Fatalf("forced unblock: %v", err)
		}
		if n, _ := res.Messages[0].Headers["x-delivery-count"].(int64); n != 2 {
			t.Fatalf("after the forced preview the head was delivered %d times, want 2", n)
		}
		f.waitDepth(q, 3)
		if d := f.depth(dlq); d != 0 {
			t.Fatalf("%d dead-lettered", d)
		}
	})
}
