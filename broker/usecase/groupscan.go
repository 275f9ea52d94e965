package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Grouping the whole queue: the browse a dump does (Dump), with a writer
// that groups each message as it comes and keeps only the groups, so a
// queue of 100,000 messages costs a few counters per group, not the
// messages.

// GroupScanOptions say what a scan groups.
type GroupScanOptions struct {
	Queue string
	By    string // a GroupBy value
	Where moveplan.Where
	// Limit bounds the messages grouped (0: the whole queue, up to
	// GroupWholeLimit; -1: up to the dump bound, DefaultDumpLimit); with
	// Where it counts chosen ones, as dump -n does, and the scan looks at
	// no more than the bound.
	Limit int
	// All groups by every GroupBy at once (GroupScan.GroupsBy): the
	// terminal UI cycles through them without scanning again.
	All   bool
	Force bool // browse a quorum queue near its delivery limit
	// Keep is how many of the first messages are also kept whole (peek -n
	// with --group-by shows them), with bodies up to BodyPreview bytes.
	Keep        int
	BodyPreview int
	// Deadline (> 0) bounds how long the browse reads (peek --max-time):
	// a scan still reading then stops with what it grouped, and its
	// coverage says so. 0: no deadline but the context's.
	Deadline time.Duration
	// Progress, when set, hears how far the browse has read, from the
	// reading goroutine (see PeekOptions.Progress).
	Progress func(broker.PeekProgress)
}

// GroupScan is a grouped queue.
type GroupScan struct {
	Groups   []Group       `json:"groups"`
	Coverage GroupCoverage `json:"coverage"`
	// Messages are the first Keep messages, decoded as a peek decodes them.
	Messages    []broker.Message `json:"-"`
	Queue       topology.Queue   `json:"-"`
	SideEffects []string         `json:"side_effects"`
	Released    int64            `json:"released"`
	ScannedAt   time.Time        `json:"scanned_at"`
	// browse is what the browse itself reported (no messages), when seen.
	browse *broker.PeekResult
	// all are the groups by every GroupBy, when the scan was asked for
	// them (GroupScanOptions.All).
	all map[string][]Group
}

// GroupsBy are the scan's groups by by: its Groups, or, for a scan of
// every grouping, by's; false when the scan did not group by by.
func (s *GroupScan) GroupsBy(by string) ([]Group, bool) {
	if gs, ok := s.all[by]; ok {
		return gs, true
	}
	return s.Groups, by == s.Coverage.By
}

// ScanGroups groups a queue's messages, up to the dump bound: a browse, with
// a peek's side effects (reported). The result is partial, with an
// ErrPartial error, when the browse stopped short (its deadline, a message
// the AMQP client could not read, Ctrl+C); what was read is grouped.
func ScanGroups(ctx context.Context, c DumpSource, o GroupScanOptions) (*GroupScan, error) {
	v, err := c.Topology(ctx)
	if err != nil {
		return nil, err
	}
	q, ok := v.Queue(o.Queue)
	if !ok {
		return nil, fmt.Errorf("group %s: queue %q does not exist in vhost %s", o.Queue, o.Queue, c.Vhost())
	}
	bound := GroupWholeLimit
	switch {
	case o.Limit < 0:
		bound = DefaultDumpLimit
	case o.Limit > 0 && o.Where.Empty():
		bound = min(o.Limit, DefaultDumpLimit)
	case o.Limit > 0:
		bound = DefaultDumpLimit // -n counts chosen ones: it looks as far as a browse may
	}
	bound = min(bound, dumpLimit())
	w := &groupWriter{g: NewGrouper(o.By), keep: o.Keep, preview: o.BodyPreview}
	if o.All {
		w.others = map[string]*Grouper{}
		for _, by := range GroupBys {
			if by != o.By {
				w.others[by] = NewGrouper(by)
			}
		}
	}
	if w.preview <= 0 {
		w.preview = broker.DefaultBodyPreview
	}
	scan := &GroupScan{Queue: q, ScannedAt: time.Now()}
	// Dump's Limit counts chosen messages under a --where (it then looks
	// as far as its bound); without one, what it looks at.
	limit := max(0, o.Limit)
	spy := &peekSpy{DumpSource: c, queue: o.Queue}
	rep, derr := Dump(ctx, spy, DumpOptions{Queue: o.Queue, Limit: min(limit, bound), Look: bound, Where: o.Where, Force: o.Force,
		Deadline: o.Deadline, Progress: o.Progress}, w)
	if rep == nil {
		rep = &DumpReport{}
	}
	if derr != nil && !errors.Is(derr, broker.ErrPartial) {
		return nil, derr
	}
	scan.Groups, scan.Messages = w.g.Groups(), w.kept
	if w.others != nil {
		scan.all = map[string][]Group{o.By: scan.Groups}
		for by, g := range w.others {
			scan.all[by] = g.Groups()
		}
	}
	scan.SideEffects, scan.Released = rep.SideEffects, rep.Released
	if scan.SideEffects == nil {
		scan.SideEffects = []string{}
	}
	looked := rep.Written + rep.Unmatched
	ready := q.Ready // the management API's, seconds old
	if spy.res != nil {
		ready = spy.res.Ready // the browse's own count, exact as it began
		scan.Queue.Ready, scan.Queue.Messages = spy.res.Ready, spy.res.Total
		scan.browse = spy.res
	}
	cov := GroupCoverage{By: o.By, Grouped: w.g.Len(), LookedAt: looked, Of: max(ready, int64(looked)), Bound: bound, Limit: max(0, o.Limit)}
	cov.Capped = int64(looked) < cov.Of
	if spy.res != nil && spy.res.HitDeadline() {
		cov.Deadline = o.Deadline
	}
	cov.Whole, cov.Partial = cov.Covers(), cov.Why()
	scan.Coverage = cov
	if rep.Incomplete != "" {
		// Dump's words are a file's ("the rest is not in the file"); the
		// groups say theirs.
		why := cov.Partial
		if why == "" || cov.Deadline > 0 {
			why = rep.Incomplete
		}
		derr = partialError("group %s: %s", o.Queue, why)
	}
	return scan, derr
}

