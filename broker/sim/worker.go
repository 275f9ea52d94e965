package sim

import (
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// producer publishes one message every period.
type producer struct {
	every time.Duration
	next  time.Time
	emit  func(s *Sim)
}

// outcome is how a worker settles a delivery.
type outcome int

const (
	ack    outcome = iota
	reject         // basic.nack requeue=false: dead-lettered with reason rejected
)

// worker is one consumer with a prefetch window: it takes ready messages
// from the head, holds each (unacked) for its service time, then settles it
// with handle, which may publish first (publish-then-ack).
type worker struct {
	queue    string
	prefetch int
	service  time.Duration
	inflight []inflight // in completion order: service time is constant
	handle   func(s *Sim, m *message) outcome
}

type inflight struct {
	m    *message
	done time.Time
}

func (w *worker) nextDone() (time.Time, bool) {
	if len(w.inflight) == 0 {
		return time.Time{}, false
	}
	return w.inflight[0].done, true
}

func (w *worker) canTake(s *Sim) bool {
	q := s.byName[w.queue]
	return q != nil && len(w.inflight) < w.prefetch && len(q.ready) > 0
}

// take fills the prefetch window. An expired head is dead-lettered instead
// of delivered, as the broker does.
func (w *worker) take(s *Sim) {
	for w.canTake(s) {
		q := s.byName[w.queue]
		if s.expireHead(q) {
			continue
		}
		m := q.pop()
		q.unacked++
		q.delivered++
		if m.redelivered {
			q.redelivered++
		}
		q.lastUsed = s.now
		w.inflight = append(w.inflight, inflight{m: m, done: s.now.Add(w.service)})
	}
}

// settleDue settles every delivery whose service time is over.
func (w *worker) settleDue(s *Sim) {
	for len(w.inflight) > 0 && !w.inflight[0].done.After(s.now) {
		d := w.inflight[0]
		w.inflight = w.inflight[1:]
		q := s.byName[w.queue]
		out := w.handle(s, d.m)
		if q == nil {
			continue
		}
		q.unacked--
		switch out {
		case ack:
			q.acked++
		case reject:
			s.deadLetter(q, d.m, retry.ReasonRejected)
		}
	}
}
