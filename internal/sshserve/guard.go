package sshserve

import (
	"context"
	"fmt"

	"github.com/ladder-tui/ladder/broker"
)

// readOnlyClient is the client of a read-only session: whatever the
// factory gave, every mutation (a move that is not a dry run, a publish,
// a drain) is refused here, before it reaches the broker, and the client
// reports read-only, so the UI strips every mutating key too.
type readOnlyClient struct {
	broker.Client
}

func (c readOnlyClient) ReadOnly() bool { return true }

func (c readOnlyClient) Move(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	if !req.DryRun {
		return broker.NewMoveReport(req), fmt.Errorf("move from %s: %w", req.From, broker.ErrReadOnly)
	}
	return c.Client.Move(ctx, req, progress)
}

func (c readOnlyClient) Publish(context.Context, []broker.Outgoing) ([]broker.Outcome, error) {
	return nil, fmt.Errorf("publish: %w", broker.ErrReadOnly)
}

func (c readOnlyClient) Drain(_ context.Context, queue string, _ int, _ func(*broker.Message) (bool, error)) (int, error) {
	return 0, fmt.Errorf("drain %s: %w", queue, broker.ErrReadOnly)
}