// peekSpy is c, noting the result of the browse a dump makes of queue: its
// ready count is exact where the management API's is seconds old.
type peekSpy struct {
	DumpSource
	queue string
	res   *broker.PeekResult
}

func (p *peekSpy) Peek(ctx context.Context, queue string, opt broker.PeekOptions) (*broker.PeekResult, error) {
	res, err := p.DumpSource.Peek(ctx, queue, opt)
	if err == nil && queue == p.queue && p.res == nil {
		cp := *res
		cp.Messages = nil // the dump has them; the spy keeps what the browse said
		p.res = &cp
	}
	return res, err
}

// groupWriter is a MessageWriter that groups each message the browse hands
// on, as it is, and keeps only the groups (and the first keep messages,
// their bodies cut to preview): no dump line is made of it, so a message
// whose names the dump format cannot carry is grouped too.
type groupWriter struct {
	g       *Grouper
	others  map[string]*Grouper // by the other GroupBys (GroupScanOptions.All)
	keep    int
	kept    []broker.Message
	preview int
}

// Write takes the dump's header line, which grouping has no use for.
func (w *groupWriter) Write(p []byte) (int, error) { return len(p), nil }

func (w *groupWriter) Sync() error { return nil }

// WriteMessage groups m (decoded by the browse, its body whole).
func (w *groupWriter) WriteMessage(m *broker.Message) error {
	w.g.Add(m)
	for _, g := range w.others {
		g.Add(m)
	}
	if len(w.kept) < w.keep {
		k := *m // the browse's own: a copy, with a copy of the preview alone
		n := min(len(m.Body), w.preview)
		k.Body = append([]byte(nil), m.Body[:n]...)
		k.BodyTruncated = m.BodyTruncated || n < len(m.Body)
		k.BodyPreview = decode.PreviewText(k.Body)
		w.kept = append(w.kept, k)
	}
	return nil
}

// PeekResult is the scan as peek --group-by reports it: the queue, what the
// browse cost, the first messages, the groups and their coverage.
func (s *GroupScan) PeekResult() *GroupedPeek {
	res := &broker.PeekResult{Queue: s.Queue.Name, Type: s.Queue.Type, Total: s.Queue.Messages, Ready: s.Queue.Ready,
		SideEffects: s.SideEffects, Released: s.Released, Messages: s.Messages}
	if res.Messages == nil {
		res.Messages = []broker.Message{}
	}
	cov := s.Coverage
	gp := &GroupedPeek{PeekResult: res, Groups: s.Groups, Grouping: &cov}
	if b := s.browse; b != nil {
		res.ReleasedTo, res.ReleasedAt, res.Incomplete = b.ReleasedTo, b.ReleasedAt, b.Incomplete
	}
	at := s.ScannedAt
	if s.browse != nil && !s.browse.PeekedAt.IsZero() {
		at = s.browse.PeekedAt // the browse's clock (the simulation's own)
	}
	decode.AnnotateHoL(res, topology.EffectiveSettings(&s.Queue), at)
	return gp
}
