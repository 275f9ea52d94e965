package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/pace"
	"github.com/ladder-tui/ladder/broker/preview"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// moveBatch is how many messages move per lock hold; progress is reported
// after each batch, with the lock released so the UI can keep polling.
const moveBatch = 100

// MovedFromHeader records where a moved message came from.
const MovedFromHeader = moveplan.HeaderMovedFrom

// hop is one selected message and its plan.
type hop struct {
	m     *message
	route moveplan.Route
}

// Move moves ready messages of req.From loss-free: a message leaves the
// source only once its publish reached a queue. Every message is routed by
// moveplan.Planner, the planner the live broker's move and every dry run
// use, from the same inputs (its exchange, routing key, headers,
// expiration and id).
func (s *Sim) Move(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	// A dry run changes nothing, so read-only mode allows it.
	if s.opt.ReadOnly && !req.DryRun {
		// The live client's refusal: its error, and the request's report.
		return broker.NewMoveReport(req), s.errorf("move from %s: %w", req.From, broker.ErrReadOnly)
	}
	start := time.Now()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	s.catchUp()
	preview := 0
	if req.DryRun {
		var err error
		if preview, err = s.previewRefusal(req); err != nil {
			s.mu.Unlock()
			return broker.NewMoveReport(req), err
		}
	}
	released := ""
	if src := s.byName[req.From]; preview > 0 && src != nil {
		// The live dry run's read releases the overdue messages it
		// uncovers before it plans what it read.
		if n := s.releaseOnRead(src, preview); n > 0 {
			released = "dry run: " + broker.ReleasedEffect(int64(n), s.now, broker.ReleaseRoute(src.info()))
		}
	}
	rep, hops, roomNotes, err := s.planMove(req)
	if rep != nil {
		rep.Note(released)
	}
	s.mu.Unlock()
	if err == nil && preview > 0 {
		err = s.previewCost(ctx, req, preview, rep)
	}
	if err != nil || req.DryRun {
		return rep, err
	}
	report := func() {
		if progress != nil {
			progress(broker.MoveProgress{
				Total: rep.Requested, Done: rep.Moved + rep.Failed + rep.Returned + rep.Skipped,
				Moved: rep.Moved, Failed: rep.Failed, Elapsed: time.Since(start),
			})
		}
	}
	gone := 0
	// Each move publishes with x-ladder-move-id "<run>/<position>", as the
	// live broker's move does.
	s.mu.Lock()
	s.moves++
	run := "sim" + strconv.FormatUint(s.moves, 10)
	s.mu.Unlock()
	pacer := pace.New(req.Rate)
	for len(hops) > 0 {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("sim: move from %s: %w", req.From, err)
		}
		if !req.Hold.Wait(ctx.Done()) {
			return rep, fmt.Errorf("sim: move from %s: %w", req.From, ctx.Err())
		}
		n := min(moveBatch, len(hops))
		if req.Rate > 0 {
			// --rate: one message at a time, on the wall clock.
			n = 1
			if !pacer.Sleep(ctx.Done()) {
				return rep, fmt.Errorf("sim: move from %s: %w", req.From, ctx.Err())
			}
			pacer.Took(time.Now())
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return rep, ErrClosed
		}
		g, stopped := s.moveBatch(req.From, run, hops[:n], rep, req.Force)
		gone += g
		s.mu.Unlock()
		hops = hops[n:]
		report()
		if stopped {
			break
		}
	}
	if gone > 0 {
		rep.Note(fmt.Sprintf("%d %s left %s before %s could be moved (consumed or expired); counted as failed",
			gone, plural(gone, "message", "messages"), req.From, plural(gone, "it", "they")))
	}
	for _, n := range roomNotes {
		rep.Note(n)
	}
	if rep.Moved < rep.Requested {
		// As the live broker says it: some messages stayed (exit 3).
		return rep, fmt.Errorf("sim: move from %s: moved %d of %d (%d returned, %d failed, %d skipped): %w",
			req.From, rep.Moved, rep.Requested, rep.Returned, rep.Failed, rep.Skipped, broker.ErrPartial)
	}
	return rep, nil
}

