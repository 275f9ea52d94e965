package broker

import (
	"time"

	"github.com/ladder-tui/ladder/retry"
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

// SeenTime is the best time known for when a message entered its retry
// story, and where it was read: the timestamp property; else the earliest
// x-death time; else the framework's fault time; else zero and "".
//
// AGE is how long ago the message was first sent or first failed, so the
// earliest known time is the right one: each x-death entry carries the
// FIRST death for its {queue, reason}, and the earliest of them is the
// first failure the broker recorded, the nearest to the publish. The
// fault time comes last: a framework rewrites it on every failure.
func SeenTime(ts *time.Time, deaths []retry.Death, st retry.RetryState) (time.Time, string) {
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
	return SeenTime(m.Properties.Timestamp, m.Deaths, m.Retry)
}
