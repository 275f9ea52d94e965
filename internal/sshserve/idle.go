package sshserve

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// idleTimer ends a session no key was pressed in for its timeout — but
// never while a move, publish or drain of the session runs: someone
// watching a long move's progress is not idle, and ending the session
// would stop the move. The timeout counts again from the end of the
// last one.
type idleTimer struct {
	d     time.Duration
	end   func()
	idled atomic.Bool
	busy  atomic.Int32

	mu sync.Mutex
	t  *time.Timer // nil: no timeout
}

// newIdleTimer calls end once the session has been idle for d (0: never).
func newIdleTimer(d time.Duration, end func()) *idleTimer {
	it := &idleTimer{d: d, end: end}
	if d > 0 {
		it.t = time.AfterFunc(d, it.fire)
	}
	return it
}

func (it *idleTimer) fire() {
	if it.busy.Load() > 0 {
		it.touch()
		return
	}
	it.idled.Store(true)
	it.end()
}

// touch puts the timeout off again.
func (it *idleTimer) touch() {
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.t != nil {
		it.t.Reset(it.d)
	}
}

func (it *idleTimer) stop() {
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.t != nil {
		it.t.Stop()
	}
}

// ended reports whether the session ended idle.
func (it *idleTimer) ended() bool { return it.idled.Load() }

// reader is the session's input: each read (a key pressed, a paste) puts
// the timeout off.
func (it *idleTimer) reader(r io.Reader) io.Reader {
	if it.t == nil {
		return r
	}
	return &idleReader{r: r, it: it}
}

type idleReader struct {
	r  io.Reader
	it *idleTimer
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.it.touch()
	}
	return n, err
}

// client is c with its mutations keeping the session from idling.
func (it *idleTimer) client(c broker.Client) broker.Client {
	if it.t == nil {
		return c
	}
	return &busyClient{Client: c, it: it}
}

// busyClient marks the session busy while a mutation runs.
type busyClient struct {
	broker.Client
	it *idleTimer
}

// working marks a mutation running until the func it returns is called.
func (c *busyClient) working() func() {
	c.it.busy.Add(1)
	return func() { c.it.busy.Add(-1); c.it.touch() }
}

func (c *busyClient) Move(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	defer c.working()()
	return c.Client.Move(ctx, req, progress)
}

func (c *busyClient) Publish(ctx context.Context, batch []broker.Outgoing) ([]broker.Outcome, error) {
	defer c.working()()
	return c.Client.Publish(ctx, batch)
}

func (c *busyClient) Drain(ctx context.Context, queue string, limit int, handle func(*broker.Message) (bool, error)) (int, error) {
	defer c.working()()
	return c.Client.Drain(ctx, queue, limit, handle)
}

// Failover implements broker.Failoverer when the client it wraps does (a
// replay goes on through another node): the other node's client, busy
// alike.
func (c *busyClient) Failover(ctx context.Context) (broker.Client, string, error) {
	f, ok := c.Client.(broker.Failoverer)
	if !ok {
		return nil, "", errors.New("no other node to go on through")
	}
	o, addr, err := f.Failover(ctx)
	if err != nil {
		return nil, "", err
	}
	return &busyClient{Client: o, it: c.it}, addr, nil
}