// previewRefusal is the live dry run's rule: its read of the source is a
// peek of the first preview.Reads messages (returned: 0 when it reads
// none), refused before it touches the queue where it counts a delivery,
// under read-only mode, or toward a delivery limit without ForcePeek.
// Callers hold mu.
func (s *Sim) previewRefusal(req broker.MoveRequest) (int, error) {
	src := s.byName[req.From]
	if src == nil {
		return 0, nil // the planner says what is wrong
	}
	n := preview.Reads(req, len(src.ready))
	if n == 0 {
		return 0, nil
	}
	if r := broker.PeekRefusal(src.info(), s.opt.BrokerVersion, s.readCost(src), s.opt.ReadOnly, req.ForcePeek, ""); r != nil {
		r.Limit = n
		return 0, fmt.Errorf("dry run: %w", r)
	}
	return n, nil
}

// previewCost is what the live dry run's read of the source costs where it
// counts a delivery (a quorum queue with no costless browse, the user having
// said yes): the peek's own effects on the first n messages, after the plan
// (the live broker plans the messages its read returned), and its notes.
func (s *Sim) previewCost(ctx context.Context, req broker.MoveRequest, n int, rep *broker.MoveReport) error {
	s.mu.Lock()
	src := s.byName[req.From]
	counts := src != nil && broker.PeekCostOf(src.info(), s.opt.BrokerVersion).CountsDelivery()
	s.mu.Unlock()
	if !counts {
		return nil
	}
	res, err := s.Peek(ctx, req.From, broker.PeekOptions{Limit: n, BodyPreview: 1, Force: true})
	if err != nil {
		return fmt.Errorf("dry run: %w", err)
	}
	for _, note := range preview.CostNotes(res) {
		rep.Note(note)
	}
	return nil
}

// planMove plans every selected message. With DryRun the report holds
// every plan; otherwise only the skipped ones, and planning ends at a
// message a full queue stops (the move stops there: what follows stays
// unplanned, as on the live broker). roomNotes are the planner's notes on
// length limits, for the end of a move. Callers hold mu.
func (s *Sim) planMove(req broker.MoveRequest) (rep *broker.MoveReport, hops []hop, roomNotes []string, err error) {
	rep = broker.NewMoveReport(req)
	topo := s.topology()
	spec := req.Spec(s.now)
	spec.ForBroker(s.opt.BrokerVersion)
	// Depths move without the topology changing: the planner reads the
	// length-limited queues' as they are now.
	v := topo.vhost
	v.Queues = slices.Clone(v.Queues)
	for i := range v.Queues {
		if q := s.byName[v.Queues[i].Name]; q != nil {
			v.Queues[i].Ready, v.Queues[i].ReadyBytes = int64(len(q.ready)), q.readyBytes()
		}
	}
	planner, err := moveplan.NewPlanner(&v, topo.ladders, spec)
	if err != nil {
		return rep, nil, nil, fmt.Errorf("sim: %w", err)
	}
	src := s.byName[req.From]
	look := req
	if !req.Where.Empty() || req.Pick != nil {
		look.Limit = 0 // every message is looked at; Limit counts chosen ones
	}
	selected, stopped := 0, false
	for _, pos := range selectMessages(src, look) {
		if req.Limit > 0 && selected >= req.Limit {
			break
		}
		m := src.ready[pos]
		if stopped {
			// The move stops before this one: it counts as requested
			// (the live broker counted it among the ready), unplanned.
			if req.Where.Empty() && req.Pick == nil {
				selected++
			}
			continue
		}
		// Every digest now: a message may yet stay after its plan (moveBatch).
		mm := broker.MoveInput{Position: pos, MessageID: m.props.MessageID, Exchange: m.exchange, RoutingKey: m.routingKey,
			Headers: m.headers, Expiration: m.props.Expiration, Timestamp: m.props.Timestamp, Body: m.body}.Message(true)
		r := rep.Book(mm, planner.Plan(mm))
		if r.Unmatched {
			continue
		}
		hops = append(hops, hop{m: m, route: r})
		selected++
		stopped = r.Stop && !req.DryRun
	}
	rep.Requested = selected
	if req.DryRun {
		for _, n := range planner.RoomNotes() {
			rep.Note(n)
		}
	} else {
		roomNotes = planner.RoomNotes()
	}
	if req.Pick != nil {
		// Every planned message counts, found or not (see moveplan.Pick).
		rep.Requested = len(req.Pick)
		if n := planner.PicksMissed(); n > 0 {
			rep.Note(moveplan.PicksGoneNote(n))
		}
	}
	return rep, hops, roomNotes, nil
}

