package sim

import (
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// deadLetter does what rabbit_dead_letter does with a message leaving q for
// reason: without a dead-letter exchange it is discarded; otherwise x-death
// is updated, the expiration property is removed (kept in the x-death entry
// as original-expiration), and the message is routed through the
// dead-letter exchange with the dead-letter routing key, or its own keys
// (CC included). Queues that would make an automatic cycle (see isCycle)
// are left out; a dead letter that reaches no queue is dropped silently —
// unless q is a quorum queue that dead-letters at least once: then it keeps
// the dead letter until a queue takes it (retryDeadLetters), as the
// broker's messages_dlx.
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
	keys := append([]string{m.routingKey}, m.cc...)
	d := *m
	if set.HasDeadLetterRoutingKey {
		keys = []string{set.DeadLetterRoutingKey}
		d.cc = nil
		if !topology.CarriesDeaths(s.opt.BrokerVersion) {
			// Before 4.0 the broker takes the CC header off a dead letter
			// given a routing key of its own (4.x keeps it; either way it
			// no longer routes by it).
			delete(h, topology.HeaderCC)
		}
	}
	d.exchange, d.routingKey, d.headers = set.DeadLetterExchange, keys[0], h
	d.props.Expiration, d.ttl, d.hasTTL = "", 0, false
	dl := deadLetter{msg: &d, keys: keys, rejected: reason == retry.ReasonRejected, deaths: deaths}
	if !s.deliverDeadLetter(q, dl) && q.atLeastOnce() {
		q.dlx = append(q.dlx, dl)
	}
}

// deadLetter is a message on its way out of a queue by dead-lettering.
type deadLetter struct {
	msg      *message
	keys     []string
	rejected bool
	deaths   []any
}

// deliverDeadLetter routes a dead letter of q and delivers it; it reports
// whether some queue took it.
func (s *Sim) deliverDeadLetter(q *queue, dl deadLetter) bool {
	var targets []string
	for _, name := range s.topology().router.RouteKeys(q.set.DeadLetterExchange, dl.keys, dl.msg.headers).Queues {
		if dl.rejected || !isCycle(name, dl.deaths) {
			targets = append(targets, name)
		} else {
			s.stats.CycleDrops++
		}
	}
	if len(targets) == 0 {
		if !q.atLeastOnce() {
			s.stats.DeadLetterDrops++
		}
		return false
	}
	took, _ := s.deliverTo(targets, dl.msg, false)
	if len(took) == 0 {
		return false
	}
	s.stats.DeadLettered++
	return true
}

// retryDeadLetters tries again to deliver the dead letters quorum queues
// keep (at-least-once), oldest first.
func (s *Sim) retryDeadLetters() {
	for _, q := range s.queues {
		kept := q.dlx[:0]
		for _, dl := range q.dlx {
			if !s.deliverDeadLetter(q, dl) {
				kept = append(kept, dl)
			}
		}
		clear(q.dlx[len(kept):])
		q.dlx = kept
	}
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
			"routing-keys": routingKeysOf(m),
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

// routingKeysOf is what x-death records of the keys a message had: its
// routing key and its CC keys.
func routingKeysOf(m *message) []any {
	out := make([]any, 0, 1+len(m.cc))
	out = append(out, m.routingKey)
	for _, k := range m.cc {
		out = append(out, k)
	}
	return out
}
