package broker

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// Group is messages that broke the same way (peek --group-by). JSON field
// names are a contract.
type Group struct {
	Key   string `json:"key"`
	Count int    `json:"count"`
	// FirstSeen and LastSeen are the earliest and latest of the group's
	// messages' times of the kind Times says (a GroupTime*), over the
	// Timed messages that have one; zero when none has.
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	Times     string    `json:"times,omitempty"`
	Timed     int       `json:"timed,omitempty"`
	// Positions are the grouped messages' queue positions (moving a group
	// moves exactly these); SampleIDs the first few ids.
	Positions []int    `json:"positions"`
	SampleIDs []string `json:"sample_ids"`
	// Type is the error type the group's messages share (by error), ""
	// when none names one.
	Type string `json:"type,omitempty"`
	// Sample is the full error text of the group's first message: the key
	// masks what differs between messages, the sample shows one as it is.
	Sample string `json:"sample,omitempty"`
	// IDs are the message ids at Positions, in the same order ("" for a
	// message without one): moving the group checks each position holds
	// the message grouped there.
	IDs []string `json:"-"`
}

// GroupBy names what messages are grouped by.
const (
	// GroupError: the error's type and its message with ids, numbers and
	// quoted values masked (moveplan.CauseOf), so one cause is one group.
	GroupError = "error"
	// GroupErrorText: the error text exactly as it is.
	GroupErrorText = "error-text"
	GroupReason    = "reason"
	GroupQueue     = "queue"
	GroupOrigin    = "origin"
)

// GroupBys are the groupings, in the order they are offered.
var GroupBys = []string{GroupError, GroupErrorText, GroupReason, GroupQueue, GroupOrigin}

// ParseGroupBy checks a --group-by value.
func ParseGroupBy(s string) (string, error) {
	if slices.Contains(GroupBys, s) {
		return s, nil
	}
	return "", fmt.Errorf("--group-by %q: want error, error-text, reason, queue or origin", s)
}

// Which time a group's FirstSeen and LastSeen are (Group.Times). A group
// is timed by one kind, the first of these all its messages have (else the
// one most of them have): times of different kinds make no span.
const (
	// GroupTimeReached: when each message reached the queue (its
	// Message.Reached: the x-death of the death that put it there, or the
	// failure time of the framework that published it there).
	GroupTimeReached = "reached"
	// GroupTimePublished: the timestamp property its publisher set.
	GroupTimePublished = "published"
	// GroupTimeFirstDeath: its earliest x-death time, its first failure
	// the broker recorded.
	GroupTimeFirstDeath = "first-death"
)

// groupTimes are the kinds, in the order a group prefers them.
var groupTimes = [...]string{GroupTimeReached, GroupTimePublished, GroupTimeFirstDeath}

// span is the earliest and latest of one kind of time, and how many
// messages had one.
type span struct {
	first, last time.Time
	n           int
}

func (s *span) add(t time.Time) {
	if t.IsZero() {
		return
	}
	s.n++
	if s.first.IsZero() || t.Before(s.first) {
		s.first = t
	}
	if t.After(s.last) {
		s.last = t
	}
}

// sampleIDs is how many ids a group shows.
const sampleIDs = 3

// groupNone is the group of messages that have no value to group by.
const groupNone = "(none)"

// Grouper groups messages one at a time, keeping only the groups: counts,
// times, positions and ids, one sample text each.
type Grouper struct {
	by     string
	index  map[string]int
	groups []Group
	spans  [][len(groupTimes)]span // by group: one span per kind of time
	n      int
}

// NewGrouper groups by by (a GroupBy value).
func NewGrouper(by string) *Grouper { return &Grouper{by: by, index: map[string]int{}} }

// Add puts m in its group.
func (g *Grouper) Add(m *Message) {
	g.n++
	k, typ := groupKey(m, g.by)
	gi, ok := g.index[k]
	if !ok {
		gi = len(g.groups)
		g.index[k] = gi
		g.groups = append(g.groups, Group{Key: k, Type: typ, Sample: m.Retry.LastError, Positions: []int{}, SampleIDs: []string{}})
		g.spans = append(g.spans, [len(groupTimes)]span{})
	}
	gr := &g.groups[gi]
	gr.Count++
	gr.Positions = append(gr.Positions, m.Position)
	gr.IDs = append(gr.IDs, m.Properties.MessageID)
	if len(gr.SampleIDs) < sampleIDs {
		gr.SampleIDs = append(gr.SampleIDs, IDOf(m.Properties.MessageID, m.BodyDigest))
	}
	sp := &g.spans[gi]
	sp[0].add(m.Reached)
	if m.Properties.Timestamp != nil {
		sp[1].add(*m.Properties.Timestamp)
	}
	sp[2].add(firstDeath(m.Deaths))
}

