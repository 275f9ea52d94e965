package rabbit

import "time"

// Dead-lettered arrivals are not publishes: the management API's
// message_stats.publish and Prometheus' queue_exchange_metrics count only
// what a client published (seen on 3.10.8 and 4.3.6: a DLQ fed by expiry and
// rejection has no message_stats at all, nor any published counter). What
// arrived is then read from the depth: its change plus what consumers took
// for good (acked, or delivered or fetched without an ack).
//
// Depths and counters move in steps of the broker's statistics interval
// (5 s by default), whatever the refresh: a poll sees the value of the
// last step, taken up to a poll earlier. Dividing the change between two
// polls by the time between the polls is then off by up to a step: a DLQ
// fed at 19.5/s read 15.5/s over 10 s. So each end of the span is the
// moment its value was first seen (halfway from the poll before, which
// had the older value), and the span is as long as the polls kept allow
// (inflowWindow): the error is at most one poll interval over the span,
// under 4 % over a minute of 2 s polls.

// inflowWindow is the longest span arrivals are derived over; until the
// history is that long, over the whole history (from the second poll on).
const inflowWindow = 60 * time.Second

// inflowStale: a value unchanged for longer than this (two statistics
// intervals) means arrivals slowed or stopped since its step: the span
// then runs to now, not to when it was first seen.
const inflowStale = 10 * time.Second

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
// counters now: over the polls kept that saw the queue (see inflowWindow),
// the change of its depth plus what was removed, from the first step of
// the statistics seen to the last (to now when the last is older than
// inflowStale; poll to poll with fewer than two steps). Removals count only when the oldest poll
// and now have them from the same source (the API's and Prometheus'
// counters differ) and they did not go back (a restarted node); without
// them it is the depth's change alone, a lower bound still. ok is false
// without an earlier poll of the queue.
func arrived(polls []pollCounters, queue string, cur queueCounters, now time.Time) (float64, bool) {
	type point struct {
		at time.Time
		c  queueCounters
	}
	var pts []point
	for i := len(polls) - 1; i >= 0; i-- {
		c, ok := polls[i].q[queue]
		if !ok {
			break // the queue is younger than this poll
		}
		pts = append(pts, point{polls[i].at, c})
	}
	if len(pts) == 0 {
		return 0, false
	}
	for i, j := 0, len(pts)-1; i < j; i, j = i+1, j-1 {
		pts[i], pts[j] = pts[j], pts[i]
	}
	pts = append(pts, point{now, cur})
	base := pts[0].c
	removals := cur.removedKnown && base.removedKnown && cur.fromProm == base.fromProm && cur.removed >= base.removed
	total := func(c queueCounters) int64 {
		if removals {
			return c.messages + c.removed
		}
		return c.messages
	}
	// steps are the indexes whose value differs from the point before:
	// the broker's statistics moved between the two polls.
	var steps []int
	for i := 1; i < len(pts); i++ {
		if total(pts[i].c) != total(pts[i-1].c) {
			steps = append(steps, i)
		}
	}
	// stepAt is when step i came: halfway between the polls around it.
	stepAt := func(i int) time.Time { return pts[i-1].at.Add(pts[i].at.Sub(pts[i-1].at) / 2) }
	from, to := pts[0].at, now
	fromTotal := total(base)
	if len(steps) >= 2 {
		// From the first step seen to the last: whole steps, each end
		// off by at most half a poll.
		first, last := steps[0], steps[len(steps)-1]
		from, fromTotal = stepAt(first), total(pts[first].c)
		if now.Sub(pts[last].at) <= inflowStale {
			to = stepAt(last)
		}
	}
	secs := to.Sub(from).Seconds()
	if secs <= 0 {
		return 0, false
	}
	return max(0, float64(total(cur)-fromTotal)/secs), true
}
