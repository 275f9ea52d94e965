// Package pace is how a move or replay keeps its rate (Pacer, --rate), is
// held by the person watching it (Hold, the TUI's p), and hears a resource
// alarm blocking its publishes (WithBlockedNotice).
package pace

import (
	"sync"
	"time"
)

// Pacer spaces publishes at a rate (--rate N/s): a token bucket holding
// one token, so the pace holds from the first message on and never bursts.
type Pacer struct {
	every time.Duration // 0: no pacing
	next  time.Time
}

// New paces at rate messages a second (none when rate <= 0).
func New(rate float64) Pacer {
	if rate <= 0 {
		return Pacer{}
	}
	return Pacer{every: time.Duration(float64(time.Second) / rate)}
}

// Wait is how long until the next publish may go.
func (p *Pacer) Wait(now time.Time) time.Duration {
	if p.every == 0 || !now.Before(p.next) {
		return 0
	}
	return p.next.Sub(now)
}

// Took spends the token of a publish made at now.
func (p *Pacer) Took(now time.Time) {
	if p.every == 0 {
		return
	}
	if p.next.Before(now) {
		p.next = now
	}
	p.next = p.next.Add(p.every)
}

// Sleep waits for the next publish's token (or ctx's end: false).
func (p *Pacer) Sleep(done <-chan struct{}) bool {
	d := p.Wait(time.Now())
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// Hold pauses a running move or replay between messages (the TUI's p):
// nothing more is taken or published while it is held; confirms of what
// is in flight still settle. The zero Hold is open; a nil *Hold never
// pauses.
type Hold struct {
	mu      sync.Mutex
	resumed chan struct{} // non-nil while paused; closed on resume
}

// Pause holds what runs.
func (g *Hold) Pause() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.resumed == nil {
		g.resumed = make(chan struct{})
	}
}

// Resume opens it.
func (g *Hold) Resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.resumed != nil {
		close(g.resumed)
		g.resumed = nil
	}
}

// Paused reports whether it is held.
func (g *Hold) Paused() bool { return g.Resumed() != nil }

// Resumed is a channel closed on resume, or nil when it is not held.
func (g *Hold) Resumed() <-chan struct{} {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.resumed
}

// Wait blocks while it is held (false: done ended it first).
func (g *Hold) Wait(done <-chan struct{}) bool {
	for {
		w := g.Resumed()
		if w == nil {
			return true
		}
		select {
		case <-w:
		case <-done:
			return false
		}
	}
}
