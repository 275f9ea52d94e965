package usecase

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

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
func (g *Grouper) Add(m *broker.Message) {
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
		gr.SampleIDs = append(gr.SampleIDs, moveplan.IDOf(m.Properties.MessageID, m.BodyDigest))
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
func GroupMessages(ms []broker.Message, by string) []Group {
	g := NewGrouper(by)
	for i := range ms {
		g.Add(&ms[i])
	}
	return g.Groups()
}

// groupKey is m's group under by, and the error type (by error).
func groupKey(m *broker.Message, by string) (key, typ string) {
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
func Choose(ms []broker.Message, w moveplan.Where, now time.Time) []broker.Message {
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
