package sim

import (
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// runTo processes every event up to target in time order, then sets the
// clock to target. Events are head expiries, unused queues expiring, worker
// completions, producer ticks and the once-a-second rate samples. Callers
// hold mu.
func (s *Sim) runTo(target time.Time) {
	for {
		next, ok := s.nextEvent()
		if !ok || next.After(target) {
			break
		}
		if next.After(s.now) {
			s.now = next
		}
		s.step()
	}
	if target.After(s.now) {
		s.now = target
	}
}

// nextEvent is the earliest pending event time.
func (s *Sim) nextEvent() (time.Time, bool) {
	next := s.nextTick // rate samples always pend
	consider := func(t time.Time, ok bool) {
		if ok && t.Before(next) {
			next = t
		}
	}
	for _, q := range s.queues {
		consider(q.headDue())
		consider(q.expiresAt())
	}
	for _, w := range s.workers {
		consider(w.nextDone())
		if w.canTake(s) {
			consider(s.now, true)
		}
	}
	for _, p := range s.producers {
		consider(p.next, true)
	}
	return next, true
}

// step handles everything due at s.now. Expiry comes first: the broker drops
// an expired head before delivering it to a consumer.
func (s *Sim) step() {
	s.expireHeads()
	for _, w := range s.workers {
		w.settleDue(s)
	}
	for _, p := range s.producers {
		for !p.next.After(s.now) {
			p.emit(s)
			p.next = p.next.Add(p.every)
		}
	}
	s.expireHeads()
	for _, w := range s.workers {
		w.take(s)
	}
	s.retryDeadLetters()
	s.expireQueues()
	for !s.nextTick.After(s.now) {
		s.sample(s.nextTick)
		s.nextTick = s.nextTick.Add(time.Second)
	}
}

// expireHeads dead-letters expired messages at the head of every queue,
// until no head is due (a dead letter can land expired in another queue).
func (s *Sim) expireHeads() {
	for changed := true; changed; {
		changed = false
		for _, q := range s.queues {
			for s.expireHead(q) {
				changed = true
			}
		}
	}
}

// expireHead dead-letters q's head if it is due, and reports whether it did.
func (s *Sim) expireHead(q *queue) bool {
	due, ok := q.headDue()
	if !ok || due.After(s.now) {
		return false
	}
	s.deadLetter(q, q.pop(), retry.ReasonExpired)
	return true
}

// expireQueues deletes queues unused for their x-expires.
func (s *Sim) expireQueues() {
	for i := 0; i < len(s.queues); i++ {
		q := s.queues[i]
		if at, ok := q.expiresAt(); ok && !at.After(s.now) {
			s.deleteQueue(q)
			s.stats.QueuesExpired++
			i--
		}
	}
}
