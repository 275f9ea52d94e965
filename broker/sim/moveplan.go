package sim

import (
	"fmt"
	"slices"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// planMove validates req and decides every selected message's way. With
// DryRun it fills Planned for all of them. Callers hold mu.
func (s *Sim) planMove(req broker.MoveRequest) (*broker.MoveReport, []hop, error) {
	src := s.byName[req.From]
	if src == nil {
		return nil, nil, s.errorf("move: NOT_FOUND - no queue %q in vhost %q", req.From, VhostName)
	}
	if req.Delay < 0 {
		return nil, nil, s.errorf("move from %s: delay %v is negative", req.From, req.Delay)
	}
	target, err := s.checkTarget(req.To)
	if err != nil {
		return nil, nil, fmt.Errorf("sim: move from %s: %w", req.From, err)
	}
	rep := &broker.MoveReport{Target: target, Via: ViaDirect, DelayMS: req.Delay.Milliseconds(), DryRun: req.DryRun}
	srcLadder := s.ladderOf(req.From)
	notes := map[string]bool{}
	var hops []hop
	skipped, returned := 0, 0
	for _, pos := range s.selectMessages(src, req) {
		m := src.ready[pos]
		h := s.planOne(req, srcLadder, m, pos)
		switch {
		case h.skip:
			skipped++
		case h.returned:
			returned++
		case h.note != "" && !notes[h.note]:
			notes[h.note] = true
			rep.Notes = append(rep.Notes, h.note)
		}
		if req.DryRun || h.skip || h.returned {
			rep.Planned = append(rep.Planned, broker.PlannedMove{Position: h.pos, MessageID: m.props.MessageID, Exchange: h.exchange, RoutingKey: h.key, Note: h.note})
		}
		hops = append(hops, h)
	}
	if skipped > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d %s without an origin stay in %s", skipped, plural(skipped, "message", "messages"), req.From))
	}
	if returned > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d %s would reach no queue and stay in %s", returned, plural(returned, "message", "messages"), req.From))
	}
	rep.Requested = len(hops)
	for _, h := range hops {
		if !h.skip && !h.returned {
			rep.Via = h.via
			break
		}
	}
	return rep, hops, nil
}

// checkTarget validates the target and names it for the report.
func (s *Sim) checkTarget(t broker.Target) (string, error) {
	switch t.Kind {
	case broker.TargetQueue:
		if s.byName[t.Name] == nil {
			return "", fmt.Errorf("target queue %q does not exist", t.Name)
		}
		return "queue:" + t.Name, nil
	case broker.TargetExchange:
		if !s.exchangeExists(t.Name) {
			return "", fmt.Errorf("target exchange %q does not exist", t.Name)
		}
		return "exchange:" + t.Name + ":" + t.RoutingKey, nil
	case broker.TargetOrigin:
		return "origin", nil
	}
	return "", fmt.Errorf("unknown target kind %q (want queue, exchange or origin)", t.Kind)
}

// selectMessages picks the ready messages by position (as a peek numbered
// them), in queue order, then applies Limit.
func (s *Sim) selectMessages(src *queue, req broker.MoveRequest) []int {
	var out []int
	if len(req.Positions) > 0 {
		for _, p := range req.Positions {
			if p >= 0 && p < len(src.ready) {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		out = slices.Compact(out)
	} else {
		for p := range src.ready {
			out = append(out, p)
		}
	}
	if req.Limit > 0 && len(out) > req.Limit {
		out = out[:req.Limit]
	}
	return out
}

// planOne decides one message's way to the target.
func (s *Sim) planOne(req broker.MoveRequest, srcLadder *retry.Ladder, m *message, pos int) hop {
	h := hop{m: m, pos: pos, via: ViaDirect}
	x, key := req.To.Name, req.To.RoutingKey
	switch req.To.Kind {
	case broker.TargetQueue:
		x, key = "", req.To.Name
	case broker.TargetOrigin:
		o, ok := retry.OriginIn(retry.DecodeXDeath(m.headers), retry.MainQueues(s.topology().ladders))
		if !ok {
			h.skip, h.note = true, "no origin: the message was never dead-lettered (or its x-death does not say where it came from); left in "+req.From
			return h
		}
		x, key = o.Exchange, o.RoutingKey
	}
	hd := m.headers.Clone()
	if req.ResetRetries {
		hd = retry.ResetCount(hd, retry.ReadState(hd, retry.DeathQueues(srcLadder)))
	}
	hd[MovedFromHeader] = req.From
	h.exchange, h.key, h.headers = x, key, hd
	targets := s.route(x, key, hd)
	if len(targets) == 0 {
		h.returned, h.note = true, fmt.Sprintf("exchange %q routes key %q to no queue: left in %s", x, key, req.From)
		return h
	}
	if req.Delay > 0 {
		s.planDelay(&h, req, srcLadder, targets)
		return h
	}
	// A worker that republishes retries makes its retry exchange the
	// origin x-death records, and a message moved there lands in a tier
	// again (by its routing header): say so rather than let it look
	// instant.
	for _, q := range targets {
		if l, t, ok := s.tierOf(q); ok {
			h.note = fmt.Sprintf("%s routes it into wait tier %s: it reaches %s only after %s",
				describe(x, key), t.Queue, l.Main, retry.FormatDelay(t.TTL))
			break
		}
	}
	return h
}

// tierOf finds the ladder in which queue is a tier.
func (s *Sim) tierOf(queue string) (*retry.Ladder, retry.Tier, bool) {
	ls := s.topology().ladders
	for i := range ls {
		for _, t := range ls[i].Tiers {
			if t.Queue == queue {
				return &ls[i], t, true
			}
		}
	}
	return nil, retry.Tier{}, false
}
