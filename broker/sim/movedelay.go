package sim

import (
	"fmt"
	"slices"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// planDelay routes h through a tier, the delayed exchange or a per-delay
// wait queue, as retry.PlanDelay says, checking that the way back reaches
// the same queues as the target would.
func (s *Sim) planDelay(h *hop, req broker.MoveRequest, l *retry.Ladder, targets []string) {
	if l == nil {
		l = s.ladderForTargets(targets)
	}
	if l != nil {
		a, err := retry.PlanDelay(l, req.Delay, h.headers)
		if err == nil && s.tryAction(h, a, l, targets) {
			return
		}
	}
	// A wait queue per delay and target: TTL = delay, dead-letter to the
	// target with its routing key, deleted a minute after it could last be
	// needed (redeclaring renews that).
	ms := req.Delay.Milliseconds()
	owner := h.key
	if h.exchange != "" {
		owner = h.exchange + "." + h.key
	}
	name := retry.DelayQueueName(owner, ms)
	h.declare = &declaration{name: name, args: map[string]any{
		"x-message-ttl":             ms,
		"x-dead-letter-exchange":    h.exchange,
		"x-dead-letter-routing-key": h.key,
		"x-expires":                 ms + 60_000,
	}}
	h.note = fmt.Sprintf("no tier waits exactly %s on the way to %s: per-delay wait queue %s (deleted a minute after its last message can leave)",
		retry.FormatDelay(req.Delay), describe(h.exchange, h.key), name)
	h.exchange, h.key, h.via = "", name, ViaDelayQueue
}

// tryAction applies a tier or delayed-exchange plan when it leads to the
// target's queues; a per-delay queue plan is left to planDelay, which names
// it after the target rather than the ladder's main queue.
func (s *Sim) tryAction(h *hop, a retry.Action, l *retry.Ladder, targets []string) bool {
	switch a.Kind {
	case retry.ActionTier:
		i := slices.IndexFunc(l.Tiers, func(t retry.Tier) bool { return t.Queue == a.Queue })
		if i < 0 {
			return false
		}
		t := l.Tiers[i]
		back := t.ReturnRoutingKey
		if t.KeepsRoutingKey {
			back = h.key
		}
		if !slices.Equal(s.route(t.ReturnExchange, back, a.Headers), targets) {
			return false
		}
		x, hd, ok := s.intoQueue(t.Queue, h.key, a.Headers)
		if !ok {
			return false
		}
		h.note = fmt.Sprintf("waits %s in tier %s, then %s", retry.FormatDelay(t.TTL), t.Queue, describe(t.ReturnExchange, back))
		h.exchange, h.headers, h.via = x, hd, ViaTier
		return true
	case retry.ActionDelayedExchange:
		if !slices.Equal(s.route(a.Exchange, h.key, a.Headers), targets) {
			return false
		}
		h.note = fmt.Sprintf("waits %s in delayed exchange %s", retry.FormatDelay(a.Delay), a.Exchange)
		h.exchange, h.headers, h.via = a.Exchange, a.Headers, ViaDelayedExchange
		return true
	}
	return false
}

// ladderForTargets is the ladder whose main queue the target reaches.
func (s *Sim) ladderForTargets(targets []string) *retry.Ladder {
	for _, q := range targets {
		if l := s.ladderOf(q); l != nil && l.Main == q {
			return l
		}
	}
	return nil
}
