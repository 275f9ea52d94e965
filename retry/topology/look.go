package topology

import (
	"fmt"
	"time"
)

// Look is what the last peek of a queue saw of its messages' expirations,
// from the head: what tells head-of-line blocking, messages that never
// expire and a sound wait queue apart, which the queue's settings alone
// cannot (the same queue can be fed by publishers setting an expiration
// and by dead-lettering, which strips it). A client keeps the latest look
// of each queue with its evidence (Seen.Look); the analysis weighs it
// against the queue as read now, and drops it once the queue no longer
// holds what was seen (see Look.Holds).
type Look struct {
	// At is when the messages were read; Ready how many were ready then,
	// Read how many of them (from the head) were read.
	At    time.Time
	Ready int64
	Read  int
	// Expiring read messages carry their own expiration (a publisher set
	// one); Stripped ones lost it to dead-lettering, and never expire
	// where the queue has no TTL; Never ones have no TTL at all.
	Expiring, Stripped, Never int
	// Blocked read messages are held behind a longer expiration ahead of
	// them (only the head expires); Overdue of them were already past
	// their own due time when read.
	Blocked, Overdue int
	// BlockedBy is the position of the first blocker, BlockedUntil when
	// the blockers are due (zero: never); HeadTimestamp is the head's
	// timestamp property (zero when it had none), which tells whether the
	// queue still has the same head.
	BlockedBy     int
	BlockedUntil  time.Time
	HeadTimestamp time.Time
}

// Holds reports whether q, as read now, may still hold what the look saw:
// it holds messages, no fewer than were ready then, and its head is the
// one seen (when both timestamps are known).
func (l *Look) Holds(q *Queue) bool {
	// Fewer messages than were ready: some left since (only the head
	// leaves a wait queue: it expired or was taken), and the head seen
	// with them.
	if l == nil || q.Messages <= 0 || q.Messages < l.Ready {
		return false
	}
	if !l.HeadTimestamp.IsZero() && !q.HeadMessageTimestamp.IsZero() && !l.HeadTimestamp.Equal(q.HeadMessageTimestamp) {
		return false
	}
	return true
}

// stillBlocked is how many of the blocked messages the look saw are still
// held at now: none once the blockers are due (they leave, and the rest
// with them) or when the queue no longer holds more than its head.
func (l *Look) stillBlocked(q *Queue, now time.Time) int64 {
	if l == nil || l.Blocked == 0 || !l.Holds(q) {
		return 0
	}
	if !l.BlockedUntil.IsZero() && !now.Before(l.BlockedUntil) {
		return 0
	}
	return min(int64(l.Blocked), q.Messages-1)
}

// stillStuck is how many of the messages the look saw with a stripped
// expiration (or none) may still be here: at most what the queue holds.
func (l *Look) stillStuck(q *Queue) int64 {
	if l == nil || l.Stripped+l.Never == 0 || !l.Holds(q) {
		return 0
	}
	return min(int64(l.Stripped+l.Never), q.Messages)
}

// later is the newer of two looks (nil when both are).
func (l *Look) later(o *Look) *Look {
	switch {
	case l == nil:
		return o
	case o == nil:
		return l
	case o.At.After(l.At):
		return o
	}
	return l
}

func (l *Look) equal(o *Look) bool {
	if l == nil || o == nil {
		return l == o
	}
	return *l == *o
}

// LookOf summarises a peek of queue read at at (ready then) from the
// head-of-line marks of the messages read (HoL, in queue order) and their
// inputs: nil when nothing was read.
func LookOf(at time.Time, ready int64, in []HoLInput, marks []HoLMark) *Look {
	if len(in) == 0 {
		return nil
	}
	l := &Look{At: at, Ready: ready, Read: len(in), BlockedBy: -1, HeadTimestamp: in[0].Timestamp}
	for i, m := range in {
		switch {
		case m.Stripped:
			l.Stripped++
		case m.HasExpiration:
			l.Expiring++
		default:
			l.Never++
		}
		if i >= len(marks) {
			continue
		}
		mk := marks[i]
		if mk.Blocked {
			l.Blocked++
			if mk.Overdue > 0 {
				l.Overdue++
			}
			if l.BlockedBy < 0 {
				l.BlockedBy = mk.BlockedBy
			}
		}
	}
	// The blockers leave at the latest due time ahead of the last blocked
	// message: never when one of them never expires.
	if l.Blocked > 0 {
		never := false
		var until time.Time
		for i, mk := range marks {
			if i >= len(in) {
				break
			}
			if mk.Blocked {
				continue
			}
			if mk.NeverDue {
				never = true
			} else if mk.DueAt.After(until) {
				until = mk.DueAt
			}
		}
		if !never {
			l.BlockedUntil = until
		}
	}
	return l
}

// lookFindings are the findings only a look tells: head-of-line blocking a
// peek saw (blocked messages still held at now), and messages here that
// never expire. fedByDeadLetters says whether a dead-letter route reaches
// the queue; backTo is where its messages are meant to return.
func lookFindings(q *Queue, l *Look, backTo string, fedByDeadLetters bool, queueTTL bool, now time.Time) []Finding {
	var out []Finding
	if n := l.stillBlocked(q, now); n > 0 {
		until := "never: the message ahead of them has no TTL"
		if !l.BlockedUntil.IsZero() {
			until = "when the message ahead of them is due, " + fndDuration(l.BlockedUntil.Sub(now).Truncate(time.Second)) + " from now"
		}
		msg := fmt.Sprintf("%s wait behind a longer expiration at position %d (head-of-line blocking: only the head expires); they leave %s",
			fndCount(n)+" "+plural(n, "message", "messages"), max(l.BlockedBy, 0), until)
		if int64(l.Read) < l.Ready {
			// The rest were not read: they may wait too.
			msg += fmt.Sprintf("; the peek read the first %s of %s", fndCount(int64(l.Read)), fndCount(l.Ready))
		}
		if l.Overdue > 0 {
			msg += fmt.Sprintf("; %s already overdue when peeked at %s", fndCount(int64(l.Overdue)), l.At.Format("15:04:05"))
		}
		msg += " (ladder unblock, or u, frees them)"
		out = append(out, Finding{Code: CodeHoLBlocked, Severity: SeverityError, Queue: q.Name, Message: msg})
	}
	if queueTTL || backTo == "" {
		return out
	}
	if n := l.stillStuck(q); n > 0 {
		why := "they carry no expiration and this queue has no TTL"
		if l.Stripped > 0 && fedByDeadLetters {
			why = "they were dead-lettered into this queue, which strips per-message expiration, and it has no TTL"
		}
		var who string
		switch {
		case n == int64(l.Read) && n == 1:
			who = "the message peeked at " + l.At.Format("15:04:05") + " never returns"
		case n == int64(l.Read):
			who = "all " + fndCount(n) + " messages peeked at " + l.At.Format("15:04:05") + " never return"
		default:
			who = fmt.Sprintf("%s of the %s messages peeked at %s never %s", fndCount(n), fndCount(int64(l.Read)), l.At.Format("15:04:05"), plural(n, "returns", "return"))
		}
		out = append(out, Finding{Code: CodeStuck, Severity: SeverityError, Queue: q.Name, Message: fmt.Sprintf("%s to %q: %s", who, backTo, why)})
	}
	return out
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
