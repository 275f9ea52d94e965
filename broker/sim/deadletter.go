package sim

import (
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// deadLetter does what rabbit_dead_letter does with a message leaving q for
// reason: without a dead-letter exchange it is discarded; otherwise x-death
// is updated, the expiration property is removed (kept in the x-death entry
// as original-expiration), and the message is routed through the
// dead-letter exchange with the dead-letter routing key, or its own key.
// Queues that would make an automatic cycle (see isCycle) are left out; a
// dead letter that reaches no queue is dropped silently.
func (s *Sim) deadLetter(q *queue, m *message, reason retry.Reason) {
	if reason == retry.ReasonExpired {
		s.stats.Expired++
	}
	set := &q.set
	if !set.HasDeadLetterExchange {
		s.stats.Discarded++
		return
	}
	h, deaths := addDeath(m, q.name, reason, s.now)
	key := m.routingKey
	if set.HasDeadLetterRoutingKey {
		key = set.DeadLetterRoutingKey
	}
	d := *m
	d.exchange, d.routingKey, d.headers = set.DeadLetterExchange, key, h
	d.props.Expiration, d.ttl, d.hasTTL = "", 0, false
	var targets []string
	for _, name := range s.route(set.DeadLetterExchange, key, h) {
		if reason == retry.ReasonRejected || !isCycle(name, deaths) {
			targets = append(targets, name)
		} else {
			s.stats.CycleDrops++
		}
	}
	if len(targets) == 0 {
		s.stats.DeadLetterDrops++
		return
	}
	s.stats.DeadLettered++
	s.deliverTo(targets, &d, false)
}

// addDeath returns a copy of m's headers with this death recorded: the
// {queue, reason} entry's count incremented and moved to the front, or a new
// entry in front; x-first-death-* set once, x-last-death-* every time
// (3.13+). deaths is the new x-death array.
func addDeath(m *message, queue string, reason retry.Reason, now time.Time) (retry.Headers, []any) {
	h := m.headers.Clone()
	old, _ := h["x-death"].([]any) // a malformed header is replaced
	deaths := make([]any, 1, len(old)+1)
	found := false
	for _, e := range old {
		t, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if !found && t["queue"] == queue && t["reason"] == string(reason) {
			// Only count changes: time, exchange and routing keys stay
			// those of the first death for this pair.
			u := cloneTable(t)
			u["count"] = countOf(t["count"]) + 1
			deaths[0] = u
			found = true
			continue
		}
		deaths = append(deaths, t)
	}
	if !found {
		e := map[string]any{
			"count":        int64(1),
			"reason":       string(reason),
			"queue":        queue,
			"time":         now.Truncate(time.Second), // AMQP timestamps are seconds
			"exchange":     m.exchange,
			"routing-keys": []any{m.routingKey},
		}
		if m.props.Expiration != "" {
			e["original-expiration"] = m.props.Expiration
		}
		deaths[0] = e
	}
	h["x-death"] = deaths
	if _, ok := h["x-first-death-reason"]; !ok {
		h["x-first-death-reason"] = string(reason)
		h["x-first-death-queue"] = queue
		h["x-first-death-exchange"] = m.exchange
	}
	h["x-last-death-reason"] = string(reason)
	h["x-last-death-queue"] = queue
	h["x-last-death-exchange"] = m.exchange
	return h, deaths
}

// isCycle is rabbit_dead_letter:is_cycle: a dead letter for target is
// dropped when target already appears in x-death and no death from there to
// now was a rejection, i.e. the message went round without any client
// deciding anything. deaths is x-death with the current death in front.
func isCycle(target string, deaths []any) bool {
	for _, e := range deaths {
		t, _ := e.(map[string]any)
		if t["reason"] == string(retry.ReasonRejected) {
			return false
		}
		if t["queue"] == target {
			return true
		}
	}
	return false
}

// countOf reads an x-death count of any integer type.
func countOf(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	case int16:
		return int64(n)
	case int8:
		return int64(n)
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}
