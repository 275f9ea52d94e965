package rabbit

import "time"

// Dead-lettered arrivals are not publishes: the management API's
// message_stats.publish and Prometheus' queue_exchange_metrics count only
// what a client published (seen on 3.10.8 and 4.3.6: a DLQ fed by expiry and
// rejection has no message_stats at all, nor any published counter). What
// arrived is then read from the depth: its change plus what consumers took
// for good (acked, or delivered or fetched without an ack). Depths and
// counters move in steps of the broker's statistics interval (5 s by
// default), so a 2 s refresh sees them move by a step or not at all; over
// inflowWindow or more the steps average out.

// inflowWindow is the span arrivals are derived over once the history is
// that long; before, over the whole history (from the second poll on).
const inflowWindow = 10 * time.Second

// pollCounters are one poll's counters by queue.
type pollCounters struct {
	at time.Time
	q  map[string]queueCounters
}

// remember makes next the previous poll's counters and keeps the polls
// arrivals are derived over: those within inflowWindow and the newest one
// older. m.mu is held.
func (m *Management) remember(next map[string]queueCounters, now time.Time) {
	m.prev, m.prevAt = next, now
	m.polls = append(m.polls, pollCounters{at: now, q: next})
	for len(m.polls) > 1 && now.Sub(m.polls[1].at) >= inflowWindow {
		m.polls[0] = pollCounters{}
		m.polls = m.polls[1:]
	}
}

// arrived is what came into queue per second up to now, cur being its
// counters now: from the newest poll at least inflowWindow old (else the
// oldest that saw the queue), the depth's change plus what was removed.
// Removals count only when both polls have them from the same source (the
// API's and Prometheus' counters differ); without them it is the depth's
// change alone, a lower bound still. ok is false without an earlier poll
// of the queue.
func arrived(polls []pollCounters, queue string, cur queueCounters, now time.Time) (float64, bool) {
	var base *pollCounters
	var bc queueCounters
	for i := len(polls) - 1; i >= 0; i-- {
		c, ok := polls[i].q[queue]
		if !ok {
			break // the queue is younger than this poll
		}
		base, bc = &polls[i], c
		if now.Sub(polls[i].at) >= inflowWindow {
			break
		}
	}
	if base == nil {
		return 0, false
	}
	secs := now.Sub(base.at).Seconds()
	if secs <= 0 {
		return 0, false
	}
	in := cur.messages - bc.messages
	if cur.removedKnown && bc.removedKnown && cur.fromProm == bc.fromProm && cur.removed >= bc.removed {
		in += cur.removed - bc.removed
	}
	return max(0, float64(in)/secs), true
}
