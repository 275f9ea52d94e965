package moveplan

import (
	"fmt"
	"github.com/ladder-tui/ladder/retry/topology"
	"slices"
	"strconv"
	"strings"
)

// room is a length-limited queue a move reaches: its limits
// (x-max-length, x-max-length-bytes and x-overflow, argument or policy),
// its ready messages when last read (limits count ready messages only),
// and what the plan put there since.
type room struct {
	name          string
	set           topology.QueueSettings
	ready, bytes  int64 // when last read
	planned       int64 // booked since the last read
	plannedBytes  int64
	fit, over     int // messages booked within the limit / found over it
	forced, found bool
}

// mode is the queue's overflow behaviour (drop-head by default).
func (rm *room) mode() string {
	if rm.set.Overflow == "" {
		return topology.OverflowDropHead
	}
	return rm.set.Overflow
}

// full says whether one more message of size bytes exceeds a limit.
func (rm *room) full(size int64) bool {
	return (rm.set.HasMaxLength && rm.ready+rm.planned+1 > rm.set.MaxLength) ||
		(rm.set.HasMaxLengthBytes && rm.bytes+rm.plannedBytes+size > rm.set.MaxLengthBytes)
}

// limit is "100 messages", "1048576 bytes" or both.
func (rm *room) limit() string {
	var s string
	if rm.set.HasMaxLength {
		s = topology.Plural(int(rm.set.MaxLength), "message", "messages")
	}
	if rm.set.HasMaxLengthBytes {
		if s != "" {
			s += " or "
		}
		s += strconv.FormatInt(rm.set.MaxLengthBytes, 10) + " bytes"
	}
	return s
}

// roomOf is queue's room, read the first time a move reaches it; nil when
// it has no length limit (or is a stream, whose limits are retention).
func (p *Planner) roomOf(queue string) *room {
	if rm, ok := p.rooms[queue]; ok {
		return rm
	}
	qi := p.router.QueueIndex(queue)
	if qi < 0 {
		p.rooms[queue] = nil
		return nil
	}
	q := p.router.Vhost().Queues[qi]
	if p.spec.Policy != nil {
		if def, ok := p.spec.Policy(queue, q.Type); ok {
			q.Policy = def
		}
	}
	rm := newRoom(&q)
	if rm != nil && p.spec.Ready != nil {
		if n, ok := p.spec.Ready(queue); ok {
			rm.ready = n
		}
	}
	p.rooms[queue] = rm
	return rm
}

func newRoom(q *topology.Queue) *room {
	set := topology.EffectiveSettings(q)
	if q.Type == topology.QueueStream || (!set.HasMaxLength && !set.HasMaxLengthBytes) {
		return nil
	}
	return &room{name: q.Name, set: set, ready: q.Ready, bytes: q.ReadyBytes}
}

// checked are the queues a route puts the message in: those it reaches,
// and the tier it waits in.
func checked(r *Route) []string {
	if r.Via == topology.ViaTier && r.Queue != "" && !slices.Contains(r.Reaches, r.Queue) {
		return append(slices.Clone(r.Reaches), r.Queue)
	}
	return r.Reaches
}

// overflow checks r against the length limits of the queues it reaches.
// A message a drop-head queue has no room for would push its oldest out
// (dead-lettered or dropped), and one a reject-publish-dlx queue has no room
// for is refused with a copy dead-lettered: either stays, and a move stops
// there (stop), unless --force. A reject-publish queue refuses it
// (basic.nack): it stays in the source whatever ladder does, and the route
// gets a note — unless the route reaches other queues too, which would
// keep their copy: then it stays as well.
func (p *Planner) overflow(r *Route, size int64) (why string, stop bool) {
	qs := checked(r)
	for _, q := range qs {
		p.reach(q)
		rm := p.roomOf(q)
		if rm == nil || !rm.full(size) {
			continue
		}
		rm.found = true
		switch mode := rm.mode(); {
		case p.spec.Force:
			rm.forced = true
			r.Note = joinNotes(r.Note, fmt.Sprintf("%s holds at most %s: --force moves it anyway (%s)", q, rm.limit(), overflowEffect(mode, rm.set)))
		case mode == topology.OverflowRejectPublish && len(qs) == 1:
			r.Note = joinNotes(r.Note, fmt.Sprintf("%s holds at most %s and refuses more (x-overflow reject-publish): what it refuses stays in %s", q, rm.limit(), p.left()))
		case mode == topology.OverflowRejectPublish:
			rm.over++
			return fmt.Sprintf("%s is full (at most %s) and would refuse it while %s took it: it would be there and still in %s; left in %s (--force moves it anyway)",
				q, rm.limit(), otherQueues(qs, q), p.left(), p.left()), true
		default:
			rm.over++
			return fmt.Sprintf("%s is full (at most %s): moving it would %s; left in %s (--force moves it anyway)", q, rm.limit(), overflowEffect(mode, rm.set), p.left()), true
		}
	}
	return "", false
}

