package broker

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

// PeekOthers is what ladder saw of the queue's other readers around a
// peek: consumers beside it (another ladder, a worker) hold the messages
// delivered to them, which no peek can see, and take ready ones while it
// reads. JSON field names are a contract (`ladder peek -o json`).
type PeekOthers struct {
	// Consumers is the most consumers other than ladder's the queue had
	// when ladder asked (just before its read and just after).
	Consumers int `json:"consumers"`
	// Unacked is what the queue's consumers held unacknowledged when the
	// peek began, as the management API last said (its counters lag by
	// seconds; 0 may be stale): messages ahead of those ladder could see,
	// or among them.
	Unacked int64 `json:"unacked"`
	// Left counts the ready messages that left the queue while ladder
	// read it and that ladder did not see expire: taken by another
	// consumer (held or acknowledged), or expired.
	Left int64 `json:"left"`
}

// OthersSeen is what a client learnt of a queue's other readers around
// its peek: consumers (not its own) just before and just after the read,
// and the unacknowledged count the management API gave.
type OthersSeen struct {
	ConsumersBefore, ConsumersAfter int
	Unacked                         int64
}

// any says whether another reader was seen.
func (o OthersSeen) any() bool {
	return o.ConsumersBefore > 0 || o.ConsumersAfter > 0
}

// NoteLeft accounts for gone ready messages that left q while a peek read
// it (its ready count before, less the count after, ladder's own returned).
// Only the head of a queue expires, so messages whose TTL ran out behind a
// longer-lived one wait until a reader uncovers them, and then leave at
// once: released, dead-lettered or dropped. But a consumer beside ladder
// takes messages too, and holds them unseen: "released" and "dropped" are
// said only where nobody else was reading and the queue's messages can
// expire (a queue TTL, or a message read carrying an expiration); else
// the count is what left, "taken by another consumer or expired", and
// Others names the readers. The live client and the simulation both call
// it, so both say the same.
func NoteLeft(res *PeekResult, q topology.Queue, others OthersSeen, gone int64, at time.Time) {
	// Signs of another reader besides its consumers counted: messages
	// returned while ladder read (they came after fresh ones), or a read
	// that found nothing more ready before it had what was ready when it
	// began, those messages back by the end.
	seen := others.any() || res.reordered || (gone <= 0 && res.caughtUpEarly())
	if seen || gone > 0 && !canExpire(res, q) {
		res.Others = &PeekOthers{Consumers: max(others.ConsumersBefore, others.ConsumersAfter), Unacked: max(others.Unacked, 0)}
	}
	if gone <= 0 {
		return
	}
	if res.Others == nil {
		res.Released, res.ReleasedTo, res.ReleasedAt = res.Released+gone, ReleaseRoute(q), &at
		res.SideEffects = append(res.SideEffects, ReleasedEffect(gone, at, res.ReleasedTo))
		return
	}
	res.Others.Left += gone
	res.SideEffects = append(res.SideEffects, fmt.Sprintf(
		"%s the queue during the peek, by %s: taken by another consumer or expired (%s); ladder saw none of them expire",
		topology.Plural(int(gone), "message left", "messages left"), at.Format("15:04:05"), othersText(res.Others)))
}

// ReleasedEffect says that gone overdue messages left a queue, to to,
// by at, because a read uncovered them: a peek's side effect, and a dry
// run's note.
func ReleasedEffect(gone int64, at time.Time, to string) string {
	return fmt.Sprintf(
		"%s the queue during the peek, by %s, to %s: messages whose TTL ran out behind a longer-lived one leave as soon as a reader uncovers them",
		topology.Plural(int(gone), "message left", "messages left"), at.Format("15:04:05"), to)
}

// caughtUpEarly: a browse found the queue had nothing more ready for it
// before it had read what it was to read, and did not stop for another
// reason.
func (r *PeekResult) caughtUpEarly() bool {
	return r.browsed && r.Incomplete == "" && r.read < r.wanted
}

// canExpire says whether q's messages can expire at all, as far as the
// peek knows: a queue TTL, or a message read carrying its own expiration.
func canExpire(res *PeekResult, q topology.Queue) bool {
	if topology.EffectiveSettings(&q).HasMessageTTL {
		return true
	}
	for i := range res.Messages {
		if res.Messages[i].Properties.Expiration != "" {
			return true
		}
	}
	if s, ok := res.seen[res.Queue]; ok && s.Look != nil && s.Look.Expiring > 0 {
		return true
	}
	return false
}

// othersText names the other readers seen ("1 other consumer, 1,000
// unacknowledged").
func othersText(o *PeekOthers) string {
	var s string
	switch {
	case o.Consumers > 0:
		s = topology.Plural(o.Consumers, "other consumer", "other consumers") + " reading"
	default:
		s = "another reader"
	}
	if o.Unacked > 0 {
		s += ", " + strconv.FormatInt(o.Unacked, 10) + " unacknowledged when it began"
	}
	return s
}

// partialStopped opens the Partial reason of a read that stopped early
// (its Incomplete, which the faces show on a line of its own).
const partialStopped = "stopped early: "

// PartialBesidesStop are the reasons the view is partial other than a
// read that stopped early (which the faces show on a line of their own).
func (r *PeekResult) PartialBesidesStop() []string {
	var why []string
	for _, p := range r.Partial {
		if !strings.HasPrefix(p, partialStopped) {
			why = append(why, p)
		}
	}
	return why
}

// NotePartial says, once the read is over, why the messages a peek shows
// are not the whole queue from its head (res.Partial; nil when they are):
// another reader held or took some (the positions then count among what
// was ready to ladder, not from the queue's head), the read's limit
// stopped it, or it stopped early (res.Incomplete: its deadline, a stall).
func NotePartial(res *PeekResult) {
	res.Partial = nil
	if o := res.Others; o != nil {
		why := othersText(o)
		if o.Left > 0 {
			why += fmt.Sprintf("; %d left the queue while ladder read it", o.Left)
		}
		res.Partial = append(res.Partial, "held by another reader ("+why+"): positions count among the messages ready to ladder, not from the queue's head")
	}
	switch {
	case res.Incomplete != "":
		res.Partial = append(res.Partial, partialStopped+res.Incomplete)
	case int64(res.Read()) < res.Ready && res.Type != topology.QueueStream && !res.caughtUpEarly():
		res.Partial = append(res.Partial, fmt.Sprintf("the first %d of %d ready: the peek's limit", res.Read(), res.Ready))
	}
}

// NoteLook keeps what the peek saw of its queue's expirations with the
// evidence it gathered (topology.Seen.Look): what the analysis weighs for
// head-of-line blocking and messages that never expire.
func (r *PeekResult) NoteLook(l *topology.Look) {
	if l == nil {
		return
	}
	if r.seen == nil {
		r.seen = topology.Evidence{}
	}
	s := r.seen[r.Queue]
	s.Look = l
	r.seen[r.Queue] = s
}