// selectMessages picks the ready messages by position (as a peek numbered
// them), in queue order, then applies Limit.
func selectMessages(src *queue, req broker.MoveRequest) []int {
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

// moveBatch publishes the batch's messages still in the source as planned
// and removes them; it returns how many had already left, and whether the
// move stops: a planned stop (a full queue), or a queue that filled since
// the plan (a policy added, other publishers) and would drop or refuse the
// next one — what the live broker's move sees when it reads its targets
// again. Callers hold mu.
func (s *Sim) moveBatch(from, run string, batch []hop, rep *broker.MoveReport, force bool) (gone int, stop bool) {
	src := s.byName[from]
	want := map[*message]bool{}
	for _, h := range batch {
		if h.route.Moves() {
			want[h.m] = true
		}
	}
	present := map[*message]bool{}
	if src != nil {
		for _, m := range src.remove(want) {
			present[m] = true
		}
	}
	for _, h := range batch {
		r := h.route
		if stop {
			if present[h.m] && r.Moves() {
				s.putBackInOrder(src, h.m)
			}
			continue
		}
		switch {
		case !r.Moves():
			stop = r.Stop
			continue
		case !present[h.m]:
			rep.Failed++
			gone++
			continue
		}
		if why := s.fullNow(r, len(h.m.body), force, from); why != "" {
			s.putBackInOrder(src, h.m)
			rep.Skipped++
			sk := r.Skipped(why)
			sk.Stop = true
			rep.Planned = append(rep.Planned, sk)
			stop = true
			continue
		}
		if r.Via == topology.ViaDelayQueue {
			if err := s.declareQueue(r.Queue, map[string]any(r.WaitQueueArgs)); err != nil {
				s.putBack(src, h.m)
				rep.Skipped++
				rep.Planned = append(rep.Planned, r.Skipped(err.Error()))
				continue
			}
		}
		props := h.m.props
		props.Expiration = r.Expiration
		hd := r.Apply(h.m.headers)
		hd[broker.HeaderMoveID] = run + "/" + strconv.Itoa(r.Position)
		qs, err := s.publish(r.Exchange, r.RoutingKey, props, hd, h.m.body)
		var refused errRefused
		switch {
		case errors.As(err, &refused):
			// basic.nack: it stays, as the live broker's move keeps it.
			s.putBack(src, h.m)
			rep.Failed++
		case err != nil:
			s.putBack(src, h.m)
			rep.Failed++
			rep.Note(err.Error())
		case len(qs) == 0 && r.Mandatory:
			s.putBack(src, h.m)
			rep.Returned++
		default:
			rep.Moved++
			rep.Count(r)
		}
	}
	return gone, stop
}

// fullNow says why r's message must not go now: a queue it reaches (or the
// tier it waits in) is full and would drop its head or refuse it with a
// dead-lettered copy. "" when it may go (or --force).
func (s *Sim) fullNow(r moveplan.Route, size int, force bool, from string) string {
	if force {
		return ""
	}
	qs := r.Reaches
	if r.Via == topology.ViaTier && r.Queue != "" {
		qs = append(slices.Clone(qs), r.Queue)
	}
	for _, name := range qs {
		q := s.byName[name]
		if q == nil || q.set.Overflow == topology.OverflowRejectPublish || !q.full(size) {
			continue
		}
		return fmt.Sprintf("%s is full now (at most %s): the move stopped here so as not to overflow it; left in %s (--force moves it anyway)", name, limitWords(q.set), from)
	}
	return ""
}

// limitWords is a queue's length limit in words.
func limitWords(set topology.QueueSettings) string {
	var s string
	if set.HasMaxLength {
		s = plural(int(set.MaxLength), "message", "messages")
		s = strconv.FormatInt(set.MaxLength, 10) + " " + s
	}
	if set.HasMaxLengthBytes {
		if s != "" {
			s += " or "
		}
		s += strconv.FormatInt(set.MaxLengthBytes, 10) + " bytes"
	}
	return s
}

// putBackInOrder returns a message the move took out of the source but did
// not publish: messages leave the source batch by batch, so the ones the
// move stopped before go back in front of the rest, in their order, as
// unacked deliveries return on the broker.
func (s *Sim) putBackInOrder(src *queue, m *message) {
	if src == nil {
		return
	}
	n := 0
	for n < len(src.ready) && src.ready[n].redelivered && src.ready[n].seq < m.seq {
		n++
	}
	m.redelivered = true
	src.ready = slices.Insert(src.ready, n, m)
}

// putBack returns a message whose publish failed to the head of the source,
// the place a requeued delivery goes (its original position is lost, as
// with basic.nack requeue=true after other messages were taken).
func (s *Sim) putBack(src *queue, m *message) {
	if src == nil {
		return
	}
	m.redelivered = true
	src.ready = slices.Insert(src.ready, 0, m)
}
