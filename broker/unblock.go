package broker

import (
	"context"
	"fmt"

	"github.com/ladder-tui/ladder/retry"
)

// DefaultUnblockLook is how many messages ladder unblock reads by default.
const DefaultUnblockLook = 1000

// UnblockOptions bound ladder unblock's read of the queue.
type UnblockOptions struct {
	// Look is how many messages it reads at most (0: DefaultUnblockLook).
	Look int
	// Progress, when set, hears how far the read is (see
	// PeekOptions.Progress): the terminal UI shows it.
	Progress func(PeekProgress)
}

// PrepareUnblock is PrepareUnblockWith, reading at most look messages.
func PrepareUnblock(ctx context.Context, c Client, queue string, look int) (MoveRequest, retry.UnblockPlan, *PeekResult, error) {
	return PrepareUnblockWith(ctx, c, queue, UnblockOptions{Look: look})
}

// PrepareUnblockWith reads a wait queue's first messages (a peek, with a
// peek's side effects, under ctx: the caller's bound and cancel) and plans
// ladder unblock: the move that takes the messages holding others back into
// per-delay wait queues with their remaining delay, through the one move
// planner. The CLI and the TUI both build the move here; the caller
// dry-runs it, shows it, and runs it with the confirmed plan as Expect.
func PrepareUnblockWith(ctx context.Context, c Client, queue string, opt UnblockOptions) (MoveRequest, retry.UnblockPlan, *PeekResult, error) {
	look := opt.Look
	if look <= 0 {
		look = DefaultUnblockLook
	}
	v, err := c.Topology(ctx)
	if err != nil {
		return MoveRequest{}, retry.UnblockPlan{}, nil, fmt.Errorf("unblock %s: %w", queue, err)
	}
	q, ok := v.Queue(queue)
	if !ok {
		return MoveRequest{}, retry.UnblockPlan{}, nil, fmt.Errorf("unblock: queue %q in vhost %s: %w", queue, c.Vhost(), ErrNotFound)
	}
	// An unblock is asked for: its read goes ahead where it counts a
	// delivery (its side effects say so).
	res, err := c.Peek(ctx, queue, PeekOptions{Limit: look, BodyPreview: 1, Force: true, Progress: opt.Progress})
	if err != nil {
		return MoveRequest{}, retry.UnblockPlan{}, nil, fmt.Errorf("unblock %s: %w", queue, err)
	}
	in := make([]retry.UnblockInput, 0, len(res.Messages))
	for _, m := range res.Messages {
		if m.HoL == nil {
			continue // nothing in this queue expires: nothing holds anything back
		}
		u := retry.UnblockInput{MessageID: m.Properties.MessageID, BodyDigest: m.BodyDigest, Expiration: m.Properties.Expiration, Mark: *m.HoL}
		if m.Properties.Timestamp != nil {
			u.Timestamp = *m.Properties.Timestamp
		}
		in = append(in, u)
	}
	plan, err := retry.PlanUnblock(queue, retry.EffectiveSettings(&q), in, res.Released, res.PeekedAt)
	if err != nil {
		return MoveRequest{}, plan, res, err
	}
	if len(res.Messages) == look {
		plan.Notes = append(plan.Notes, fmt.Sprintf("looked at the first %d messages only (--look)", look))
	}
	return MoveRequest{From: queue, To: plan.Target, Pick: plan.Pick()}, plan, res, nil
}
