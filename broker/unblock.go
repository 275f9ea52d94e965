package broker

import (
	"context"
	"fmt"

	"github.com/ladder-tui/ladder/retry"
)

// DefaultUnblockLook is how many messages ladder unblock reads by default.
const DefaultUnblockLook = 1000

// PrepareUnblock reads a wait queue's first look messages (a peek, with a
// peek's side effects) and plans ladder unblock: the move that takes the
// messages holding others back into per-delay wait queues with their
// remaining delay, through the one move planner. The CLI and the TUI both
// build the move here; the caller dry-runs it, shows it, and runs it with
// the confirmed plan as Expect.
func PrepareUnblock(ctx context.Context, c Client, queue string, look int) (MoveRequest, retry.UnblockPlan, *PeekResult, error) {
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
	res, err := c.Peek(ctx, queue, PeekOptions{Limit: look, BodyPreview: 1, Force: true})
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
