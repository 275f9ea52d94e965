package broker

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/ladder-tui/ladder/retry"
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
}

// GroupBy names what messages are grouped by.
const (
	GroupError  = "error"
	GroupReason = "reason"
	GroupQueue  = "queue"
	GroupOrigin = "origin"
)

// ParseGroupBy checks a --group-by value.
func ParseGroupBy(s string) (string, error) {
	switch s {
	case GroupError, GroupReason, GroupQueue, GroupOrigin:
		return s, nil
	}
	return "", fmt.Errorf("--group-by %q: want error, reason, queue or origin", s)
}

// sampleIDs is how many ids a group shows.
const sampleIDs = 3

// GroupMessages groups peeked messages, largest group first (then by key):
// by the last error text, the last death's reason or queue, or the origin.
// A message without one is in the group "(none)".
func GroupMessages(ms []Message, by string) []Group {
	index := map[string]int{}
	var out []Group
	for i := range ms {
		m := &ms[i]
		k := groupKey(m, by)
		gi, ok := index[k]
		if !ok {
			gi = len(out)
			index[k] = gi
			out = append(out, Group{Key: k, Positions: []int{}, SampleIDs: []string{}})
		}
		g := &out[gi]
		g.Count++
		g.Positions = append(g.Positions, m.Position)
		if len(g.SampleIDs) < sampleIDs {
			g.SampleIDs = append(g.SampleIDs, idOf(m.Properties.MessageID, m.BodyDigest))
		}
		if t := seenAt(m); !t.IsZero() {
			if g.FirstSeen.IsZero() || t.Before(g.FirstSeen) {
				g.FirstSeen = t
			}
			if t.After(g.LastSeen) {
				g.LastSeen = t
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Group) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key)) })
	return out
}

func groupKey(m *Message, by string) string {
	const none = "(none)"
	switch by {
	case GroupError:
		if m.Retry.LastError != "" {
			return m.Retry.LastError
		}
	case GroupReason:
		if len(m.Deaths) > 0 {
			return string(m.Deaths[0].Reason)
		}
	case GroupQueue:
		if len(m.Deaths) > 0 {
			return m.Deaths[0].Queue
		}
	case GroupOrigin:
		if m.Origin != nil {
			return m.Origin.Exchange + ":" + m.Origin.RoutingKey
		}
	}
	return none
}

// seenAt is when the message last died, else its timestamp.
func seenAt(m *Message) time.Time {
	if len(m.Deaths) > 0 && !m.Deaths[0].Time.IsZero() {
		return m.Deaths[0].Time
	}
	if m.Properties.Timestamp != nil {
		return *m.Properties.Timestamp
	}
	return time.Time{}
}

// Choose keeps the messages --where chooses, seen at now.
func Choose(ms []Message, w retry.Where, now time.Time) []Message {
	if w.Empty() {
		return ms
	}
	out := ms[:0:0]
	for _, m := range ms {
		s := retry.Subject{Headers: m.Headers, Deaths: m.Deaths, Origin: m.Origin, Retry: m.Retry, Body: m.Body}
		if m.Properties.Timestamp != nil {
			s.Timestamp = *m.Properties.Timestamp
		}
		if w.Match(s, now) {
			out = append(out, m)
		}
	}
	return out
}
