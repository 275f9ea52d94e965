package broker

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/ladder-tui/ladder/retry/moveplan"
)

// Group is messages that broke the same way (peek --group-by). JSON field
// names are a contract.
type Group struct {
	Key       string    `json:"key"`
	Count     int       `json:"count"`
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
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
	}
	gr := &g.groups[gi]
	gr.Count++
	gr.Positions = append(gr.Positions, m.Position)
	gr.IDs = append(gr.IDs, m.Properties.MessageID)
	if len(gr.SampleIDs) < sampleIDs {
		gr.SampleIDs = append(gr.SampleIDs, idOf(m.Properties.MessageID, m.BodyDigest))
	}
	if t := seenAt(m); !t.IsZero() {
		if gr.FirstSeen.IsZero() || t.Before(gr.FirstSeen) {
			gr.FirstSeen = t
		}
		if t.After(gr.LastSeen) {
			gr.LastSeen = t
		}
	}
}

// Len is how many messages were grouped.
func (g *Grouper) Len() int { return g.n }

// Groups are the groups so far, largest first (then by key).
func (g *Grouper) Groups() []Group {
	out := slices.Clone(g.groups)
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

// seenAt is when the message last died, else the best time known of it
// (Seen: its timestamp, else x-death's or the framework's fault time).
func seenAt(m *Message) time.Time {
	if len(m.Deaths) > 0 && !m.Deaths[0].Time.IsZero() {
		return m.Deaths[0].Time
	}
	t, _ := m.BestTime()
	return t
}

// Choose keeps the messages --where chooses, seen at now.
func Choose(ms []Message, w moveplan.Where, now time.Time) []Message {
	if w.Empty() {
		return ms
	}
	out := ms[:0:0]
	for _, m := range ms {
		if w.Match(subjectOf(&m), now) {
			out = append(out, m)
		}
	}
	return out
}

// subjectOf is what --where reads of a message a peek decoded: its retry
// state, deaths and origin as the peek shows them.
func subjectOf(m *Message) moveplan.Subject {
	s := moveplan.Subject{Headers: m.Headers, Deaths: m.Deaths, Origin: m.Origin, Retry: m.Retry, Body: m.Body}
	if m.Properties.Timestamp != nil {
		s.Timestamp = *m.Properties.Timestamp
	}
	return s
}
