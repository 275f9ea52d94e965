package ui

import (
	"context"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
)

// Every broker call runs here, in a tea.Cmd with a deadline under the
// program's context (common.ctx), and comes back as a typed message. The closures capture copies of what they need, never
// the model.

const (
	// snapshotTimeout is the least a snapshot is given as a whole; each
	// request in it is bounded by --api-timeout (see snapshotBound).
	snapshotTimeout = 15 * time.Second
	// peekTimeout bounds a whole peek (management calls and all); its read
	// stops sooner, at broker.DefaultPeekDeadline.
	peekTimeout   = 60 * time.Second
	vhostsTimeout = 10 * time.Second
	// moveTimeout bounds a whole dump or group scan, as the dialog's does a
	// move; the user can cancel sooner (esc).
	moveTimeout = 30 * time.Minute
)

func snapshotCmd(parent context.Context, c broker.Snapshotter, gen int, bound time.Duration, now func() time.Time, done chan struct{}) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(parent, bound)
		defer cancel()
		s, err := c.Snapshot(ctx)
		close(done)
		return snapshotMsg{gen: gen, snap: s, err: err, at: now()}
	}
}

// pendingCmd says, after d, that the snapshot of gen is still in flight;
// nothing once done is closed (it returned). It waits on the snapshot, not
// on a tick of its own: nothing is left scheduled after it.
func pendingCmd(done <-chan struct{}, gen int, d time.Duration) tea.Cmd {
	return func() tea.Msg {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-done:
			return nil
		case <-t.C:
			return pendingMsg{gen: gen}
		}
	}
}

// snapshotBound bounds a whole snapshot: its requests are each bounded by
// the API timeout, and up to three follow one another.
func snapshotBound(apiTimeout time.Duration) time.Duration {
	return max(snapshotTimeout, 3*apiTimeout+5*time.Second)
}

// depthProber is a client that can tell depths over AMQP alone
// (rabbit.Live): the UI asks it while the management API is slow.
type depthProber interface {
	QueueDepths(ctx context.Context, queues []string) (map[string]int64, error)
}

// probeTimeout bounds asking AMQP for depths.
const probeTimeout = 10 * time.Second

func probeCmd(parent context.Context, p depthProber, gen int, queues []string, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(parent, probeTimeout)
		defer cancel()
		d, err := p.QueueDepths(ctx, queues)
		return probeMsg{gen: gen, depths: d, err: err, at: now()}
	}
}

// peekCmd peeks queue for read r: under its context (cancelled when the
// peek is replaced), reporting progress to it, and bounded by the broker's
// deadline (a peek holds what it read from the queue's consumers).
func peekCmd(r *reading, c broker.Peeker, queue string, opt broker.PeekOptions, now func() time.Time) tea.Cmd {
	ctx, id, ch := r.ctx, r.id, r.ch
	opt.Progress, opt.Deadline = r.report, broker.DefaultPeekDeadline
	return func() tea.Msg {
		defer close(ch) // ends the progress wait
		res, err := c.Peek(ctx, queue, opt)
		at := now()
		if res != nil && !res.PeekedAt.IsZero() {
			at = res.PeekedAt // the instant the title names: ages and due times agree with it
		}
		return peekMsg{id: id, queue: queue, res: res, err: err, at: at}
	}
}

// vhostLister lists the vhosts a session can see (broker.Session's
// Vhosts), with each one's summary where one read of every vhost can tell
// (broker.AllVhostsReader): all the vhost switcher asks of the broker.
type vhostLister interface {
	Vhosts(ctx context.Context) ([]string, error)
	broker.AllVhostsReader
}

// vhostsCmd lists the vhosts; a client that reads every vhost at once
// (broker.AllVhostsReader: one listing of all queues) gives each one's
// summary too, the vhost on fire first. Should that read fail (a user who
// may not list all queues), the names alone do.
func vhostsCmd(parent context.Context, c vhostLister) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(parent, vhostsTimeout)
		defer cancel()
		if sum, err := c.AllVhosts(ctx); err == nil {
			names := make([]string, len(sum))
			for i, s := range sum {
				names[i] = s.Vhost
			}
			return vhostsMsg{kind: kindVhost, vhosts: names, summaries: sum}
		}
		v, err := c.Vhosts(ctx)
		return vhostsMsg{kind: kindVhost, vhosts: v, err: err}
	}
}

func openCmd(open func(string) (broker.Client, error), vhost string) tea.Cmd {
	return func() tea.Msg {
		c, err := open(vhost)
		return clientOpenedMsg{vhost: vhost, client: c, err: err}
	}
}

func openContextCmd(open func(string) (broker.Client, error), name string) tea.Cmd {
	return func() tea.Msg {
		c, err := open(name)
		return clientOpenedMsg{context: name, client: c, err: err}
	}
}

func closeCmd(c io.Closer) tea.Cmd {
	return func() tea.Msg {
		if err := c.Close(); err != nil {
			return statusMsg{text: "closing the previous connection: " + err.Error(), err: true}
		}
		return nil
	}
}

func statusCmd(text string, isErr bool) tea.Cmd {
	return func() tea.Msg { return statusMsg{text: text, err: isErr} }
}

func navCmd(m tea.Msg) tea.Cmd {
	return func() tea.Msg { return m }
}
