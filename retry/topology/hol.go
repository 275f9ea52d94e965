package topology

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// HoLInput is one message of a wait queue, in queue order (head first).
type HoLInput struct {
	// Expiration is the per-message TTL (the AMQP expiration property).
	//
	// Dead-lettering REMOVES expiration and keeps the value in the x-death
	// entry's original-expiration. A caller may pass that value here with
	// Stripped: it no longer applies, so the message is due by the queue
	// TTL alone, and without one it is never due (Stuck).
	Expiration    time.Duration
	HasExpiration bool
	// Stripped: Expiration came from x-death's original-expiration, not
	// from the message: dead-lettering removed it, so without a queue TTL
	// the message never expires (NeverDue, Stuck).
	Stripped bool
	// Timestamp is when the message entered this queue as far as known,
	// usually the publisher's timestamp property (second resolution, the
	// publisher's clock); zero when absent. For position 0 the queue's
	// HeadMessageTimestamp is the same value.
	Timestamp time.Time
}

// HoLMark is the head-of-line verdict for one message.
type HoLMark struct {
	Position int
	// DueAt is when the message's TTL runs out: enqueue time plus the smaller
	// of per-message and queue TTL. Zero with NeverDue.
	DueAt time.Time
	// NeverDue: neither a per-message nor a queue TTL, so it never expires
	// and everything behind it waits for a consumer.
	NeverDue bool
	// Stuck: never due because dead-lettering stripped its expiration and
	// the queue has no TTL. NeverDueReason says why in words.
	Stuck          bool
	NeverDueReason string
	// TTL is the TTL applied (min of per-message and queue TTL); 0 with NeverDue.
	TTL time.Duration
	// Blocked: its own due time comes before that of a message ahead of it
	// that is not yet due, so it cannot leave on time (only the head expires).
	Blocked bool
	// BlockedBy is the position of the message ahead with the latest due time
	// (the one that actually releases it; a never-due one counts as latest,
	// and on ties the earliest position), or -1.
	BlockedBy int
	// Overdue is now − DueAt when positive.
	Overdue time.Duration
	// Estimated: the enqueue time was not known and was estimated (see
	// HoLResult.Basis).
	Estimated bool
}

// MarshalJSON writes due_at as RFC 3339 (null when never due) and durations
// in milliseconds.
func (m HoLMark) MarshalJSON() ([]byte, error) {
	type out struct {
		Position  int     `json:"position"`
		DueAt     *string `json:"due_at"`
		NeverDue  bool    `json:"never_due"`
		Reason    string  `json:"never_due_reason,omitempty"`
		Stuck     bool    `json:"stuck,omitempty"`
		TTLms     *int64  `json:"ttl_ms"`
		Blocked   bool    `json:"blocked"`
		BlockedBy int     `json:"blocked_by"`
		OverdueMs int64   `json:"overdue_ms"`
		Estimated bool    `json:"estimated"`
	}
	o := out{Position: m.Position, NeverDue: m.NeverDue, Reason: m.NeverDueReason, Stuck: m.Stuck, Blocked: m.Blocked,
		BlockedBy: m.BlockedBy, OverdueMs: m.Overdue.Milliseconds(), Estimated: m.Estimated}
	if !m.NeverDue {
		s := m.DueAt.Format(time.RFC3339Nano)
		ms := m.TTL.Milliseconds()
		o.DueAt, o.TTLms = &s, &ms
	}
	return json.Marshal(o)
}

// Why a message is never due.
const (
	NeverDueNoTTL = "no TTL applies: it leaves only when consumed"
	NeverDueStuck = "stuck: dead-lettering stripped its expiration and this queue has no TTL"
)

// HoLResult is the analysis of one wait queue's messages.
type HoLResult struct {
	Marks []HoLMark `json:"marks"`
	// Estimated: some enqueue times were not known; Basis says what was assumed.
	Estimated bool   `json:"estimated"`
	Basis     string `json:"basis"`
}