// overflowEffect is what a full queue does with one more message.
func overflowEffect(mode string, set topology.QueueSettings) string {
	switch mode {
	case topology.OverflowRejectPublish:
		return "the broker refuses it, and it stays in the source"
	case topology.OverflowRejectPublishDLX:
		return "the broker refuses it and dead-letters a copy"
	}
	if set.HasDeadLetterExchange {
		return "push the oldest message out of its head (dead-lettered)"
	}
	return "drop the oldest message from its head (it has no dead-letter exchange: gone)"
}

func otherQueues(qs []string, not string) string {
	out := ""
	for _, q := range qs {
		if q != not {
			if out != "" {
				out += ", "
			}
			out += q
		}
	}
	return out
}

// book counts a moving route's message in the queues it reaches.
func (p *Planner) book(r *Route, size int64) {
	for _, q := range checked(r) {
		p.sentBytes[q] += size
		rm := p.roomOf(q)
		if rm == nil {
			continue
		}
		if rm.full(size) {
			rm.over++
			if rm.mode() == topology.OverflowRejectPublish {
				continue // refused: it never gets there
			}
		} else {
			rm.fit++
		}
		rm.planned++
		rm.plannedBytes += size
	}
}

// reach records that a route reaches queue.
func (p *Planner) reach(queue string) {
	if !p.reachedSet[queue] {
		p.reachedSet[queue] = true
		p.reached = append(p.reached, queue)
	}
}

// ReachedQueues are the queues planned routes reached so far, in order of
// first use: a long move reads their limits and depths again (Reread).
func (p *Planner) ReachedQueues() []string { return p.reached }

// Reread reads queue's length limits again (its policy through
// Spec.Policy: a policy may have set one since) with its exact ready
// count as read now, and pending messages published to it and not yet
// confirmed, which that count may not hold yet. Bytes are not counted
// again (the broker's figure lags): what the plan put there is added to
// what was there at the start. A limit that appeared, or a queue that
// filled from elsewhere, is then seen before the next message goes.
func (p *Planner) Reread(queue string, ready, pending int64) {
	qi := p.router.QueueIndex(queue)
	if qi < 0 {
		return
	}
	q := p.router.Vhost().Queues[qi]
	if p.spec.Policy != nil {
		if def, ok := p.spec.Policy(queue, q.Type); ok {
			q.Policy = def
		}
	}
	old := p.rooms[queue]
	startBytes := q.ReadyBytes
	if old != nil {
		startBytes = old.bytes
	}
	q.Ready = ready
	rm := newRoom(&q)
	if rm != nil {
		rm.planned = pending
		rm.bytes, rm.plannedBytes = startBytes, p.sentBytes[queue]
		if old != nil {
			rm.fit, rm.over, rm.forced, rm.found = old.fit, old.over, old.forced, old.found
		}
	}
	p.rooms[queue] = rm
}

// RoomNotes say, per length-limited queue the plan found full, what the
// limit did to the plan: in a dry run, how many would overflow and stay.
func (p *Planner) RoomNotes() []string {
	var out []string
	for _, q := range p.reached {
		rm := p.rooms[q]
		if rm == nil || !rm.found {
			continue
		}
		n := rm.fit + rm.over
		switch mode := rm.mode(); {
		case rm.forced && mode != topology.OverflowRejectPublish:
			out = append(out, fmt.Sprintf("%s holds at most %s (%d ready): with --force %d of %d go in past it (%s)", q, rm.limit(), rm.ready, rm.over, n, overflowEffect(mode, rm.set)))
		case mode == topology.OverflowRejectPublish && rm.over > 0:
			out = append(out, fmt.Sprintf("%s holds at most %s (%d ready) and refuses more (x-overflow reject-publish): about %d of %d will be refused and stay in %s", q, rm.limit(), rm.ready, rm.over, n, p.left()))
		case rm.over > 0:
			verb := "drop " + strconv.Itoa(rm.over) + " from its head"
			if mode == topology.OverflowRejectPublishDLX {
				verb = "have " + strconv.Itoa(rm.over) + " refused, a copy of each dead-lettered"
			}
			out = append(out, fmt.Sprintf("%s holds at most %s (%d ready): %d would %s, so the move stops after %d and %d stay in %s (--force moves them anyway)",
				q, rm.limit(), rm.ready, n, verb, rm.fit, rm.over, p.left()))
		}
	}
	return out
}

// firstClause is a reason up to its first colon ("orders is full (at most
// 100 messages)").
func firstClause(why string) string {
	if i := strings.Index(why, ": "); i >= 0 {
		return why[:i]
	}
	return why
}
