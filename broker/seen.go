package broker

import (
	"slices"
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Where a message's Seen time was read (Message.SeenFrom).
const (
	// SeenTimestamp: the timestamp property, set by the publisher.
	SeenTimestamp = "timestamp"
	// SeenXDeath: the earliest x-death entry's time, its first death.
	SeenXDeath = "x-death"
	// SeenErrorTime: the framework's fault time (RetryState.LastErrorTime:
	// NServiceBus.TimeOfFailure, MT-Fault-Timestamp, …).
	SeenErrorTime = "error-time"
)

// How a message's Reached time is known (Message.ReachedFrom).
const (
	// ReachedXDeath: the broker dead-lettered it into the queue; the time
	// is that death's x-death entry's, exact when it is the first death
	// of its {queue, reason} (x-death keeps no later time).
	ReachedXDeath = "x-death"
	// ReachedErrorTime: a framework published it there on a failure and
	// recorded when (RetryState.LastErrorTime).
	ReachedErrorTime = "error-time"
)

// ReachedTime is when m reached the queue it is in, where known: the death
// that dead-lettered it there (settings are its dead-letter settings:
// their exchange is the one m came through, with the key it sets or the
// keys m had), counted once; else a framework's failure time.
func (m *Message) ReachedTime(settings func(queue string) (topology.QueueSettings, bool)) (time.Time, string) {
	if len(m.Deaths) > 0 && settings != nil {
		d := m.Deaths[0]
		if set, ok := settings(d.Queue); ok && !d.Carried && d.Count == 1 && !d.Time.IsZero() && set.HasDeadLetterExchange &&
			set.DeadLetterExchange == m.Exchange && (set.HasDeadLetterRoutingKey && set.DeadLetterRoutingKey == m.RoutingKey ||
			!set.HasDeadLetterRoutingKey && slices.Contains(d.RoutingKeys, m.RoutingKey)) {
			return d.Time, ReachedXDeath
		}
	}
	if !m.Retry.LastErrorTime.IsZero() {
		return m.Retry.LastErrorTime, ReachedErrorTime
	}
	return time.Time{}, ""
}

// seenTime is the best time known for when a message entered its retry
// story, and where it was read: the timestamp property; else the earliest
// x-death time; else the framework's fault time; else zero and "".
//
// AGE is how long ago the message was first sent or first failed, so the
// earliest known time is the right one: each x-death entry carries the
// FIRST death for its {queue, reason}, and the earliest of them is the
// first failure the broker recorded, the nearest to the publish. The
// fault time comes last: a framework rewrites it on every failure.
func seenTime(ts *time.Time, deaths []retry.Death, st retry.RetryState) (time.Time, string) {
	if ts != nil && !ts.IsZero() {
		return *ts, SeenTimestamp
	}
	var first time.Time
	for _, d := range deaths {
		if !d.Time.IsZero() && (first.IsZero() || d.Time.Before(first)) {
			first = d.Time
		}
	}
	if !first.IsZero() {
		return first, SeenXDeath
	}
	if !st.LastErrorTime.IsZero() {
		return st.LastErrorTime, SeenErrorTime
	}
	return time.Time{}, ""
}

// BestTime is m's Seen and SeenFrom, read from its properties and decoded
// headers when DecodeMessage did not set them (a message a test or a dump
// built).
func (m *Message) BestTime() (time.Time, string) {
	if m.SeenFrom != "" {
		return m.Seen, m.SeenFrom
	}
	return seenTime(m.Properties.Timestamp, m.Deaths, m.Retry)
}
