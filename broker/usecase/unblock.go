package usecase

import (
	"context"
	"errors"
	"fmt"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// DefaultUnblockLook is how many messages ladder unblock reads by default.
const DefaultUnblockLook = 1000

// UnblockOptions bound ladder unblock's read of the queue.
type UnblockOptions struct {
	// Look is how many messages it reads at most (0: DefaultUnblockLook).
	Look int
	// Progress, when set, hears how far the read is (see
	// PeekOptions.Progress): the terminal UI shows it.
	Progress func(broker.PeekProgress)
	// ForcePeek: the user accepted that reading the queue counts a
	// delivery toward its delivery limit (a quorum queue before 4.3), for
	// the look and the move's preview after it: the returned request
	// carries it. Without it such a read is refused before it touches the
	// queue (*PeekRefused, ErrPeekCostsDelivery), as a peek is.
	ForcePeek bool
}

// ErrPreviewDeadLetters refuses an unblock whose look showed a message
// that the move's preview, a second read, would dead-letter.
var ErrPreviewDeadLetters = errors.New("the preview would dead-letter a message")

// PrepareUnblock is PrepareUnblockWith, reading at most look messages,
// where that costs no delivery toward a delivery limit.
func PrepareUnblock(ctx context.Context, c UnblockSource, queue string, look int) (broker.MoveRequest, moveplan.UnblockPlan, *broker.PeekResult, error) {
	return PrepareUnblockWith(ctx, c, queue, UnblockOptions{Look: look})
}

// PrepareUnblockWith reads a wait queue's first messages (a peek, with a
// peek's side effects, under ctx: the caller's bound and cancel) and plans
// ladder unblock: the move that takes the messages holding others back into
// per-delay wait queues with their remaining delay, through the one move
// planner. The CLI and the TUI both build the move here; the caller
// dry-runs it, shows it, and runs it with the confirmed plan as Expect.
//
// Where each read counts a delivery toward a delivery limit, the look runs
// only with opt.ForcePeek; and when the counts it saw show that the
// preview's read would dead-letter a message, the plan is returned with
// ErrPreviewDeadLetters (nothing more is read).
func PrepareUnblockWith(ctx context.Context, c UnblockSource, queue string, opt UnblockOptions) (broker.MoveRequest, moveplan.UnblockPlan, *broker.PeekResult, error) {
	look := opt.Look
	if look <= 0 {
		look = DefaultUnblockLook
	}
	v, err := c.Topology(ctx)
	if err != nil {
		return broker.MoveRequest{}, moveplan.UnblockPlan{}, nil, fmt.Errorf("unblock %s: %w", queue, err)
	}
	q, ok := v.Queue(queue)
	if !ok {
		return broker.MoveRequest{}, moveplan.UnblockPlan{}, nil, fmt.Errorf("unblock: queue %q in vhost %s: %w", queue, c.Vhost(), broker.ErrNotFound)
	}
	res, err := c.Peek(ctx, queue, broker.PeekOptions{Limit: look, BodyPreview: 1, Force: opt.ForcePeek, Progress: opt.Progress})
	if err != nil {
		return broker.MoveRequest{}, moveplan.UnblockPlan{}, nil, fmt.Errorf("unblock %s: %w", queue, err)
	}
	in := make([]moveplan.UnblockInput, 0, len(res.Messages))
	for _, m := range res.Messages {
		if m.HoL == nil {
			continue // nothing in this queue expires: nothing holds anything back
		}
		u := moveplan.UnblockInput{MessageID: m.Properties.MessageID, BodyDigest: m.BodyDigest, Expiration: m.Properties.Expiration, Mark: *m.HoL}
		if m.Properties.Timestamp != nil {
			u.Timestamp = *m.Properties.Timestamp
		}
		in = append(in, u)
	}
	plan, err := moveplan.PlanUnblock(queue, topology.EffectiveSettings(&q), in, res.Released, res.PeekedAt)
	if err != nil {
		return broker.MoveRequest{}, plan, res, err
	}
	if len(res.Messages) == look {
		plan.Notes = append(plan.Notes, fmt.Sprintf("looked at the first %d messages only (--look)", look))
	}
	// The loop guard every move ladder runs has (ladder unblock
	// --max-moves changes it): a message unblocked again and again stays.
	req := broker.MoveRequest{From: queue, To: plan.Target, Pick: plan.Pick(), ForcePeek: opt.ForcePeek, MaxMoves: DefaultMaxMoves}
	if len(plan.Picks) > 0 && opt.ForcePeek {
		version, err := c.BrokerVersion(ctx)
		if err != nil {
			return req, plan, res, fmt.Errorf("unblock %s: %w", queue, err)
		}
		if n := broker.RepeekDeadLetters(res, q, version); n > 0 {
			// Known from the look, without spending another delivery.
			return req, plan, res, fmt.Errorf("unblock %s: refused: its preview reads the queue again, which would dead-letter %s the look saw, delivered as often as the delivery limit of %d allows: %w",
				queue, topology.Plural(n, "message", "messages"), broker.PeekCostOf(q, version).DeliveryLimit, ErrPreviewDeadLetters)
		}
	}
	return req, plan, res, nil
}
