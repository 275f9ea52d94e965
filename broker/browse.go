package broker

import (
	"errors"
	"fmt"
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Every browse loop (the AMQP 0-9-1 consumer of collect, the simulation's,
// another protocol's) reads to the same rules, kept here in BrowseRun: at
// most the limit or the ready depth seen when it started, whichever is less
// (never the messages that arrive while it reads, so a wait queue whose
// messages keep coming back cannot keep it going); never past its
// deadline; each message handed to PeekOptions.Each, or kept in the result,
// in queue order; progress reported as it goes; and a read that stops short
// says why in Incomplete.

// DefaultPeekDeadline is how long `ladder peek` and the terminal UI read a
// queue at most (--max-time): a peek holds every message it read from the
// queue's consumers until it ends.
const DefaultPeekDeadline = 20 * time.Second

// ProgressEvery spaces progress reports: a screen needs no more.
const ProgressEvery = 100 * time.Millisecond

// ErrStopBrowse, returned by PeekOptions.Each, ends a browse early and
// without error: the caller has what it came for.
var ErrStopBrowse = errors.New("browse: enough read")

// PeekProgress says how far a browse has read.
type PeekProgress struct {
	Read int // messages read so far
	// Want is what the browse reads at most: the limit, or the ready depth
	// when it started if that is less (a stream: the limit).
	Want    int
	Elapsed time.Duration
	// Done marks the last report: the read has ended (the messages it held
	// are being returned).
	Done bool
}

// BrowseRun is one browse's bookkeeping, shared by every browse loop.
type BrowseRun struct {
	opt      PeekOptions
	res      *PeekResult
	want     int
	read     int
	start    time.Time
	timer    *time.Timer
	reported time.Time
}

// NewBrowseRun starts the bookkeeping of a browse filling res that reads at
// most want messages (the caller bounds it by the depth it saw), under
// opt's deadline, progress and Each.
func NewBrowseRun(res *PeekResult, opt PeekOptions, want int) *BrowseRun {
	b := &BrowseRun{opt: opt, res: res, want: max(0, want), start: time.Now()}
	// Browsed from the start: a read that got nothing (another reader
	// held it all) is a read too, and says so (caughtUpEarly).
	res.browsed, res.wanted = true, b.want
	if opt.Deadline > 0 {
		b.timer = time.NewTimer(opt.Deadline)
	}
	b.report(false)
	return b
}

// Want is the most the browse reads; Read how many it has; Left the rest.
func (b *BrowseRun) Want() int { return b.want }
func (b *BrowseRun) Read() int { return b.read }
func (b *BrowseRun) Left() int { return b.want - b.read }

// Result is the PeekResult the browse fills.
func (b *BrowseRun) Result() *PeekResult { return b.res }

// Done says the browse has read all it may.
func (b *BrowseRun) Done() bool { return b.read >= b.want }

// Deadline fires when the read must stop (nil: no deadline).
func (b *BrowseRun) Deadline() <-chan time.Time {
	if b.timer == nil {
		return nil
	}
	return b.timer.C
}

// Take hands on the next message (Position is set here: queue order) to
// Each, or keeps it in the result. Each's error is returned as is
// (ErrStopBrowse included).
func (b *BrowseRun) Take(m Message) error {
	m.Position = b.read
	b.read++
	r := b.res
	r.browsed, r.read = true, b.read
	if m.Redelivered {
		r.redelivered++
		// Returned messages go back to their place in the queue: one
		// delivered after a fresh one was returned while ladder read,
		// by another reader (ladder returns its own only at the end).
		r.reordered = r.reordered || r.read > r.redelivered
	}
	if n, ok := retry.HeaderInt(m.Headers["x-delivery-count"]); ok && n > 0 {
		r.counts = append(r.counts, deliveryCount{m.Position, n})
	}
	if r.seen == nil {
		r.seen = topology.Evidence{}
	}
	r.seen.Observe(r.Queue, m.Properties.Expiration != "", m.Deaths, m.FailedIn)
	if b.opt.Each != nil {
		if err := b.opt.Each(&m); err != nil {
			return err
		}
	} else {
		b.res.Messages = append(b.res.Messages, m)
	}
	b.report(false)
	return nil
}

// Stop marks the read incomplete: reason says why it stopped short (the
// first reason given stays).
func (b *BrowseRun) Stop(reason string) {
	if b.res.Incomplete == "" {
		b.res.Incomplete = reason
	}
}

// TimedOut marks a read the deadline stopped.
func (b *BrowseRun) TimedOut() {
	if b.res.Incomplete == "" {
		b.res.hitDeadline = true
	}
	b.Stop(fmt.Sprintf("stopped at the %s deadline after %s of %d: the rest was not read",
		b.opt.Deadline, topology.Plural(b.read, "message", "messages"), b.want))
}

// Tick reports progress while nothing arrives (the time it has taken):
// browse loops call it on their timers.
func (b *BrowseRun) Tick() { b.report(false) }

// Finish ends the read: the timer stops and the last progress report goes out.
func (b *BrowseRun) Finish() {
	if b.timer != nil {
		b.timer.Stop()
	}
	b.report(true)
}

func (b *BrowseRun) report(done bool) {
	if b.opt.Progress == nil {
		return
	}
	now := time.Now()
	if !done && !b.reported.IsZero() && b.read < b.want && now.Sub(b.reported) < ProgressEvery {
		return
	}
	b.reported = now
	b.opt.Progress(PeekProgress{Read: b.read, Want: b.want, Elapsed: now.Sub(b.start), Done: done})
}
