package ui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
)

// The browser reads one thing at a time: a peek (open, r), a dump (d), an
// unblock's look (u) each hold the queue's messages while they read, so a
// key that would start another while one runs says so instead, and a queue
// opened meanwhile is peeked when it ends (a peek it replaces is cancelled:
// its answer is of no use).

// What a read does.
const (
	readPeek    = "peek"
	readDump    = "dump"
	readUnblock = "unblock"
	readGroups  = "grouping the whole queue"
)

// reading is the browser's read in progress.
type reading struct {
	id       int
	kind     string
	queue    string
	ctx      context.Context
	cancel   context.CancelFunc
	progress broker.PeekProgress
	ch       chan broker.PeekProgress // the newest report; closed when the read ends
}

// readProgressMsg is one progress report of read id.
type readProgressMsg struct {
	id int
	p  broker.PeekProgress
}

// startRead begins a read of kind on the browser's queue, under a context
// of timeout (cancelled when a peek is replaced or the read ends), or
// returns nil when one runs already: the caller says so (alreadyReading).
func (m *browserModel) startRead(kind string, timeout time.Duration) *reading {
	if m.reading != nil {
		return nil
	}
	m.readSeq++
	ctx, cancel := context.WithTimeout(m.c.ctx, timeout)
	r := &reading{id: m.readSeq, kind: kind, queue: m.queue, ctx: ctx, cancel: cancel, ch: make(chan broker.PeekProgress, 1)}
	r.progress.Want = -1 // not known yet
	m.reading = r
	return r
}

// report keeps only the newest progress report in the channel (capacity
// 1): the screen needs the latest figures, and the reader never blocks on
// a slow screen. It is the broker's Progress callback.
func (r *reading) report(p broker.PeekProgress) {
	for {
		select {
		case r.ch <- p:
			return
		default:
		}
		select {
		case <-r.ch: // drop the stale report the screen has not read
		default:
		}
	}
}

// wait reads one progress report; re-issued after each until the read ends.
func (r *reading) wait() tea.Cmd {
	id, ch := r.id, r.ch
	return func() tea.Msg {
		p, ok := <-ch
		if !ok {
			return nil
		}
		return readProgressMsg{id: id, p: p}
	}
}

// endRead: read id has ended (its answer arrived). A queue opened while it
// ran is peeked now.
func (m *browserModel) endRead(id int) tea.Cmd {
	if m.reading == nil || m.reading.id != id {
		return nil
	}
	m.reading.cancel()
	m.reading = nil
	if m.queued {
		m.queued = false
		return m.peek()
	}
	return nil
}

// alreadyReading is what a key that would start a second read says.
func (m *browserModel) alreadyReading() tea.Cmd {
	r := m.reading
	return statusCmd("already reading "+termtext.Sanitize(r.queue)+" ("+r.kind+"): one read at a time, try again when it ends", false)
}

// readProgress takes a progress report of the running read.
func (m *browserModel) readProgress(msg readProgressMsg) tea.Cmd {
	if m.reading == nil || m.reading.id != msg.id {
		return nil
	}
	r := m.reading
	r.progress = msg.p
	if r.kind == readUnblock && !msg.p.Done && msg.p.Read < msg.p.Want {
		// Asked from home too, where no footer shows reads: the status
		// line that said "reading the queue…" follows it (not the last
		// report: the answer's own status follows that at once).
		return tea.Batch(statusCmd("unblock "+termtext.Sanitize(r.queue)+": "+r.text(), false), r.wait())
	}
	return r.wait()
}

// readingText says what the running read is at: "reading the queue… 412 of
// 1000", or that it is starting.
func (r *reading) text() string {
	if r.progress.Want < 0 {
		return "reading the queue…"
	}
	return present.Reading(r.progress)
}
