package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Grouping the whole queue: the browse a dump does (Dump), with a writer
// that groups each message as it comes and keeps only the groups, so a
// queue of 100,000 messages costs a few counters per group, not the
// messages.

// GroupWholeLimit is how many ready messages groups cover by default:
// the whole queue when it holds no more, read within the scan's deadline
// (the peek's, DefaultPeekDeadline, unless told); past it they are the
// first GroupWholeLimit, and say they are partial. A scan asked for more
// (peek --group-by -n N, the terminal UI's S) reads up to DefaultDumpLimit.
const GroupWholeLimit = 10_000

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
	Progress func(PeekProgress)
}

// GroupCoverage is how much of the queue the groups cover. JSON field
// names are a contract.
type GroupCoverage struct {
	By string `json:"by"`
	// Grouped messages are in the groups; LookedAt were read (grouped,
	// not chosen by --where, or not readable: Unreadable).
	Grouped  int `json:"grouped"`
	LookedAt int `json:"looked_at"`
	// Unreadable is always 0 now: the scan groups every message it reads
	// (it once counted names the dump format cannot carry). Kept for the
	// JSON contract.
	Unreadable int `json:"unreadable,omitempty"`
	// Of is how many messages were ready when the scan began (at least
	// LookedAt); Bound the most a scan looks at.
	Of    int64 `json:"of"`
	Bound int   `json:"bound"`
	// Capped: the scan stopped at Bound, or before the end of the queue,
	// with messages it did not look at.
	Capped bool `json:"capped"`
	// Whole: the groups cover every ready message (Covers). Partial says
	// why they do not, in words ("" when whole): the JSON's, the text's
	// and the terminal UI's label.
	Whole   bool   `json:"whole"`
	Partial string `json:"partial,omitempty"`
	// Limit is the -n the scan was asked for (0: none, the default bound).
	Limit int `json:"-"`
	// Deadline is the deadline (--max-time) that stopped the scan short
	// (0: none did); the result's incomplete says it in words.
	Deadline time.Duration `json:"-"`
}

// Covers reports whether the groups cover every ready message.
func (c GroupCoverage) Covers() bool { return !c.Capped && int64(c.LookedAt) >= c.Of }

// Why is why the groups do not cover every ready message ("" when they
// do): what stopped the scan, and what groups more (Partial, for a
// coverage ScanGroups made).
func (c GroupCoverage) Why() string {
	if c.Covers() {
		return ""
	}
	of := fmt.Sprintf("%d of %d", c.LookedAt, c.Of)
	switch {
	case c.Deadline > 0:
		return fmt.Sprintf("the scan stopped at its %s deadline after %s", c.Deadline, of)
	case c.LookedAt >= c.Bound && c.Limit == 0 && c.Bound == GroupWholeLimit:
		return fmt.Sprintf("the first %s: groups cover a queue of up to %d ready messages by default (-n %d groups them all, up to %d)",
			of, GroupWholeLimit, min(c.Of, int64(DefaultDumpLimit)), DefaultDumpLimit)
	case c.LookedAt >= c.Bound && c.Bound >= DefaultDumpLimit:
		return fmt.Sprintf("the first %s: a scan stops at %d", of, DefaultDumpLimit)
	case c.LookedAt >= c.Bound:
		return fmt.Sprintf("the first %s, as -n asked", of)
	case c.Limit > 0 && c.Grouped >= c.Limit:
		return fmt.Sprintf("the first %d chosen by --where, as -n asked, in the first %s", c.Grouped, of)
	}
	return fmt.Sprintf("the browse saw %s ready messages: the others were taken or held by another reader meanwhile", of)
}

// GroupScan is a grouped queue.
type GroupScan struct {
	Groups   []Group       `json:"groups"`
	Coverage GroupCoverage `json:"coverage"`
	// Messages are the first Keep messages, decoded as a peek decodes them.
	Messages    []Message      `json:"-"`
	Queue       topology.Queue `json:"-"`
	SideEffects []string       `json:"side_effects"`
	Released    int64          `json:"released"`
	ScannedAt   time.Time      `json:"scanned_at"`
	// browse is what the browse itself reported (no messages), when seen.
	browse *PeekResult
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
		w.preview = DefaultBodyPreview
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
	if derr != nil && !errors.Is(derr, ErrPartial) {
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
	if spy.res != nil && spy.res.hitDeadline {
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
		derr = PartialError("group %s: %s", o.Queue, why)
	}
	return scan, derr
}

// peekSpy is c, noting the result of the browse a dump makes of queue: its
// ready count is exact where the management API's is seconds old.
type peekSpy struct {
	DumpSource
	queue string
	res   *PeekResult
}

func (p *peekSpy) Peek(ctx context.Context, queue string, opt PeekOptions) (*PeekResult, error) {
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
	kept    []Message
	preview int
}

// Write takes the dump's header line, which grouping has no use for.
func (w *groupWriter) Write(p []byte) (int, error) { return len(p), nil }

func (w *groupWriter) Sync() error { return nil }

// WriteMessage groups m (decoded by the browse, its body whole).
func (w *groupWriter) WriteMessage(m *Message) error {
	w.g.Add(m)
	for _, g := range w.others {
		g.Add(m)
	}
	if len(w.kept) < w.keep {
		k := *m // the browse's own: a copy, with a copy of the preview alone
		n := min(len(m.Body), w.preview)
		k.Body = append([]byte(nil), m.Body[:n]...)
		k.BodyTruncated = m.BodyTruncated || n < len(m.Body)
		k.BodyPreview = previewText(k.Body)
		w.kept = append(w.kept, k)
	}
	return nil
}

// PeekResult is the scan as peek --group-by reports it: the queue, what the
// browse cost, the first messages, the groups and their coverage.
func (s *GroupScan) PeekResult() *PeekResult {
	res := &PeekResult{Queue: s.Queue.Name, Type: s.Queue.Type, Total: s.Queue.Messages, Ready: s.Queue.Ready,
		SideEffects: s.SideEffects, Released: s.Released, Messages: s.Messages, Groups: s.Groups}
	if res.Messages == nil {
		res.Messages = []Message{}
	}
	cov := s.Coverage
	res.Grouping = &cov
	if b := s.browse; b != nil {
		res.ReleasedTo, res.ReleasedAt, res.Incomplete = b.ReleasedTo, b.ReleasedAt, b.Incomplete
	}
	at := s.ScannedAt
	if s.browse != nil && !s.browse.PeekedAt.IsZero() {
		at = s.browse.PeekedAt // the browse's clock (the simulation's own)
	}
	AnnotateHoL(res, topology.EffectiveSettings(&s.Queue), at)
	return res
}