// HoL works out, for messages in queue order, when each is due, whether a
// message ahead holds it back, and how overdue it is at now. queueTTL is the
// queue's effective TTL, 0 for none.
//
// RabbitMQ only expires the message at the head, so a message leaves at the
// latest due time among itself and everything ahead of it.
//
// Enqueue times come from Timestamp. A message without one takes the nearest
// timestamped message ahead of it (FIFO: it came no earlier), else the
// nearest behind it (no later), else now: then due times are the latest
// possible and Overdue is 0, a lower bound, while Blocked still follows from
// the TTLs' order. Basis says which applied.
func HoL(msgs []HoLInput, queueTTL time.Duration, now time.Time) HoLResult {
	res := HoLResult{Marks: make([]HoLMark, len(msgs)), Basis: "publish timestamps"}
	enq := make([]time.Time, len(msgs))
	missing := 0
	last := time.Time{}
	for i, m := range msgs {
		if !m.Timestamp.IsZero() {
			last = m.Timestamp
			enq[i] = last
			continue
		}
		missing++
		enq[i] = last // zero until a timestamp has been seen
	}
	if missing > 0 {
		res.Estimated = true
		next := time.Time{}
		for i := len(msgs) - 1; i >= 0; i-- {
			switch {
			case !msgs[i].Timestamp.IsZero():
				next = msgs[i].Timestamp
			case enq[i].IsZero() && !next.IsZero():
				enq[i] = next
			case enq[i].IsZero():
				enq[i] = now
			}
		}
		if missing == len(msgs) {
			res.Basis = "no timestamps: due times assume every message was enqueued now, so they are the latest possible and overdue is not known"
		} else {
			res.Basis = fmt.Sprintf("%d of %d messages have no timestamp: their enqueue time is taken from the nearest timestamped message ahead (or behind)", missing, len(msgs))
		}
	}

	// Latest due ahead so far; never-due is later than anything.
	aheadPos, aheadNever := -1, false
	var aheadDue time.Time
	for i, m := range msgs {
		mk := HoLMark{Position: i, BlockedBy: -1, Estimated: msgs[i].Timestamp.IsZero()}
		ttl, has := m.Expiration, m.HasExpiration
		if has && ttl < 0 {
			ttl = 0
		}
		// A stripped expiration no longer applies: only a queue TTL does.
		stuck := has && m.Stripped && queueTTL <= 0
		if m.Stripped {
			ttl, has = 0, false
		}
		if queueTTL > 0 && (!has || queueTTL < ttl) {
			ttl, has = queueTTL, true
		}
		if has {
			mk.TTL = ttl
			mk.DueAt = enq[i].Add(ttl)
			if d := now.Sub(mk.DueAt); d > 0 {
				mk.Overdue = d
			}
			switch {
			case aheadNever:
				mk.Blocked, mk.BlockedBy = true, aheadPos
			case aheadPos >= 0 && aheadDue.After(mk.DueAt) && aheadDue.After(now):
				mk.Blocked, mk.BlockedBy = true, aheadPos
			}
		} else {
			mk.NeverDue = true
			mk.NeverDueReason = NeverDueNoTTL
			if stuck {
				mk.Stuck, mk.NeverDueReason = true, NeverDueStuck
			}
		}
		res.Marks[i] = mk

		switch {
		case aheadNever:
		case mk.NeverDue:
			aheadPos, aheadNever = i, true
		case aheadPos < 0 || mk.DueAt.After(aheadDue):
			aheadPos, aheadDue = i, mk.DueAt
		}
	}
	return res
}

