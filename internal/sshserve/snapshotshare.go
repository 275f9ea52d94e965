package sshserve

import (
	"context"
	"sync"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// SnapshotShare reads one vhost's snapshots once for many viewers: the
// sessions of ladder serve. Each session's UI asks for a snapshot every
// refresh; without a share each ask is a read of the broker, so the
// broker's cost grows with every viewer. With one, a viewer gets the last
// read while it is fresh (younger than most of a refresh), joins the read
// under way, or starts the one read every viewer then shares: the broker
// is read about once a refresh, however many watch.
//
// Its reader is a client of its own, kept for the share's life, so the
// refresh's memory (the last full read, counters for rates, see
// rabbit.Management) is one stream of polls, as one local TUI's is.
// Snapshots are shared as they are: a viewer must not change one (the UI
// does not).
type SnapshotShare struct {
	reader broker.Snapshotter
	vhost  string
	// base is what reads run under (the server's context): a viewer that
	// leaves mid-read does not fail the others' wait; its deadline still
	// bounds the read it started.
	base context.Context
	// refresh is the viewers' refresh (0: each snapshot's own Refresh,
	// else BaseRefresh), which freshness is measured against.
	refresh time.Duration

	mu sync.Mutex
	// gen counts mutations through the share's viewers: a read begun
	// before the last one is not served after it.
	gen    int
	last   *shared
	flight *shared
	// reads counts the reader's reads (tests and the server's log).
	reads int
	// stats are what the reads did (ladder serve --metrics).
	stats ShareStats
}

// ShareStats are what a share's reads of the broker did: ladder's own
// metrics.
type ShareStats struct {
	// Reads were begun; Done ended (Errors of them failing) and took
	// Seconds in all.
	Reads, Done, Errors int
	Seconds             float64
	// LastGood is when the last read that worked ended (zero: none yet).
	LastGood time.Time
}

// shared is one read of the reader: done is closed once snap and err are
// set.
type shared struct {
	gen  int
	at   time.Time
	done chan struct{}
	snap *broker.Snapshot
	err  error
}

// freshShare is the part of a refresh a shared read is served for: less
// than one, so a viewer whose turn comes a refresh after a read gets a
// new one, and the broker sees about one read per refresh.
const freshShare = 0.9

// NewSnapshotShare shares reader's snapshots of vhost among viewers whose
// UI refreshes every refresh (0: as each snapshot says). Reads run under
// base.
func NewSnapshotShare(base context.Context, reader broker.Snapshotter, vhost string, refresh time.Duration) *SnapshotShare {
	return &SnapshotShare{reader: reader, vhost: vhost, base: base, refresh: refresh}
}

// Reads is how many times the share has read the broker.
func (s *SnapshotShare) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// Stats is what the share's reads did so far.
func (s *SnapshotShare) Stats() ShareStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Reads = s.reads
	return st
}

// fresh is how long a read is served for. s.mu is held.
func (s *SnapshotShare) fresh() time.Duration {
	every := s.refresh
	if every == 0 && s.last != nil && s.last.snap != nil {
		every = s.last.snap.Refresh
	}
	if every == 0 {
		every = broker.BaseRefresh
	}
	return time.Duration(float64(every) * freshShare)
}

// Snapshot returns the vhost's last read while it is fresh and no
// mutation came after it, else the read under way (begun after the last
// mutation), else a new read. An error is shared as a snapshot is (its
// viewers ask again a refresh later, not each at once).
func (s *SnapshotShare) Snapshot(ctx context.Context) (*broker.Snapshot, error) {
	now := time.Now()
	s.mu.Lock()
	if l := s.last; l != nil && l.gen == s.gen && now.Sub(l.at) < s.fresh() {
		s.mu.Unlock()
		return l.snap, l.err
	}
	f := s.flight
	if f == nil || f.gen != s.gen {
		f = &shared{gen: s.gen, at: now, done: make(chan struct{})}
		s.flight = f
		s.reads++
		go s.read(ctx, f)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.snap, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// read makes read f under the share's context, bounded by the deadline of
// the viewer that began it.
func (s *SnapshotShare) read(viewer context.Context, f *shared) {
	ctx, cancel := context.WithCancel(s.base)
	if d, ok := viewer.Deadline(); ok {
		ctx, cancel = context.WithDeadline(s.base, d)
	}
	defer cancel()
	f.snap, f.err = s.reader.Snapshot(ctx)
	end := time.Now()
	s.mu.Lock()
	s.stats.Done++
	s.stats.Seconds += end.Sub(f.at).Seconds()
	if f.err != nil {
		s.stats.Errors++
	} else {
		s.stats.LastGood = end
	}
	if s.last == nil || f.gen >= s.last.gen {
		s.last = f
	}
	if s.flight == f {
		s.flight = nil
	}
	s.mu.Unlock()
	close(f.done)
}

// Invalidate makes the next snapshot a new read, begun after this call:
// what a viewer's mutation changed shows at its next refresh, as it does
// in a local TUI.
func (s *SnapshotShare) Invalidate() {
	s.mu.Lock()
	s.gen++
	s.mu.Unlock()
}

// Viewer is c with its snapshots from the share (c reads the same vhost;
// another vhost's client is returned as it is). What its actions change
// shows at the next read once the gate tells the share (Invalidate, the
// gate's Changed hook): the viewer itself knows no action.
func (s *SnapshotShare) Viewer(c broker.Client) broker.Client {
	if c.Vhost() != s.vhost {
		return c
	}
	return &viewer{Client: c, share: s}
}

// viewer is a client of a SnapshotShare.
type viewer struct {
	broker.Client
	share *SnapshotShare
}

func (v *viewer) Snapshot(ctx context.Context) (*broker.Snapshot, error) {
	return v.share.Snapshot(ctx)
}