// firstDeath is the earliest x-death time (zero when none has one).
func firstDeath(ds []retry.Death) time.Time {
	var t time.Time
	for _, d := range ds {
		if !d.Time.IsZero() && (t.IsZero() || d.Time.Before(t)) {
			t = d.Time
		}
	}
	return t
}

// Len is how many messages were grouped.
func (g *Grouper) Len() int { return g.n }

// Groups are the groups so far, largest first (then by key).
func (g *Grouper) Groups() []Group {
	out := slices.Clone(g.groups)
	for i := range out {
		// The first kind every message has, else the one most have.
		best := -1
		for k, sp := range g.spans[i] {
			if sp.n > 0 && (best < 0 || sp.n > g.spans[i][best].n) {
				best = k
			}
			if sp.n == out[i].Count {
				best = k
				break
			}
		}
		if best >= 0 {
			sp := g.spans[i][best]
			out[i].FirstSeen, out[i].LastSeen, out[i].Times, out[i].Timed = sp.first, sp.last, groupTimes[best], sp.n
		}
	}
	slices.SortStableFunc(out, func(a, b Group) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key)) })
	return out
}

// GroupMessages groups messages, largest group first (then by key): by the
// last error's cause or exact text, the last death's reason or queue, or
// the origin. A message without one is in the group "(none)".
func GroupMessages(ms []Message, by string) []Group {
	g := NewGrouper(by)
	for i := range ms {
		g.Add(&ms[i])
	}
	return g.Groups()
}

// groupKey is m's group under by, and the error type (by error).
func groupKey(m *Message, by string) (key, typ string) {
	switch by {
	case GroupError:
		if c := moveplan.CauseOf(m.Headers, m.Retry); c.Key != "" {
			return c.Key, c.Type
		}
	case GroupErrorText:
		if m.Retry.LastError != "" {
			return m.Retry.LastError, ""
		}
	case GroupReason:
		if len(m.Deaths) > 0 {
			return string(m.Deaths[0].Reason), ""
		}
	case GroupQueue:
		if len(m.Deaths) > 0 {
			return m.Deaths[0].Queue, ""
		}
	case GroupOrigin:
		if m.Origin != nil {
			return m.Origin.Exchange + ":" + m.Origin.RoutingKey, ""
		}
	}
	return groupNone, ""
}

// Choose keeps the messages --where chooses, seen at now.
func Choose(ms []Message, w moveplan.Where, now time.Time) []Message {
	if w.Empty() {
		return ms
	}
	out := ms[:0:0]
	for _, m := range ms {
		if w.Match(m.Subject(), now) {
			out = append(out, m)
		}
	}
	return out
}

// Subject is what --where reads of a message a peek decoded: its retry
// state, deaths and origin as the peek shows them.
func (m *Message) Subject() moveplan.Subject {
	s := moveplan.Subject{Headers: m.Headers, Deaths: m.Deaths, Origin: m.Origin, Retry: m.Retry, Body: m.Body}
	if m.Properties.Timestamp != nil {
		s.Timestamp = *m.Properties.Timestamp
	}
	return s
}

// GroupWholeLimit is how many ready messages groups cover by default:
// the whole queue when it holds no more, read within the scan's deadline
// (the peek's, DefaultPeekDeadline, unless told); past it they are the
// first GroupWholeLimit, and say they are partial. A scan asked for more
// (peek --group-by -n N, the terminal UI's S) reads up to DefaultDumpLimit.
const GroupWholeLimit = 10_000

// DefaultDumpLimit bounds a browsing dump without --limit: a browse holds
// every message it reads, unacked on the broker, until it ends.
const DefaultDumpLimit = 100_000

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

// IDOf names a message in reports and the audit log: its id, or
// sha256:<digest> of its body for one without.
func IDOf(id, digest string) string {
	if id != "" {
		return id
	}
	return "sha256:" + digest
}
