package sshserve

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
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

// working marks an action of the session running until the func it
// returns is called (the gate's Busy hook): the timeout waits for it, and
// counts again from its end.
func (it *idleTimer) working() func() {
	it.busy.Add(1)
	return func() { it.busy.Add(-1); it.touch() }
}
