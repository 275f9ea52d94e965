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

// GroupScanOptions say what a scan groups.
type GroupScanOptions struct {
	Queue string
	By    string // a GroupBy value
	Where moveplan.Where
	// Limit bounds the messages grouped (0: all, up to the dump bound,
	// DefaultDumpLimit); with Where it counts chosen ones, as dump -n does.
	Limit int
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
	// Deadline is the deadline (--max-time) that stopped the scan short
	// (0: none did); the result's incomplete says it in words.
	Deadline time.Duration `json:"-"`
}

// Covers reports whether the groups cover every ready message.
func (c GroupCoverage) Covers() bool { return !c.Capped && int64(c.LookedAt) >= c.Of }

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
	bound := DefaultDumpLimit
	if o.Limit > 0 && o.Limit < bound && o.Where.Empty() {
		bound = o.Limit
	}
	w := &groupWriter{g: NewGrouper(o.By), keep: o.Keep, preview: o.BodyPreview}
	if w.preview <= 0 {
		w.preview = DefaultBodyPreview
	}
	scan := &GroupScan{Queue: q, ScannedAt: time.Now()}
	// Dump's Limit counts chosen messages under a --where (it then looks
	// as far as its bound); without one, what it looks at.
	limit := max(0, o.Limit)
	spy := &peekSpy{DumpSource: c, queue: o.Queue}
	rep, derr := Dump(ctx, spy, DumpOptions{Queue: o.Queue, Limit: min(limit, bound), Where: o.Where, Force: o.Force,
		Deadline: o.Deadline, Progress: o.Progress}, w)
	if rep == nil {
		rep = &DumpReport{}
	}
	if derr != nil && !errors.Is(derr, ErrPartial) {
		return nil, derr
	}
	if rep.Incomplete != "" {
		// Dump's words are a file's ("the rest is not in the file").
		derr = PartialError("group %s: %s", o.Queue, rep.Incomplete)
	}
	scan.Groups, scan.Messages = w.g.Groups(), w.kept
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
	cov := GroupCoverage{By: o.By, Grouped: w.g.Len(), LookedAt: looked, Of: max(ready, int64(looked)), Bound: bound}
	cov.Capped = int64(looked) < cov.Of
	if spy.res != nil && spy.res.hitDeadline {
		cov.Deadline = o.Deadline
	}
	scan.Coverage = cov
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
