package pace

import (
	"context"
)

type blockedNoticeKey struct{}

// WithBlockedNotice makes Publish, under ctx, tell notice whether a
// resource alarm blocks its connection: the broker's reason, or "" when
// not. It is called when Publish starts, on every change while it waits for
// confirms, and when it returns (the same state may be told twice); replay
// shows it in its progress.
func WithBlockedNotice(ctx context.Context, notice func(reason string)) context.Context {
	return context.WithValue(ctx, blockedNoticeKey{}, notice)
}

// BlockedNotice is the notice WithBlockedNotice put in ctx, or one that
// hears nothing.
func BlockedNotice(ctx context.Context) func(string) {
	if f, ok := ctx.Value(blockedNoticeKey{}).(func(string)); ok {
		return f
	}
	return func(string) {}
}
