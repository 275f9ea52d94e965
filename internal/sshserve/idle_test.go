package sshserve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/gate"
)

// heldMover is a broker whose moves run until released.
type heldMover struct {
	broker.Client
	started, release chan struct{}
}

func (h *heldMover) Vhost() string  { return "/" }
func (h *heldMover) ReadOnly() bool { return false }

func (h *heldMover) Move(ctx context.Context, req broker.MoveRequest, _ func(broker.MoveProgress)) (*broker.MoveReport, error) {
	close(h.started)
	select {
	case <-h.release:
		return broker.NewMoveReport(req), nil
	case <-ctx.Done():
		return broker.NewMoveReport(req), ctx.Err()
	}
}

// A session watching its move is not idle: the timeout does not end it
// (which would stop the move) while the move runs, and counts again from
// the move's end; keys put it off too.
func TestIdleTimeoutWaitsForARunningMove(t *testing.T) {
	const d = 50 * time.Millisecond
	ended := make(chan struct{})
	it := newIdleTimer(d, func() { close(ended) })
	defer it.stop()
	h := &heldMover{started: make(chan struct{}), release: make(chan struct{})}
	// The session's client is behind the gate, whose Busy is the timer's.
	c := gate.New(h, gate.Options{Principal: gate.SSH("alice", "", "", RoleOperator, ""), Busy: it.working})
	moved := make(chan error, 1)
	go func() {
		_, err := c.Move(context.Background(), broker.MoveRequest{From: "dlq"}, nil)
		moved <- err
	}()
	<-h.started
	select {
	case <-ended:
		t.Fatal("the session ended idle while its move ran")
	case <-time.After(20 * d):
	}
	close(h.release)
	if err := <-moved; err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the session did not end idle after its move")
	}
	if !it.ended() {
		t.Error("ended() is false after the timeout")
	}
}

// No timeout (0) wraps nothing.
func TestIdleTimerNone(t *testing.T) {
	none := newIdleTimer(0, func() { t.Error("a session without a timeout ended idle") })
	in := strings.NewReader("")
	if none.reader(in) != in {
		t.Error("no timeout: the input was wrapped")
	}
}