// holFindings reports head-of-line blocking seen in a peeked wait queue
// (marks from HoL): blocked messages, or else messages with different TTLs,
// which block as soon as a longer one reaches the head.
func holFindings(queue string, marks []HoLMark) []Finding {
	blocked, by := 0, -1
	var worst time.Duration
	minTTL, maxTTL := time.Duration(-1), time.Duration(-1)
	never := false
	for _, m := range marks {
		if m.Blocked {
			blocked++
			if by < 0 {
				by = m.BlockedBy
			}
			worst = max(worst, m.Overdue)
		}
		if m.NeverDue {
			never = true
			continue
		}
		if minTTL < 0 || m.TTL < minTTL {
			minTTL = m.TTL
		}
		maxTTL = max(maxTTL, m.TTL)
	}
	var msg string
	switch {
	case blocked > 0 && worst > 0:
		msg = fmt.Sprintf("%d of %d peeked messages are held behind a longer expiration at position %d; the worst is %s overdue (head-of-line blocking)",
			blocked, len(marks), by, fndDuration(worst))
	case blocked > 0:
		msg = fmt.Sprintf("%d of %d peeked messages will leave late: a longer expiration at position %d holds them back (head-of-line blocking)",
			blocked, len(marks), by)
	case never && minTTL >= 0:
		msg = "peeked messages mix ones that never expire with ones that do: a never-expiring one at the head holds back everything behind it"
	case minTTL >= 0 && minTTL != maxTTL:
		msg = fmt.Sprintf("peeked messages carry different expirations (%s to %s): a longer one at the head holds back shorter ones behind it",
			fndDuration(minTTL), fndDuration(maxTTL))
	default:
		return nil
	}
	return []Finding{{Code: CodeHoLRisk, Severity: SeverityWarning, Queue: queue, Message: msg}}
}

// HoLEvidence is what a wait queue relying on per-message expiration shows
// over a watched window, without a peek.
type HoLEvidence struct {
	// Window is how long the queue was seen letting nothing out: its depth
	// never fell and grew by what arrived (Arrived) less at most
	// HoLQuietSlack of estimate noise (Left).
	Window        time.Duration
	Left, Arrived float64
	Waiting       int64
	// HeadAge is how long ago the head message was published (its
	// timestamp); 0 when the broker does not say.
	HeadAge time.Duration
	// Stuck: the queue's messages never expire (a stuck finding: dead-
	// lettering stripped their expiration and it has no TTL). Nothing
	// leaves it either, but not because of a long head: no hol-blocked.
	Stuck bool
}

// HoLBlockedAfter is how long a wait queue must be seen taking messages in
// and letting none out before it counts as blocked.
const HoLBlockedAfter = 2 * time.Minute

// HoLBlockedWatch is the shorter watch that suffices when the head's own
// timestamp says it has waited HoLBlockedAfter already: a minute of
// arrivals and no outflow confirms the old head is what holds them.
const HoLBlockedWatch = time.Minute

// HoLQuietSlack is how many messages may seem to have left a queue over a
// window in which arrived came in (arrivals estimated from smoothed publish
// rates, depths and counters moving in steps of the stats interval) before
// the window counts as having outflow: two, a fifth of the arrivals and
// ten seconds' worth at the window's mean rate. A queue whose messages do
// leave loses nearly all of what arrives, far above it.
func HoLQuietSlack(arrived float64, window time.Duration) float64 {
	slack := 2 + arrived/5
	if s := window.Seconds(); s > 0 {
		slack += arrived / s * 10
	}
	return slack
}

// HoLBlockedFinding reports a wait queue (one relying on per-message
// expiration) that holds messages, keeps receiving them and let none leave
// for HoLBlockedAfter (HoLBlockedWatch when its head was published at least
// HoLBlockedAfter ago): its head is not due, and everything behind it waits
// for it.
func HoLBlockedFinding(queue string, ev HoLEvidence) (Finding, bool) {
	need := HoLBlockedAfter
	if ev.HeadAge >= HoLBlockedAfter {
		need = HoLBlockedWatch
	}
	if ev.Stuck || ev.Waiting <= 0 || ev.Window < need || ev.Arrived < 1 || ev.Left > HoLQuietSlack(ev.Arrived, ev.Window) {
		return Finding{}, false
	}
	msg := ""
	if ev.HeadAge > 0 {
		msg = "head published " + fndDuration(ev.HeadAge.Truncate(time.Second)) + " ago, "
	}
	msg += fmt.Sprintf("nothing left for %s, %s waiting: a long expiration at the head holds back the rest (ladder unblock, or u, frees them)",
		fndDuration(ev.Window.Truncate(time.Second)), fndCount(ev.Waiting))
	return Finding{Code: CodeHoLBlocked, Severity: SeverityError, Queue: queue, Message: msg}, true
}

// fndCount writes a count with thousands separators: 2,310.
func fndCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
