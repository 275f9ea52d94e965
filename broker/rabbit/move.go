package rabbit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/pace"
	"github.com/ladder-tui/ladder/broker/preview"
	"github.com/ladder-tui/ladder/internal/wording"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Move tuning.
const (
	// moveWindow is how many publishes may await their confirm at once:
	// pipelining, not one round trip per message.
	moveWindow = 2048
	// moveIdle ends a move when the source stops delivering (other consumers
	// took the rest, or fewer messages than counted).
	moveIdle = 2 * time.Second
	// settleWait bounds the wait for outstanding confirms after a cancel.
	settleWait  = 30 * time.Second
	maxPrefetch = 65535
	// heldBudget: see preview.HeldBudget.
	heldBudget = preview.HeldBudget
	// ackBatch confirmed messages are acked in the source with one frame.
	ackBatch = 256
	// ackSync: after this many acks a round trip on the source channel
	// shows the broker processed them (AMQP does not confirm acks), so a
	// lost connection can only have lost the acks since.
	ackSync = 4096
	// closeNoticeWait bounds the wait for a closed channel's reason after
	// an ack found it closed (amqp091 posts it right after).
	closeNoticeWait = 2 * time.Second
)

// slowTake, set by a test, runs after each message is taken: a step as slow
// as a wait queue's declare on a busy broker.
var slowTake func()

// mover runs one move: a consuming source channel, a confirming target channel.
type mover struct {
	l     *Live
	req   broker.MoveRequest
	conn  *amqp.Connection
	src   *amqp.Channel
	dst   *amqp.Channel
	rep   *broker.MoveReport
	run   string
	start time.Time

	planner      *moveplan.Planner
	waitDeclared map[string]time.Time // per-delay wait queues, last declared
	waitArgs     map[string]retry.Headers
	prefetch     int
	// deliveryLimit is the source's quorum delivery limit (0: none): every
	// message held back and returned counts one delivery.
	deliveryLimit int64

	progress func(broker.MoveProgress)
	// blocked is the broker's reason while it blocks the publishing
	// connection (a resource alarm), "" otherwise.
	blocked string
	// lookAt is how many messages a --where move looks at (0 without one).
	lookAt int
	// lastPick is the furthest position a pick was peeked at (unblock).
	lastPick int
	pace     pace.Pacer
	// dstWatch keeps why the broker closed dst (ACCESS_REFUSED on a
	// publish): later publishes only say the channel is not open.
	dstWatch *CloseWatch
	// rereads are the reads of the queues it reaches (move_reread.go).
	rereads rereads
	// policies and opPolicies are the vhost's, as last listed
	// (havePolicies: the listing answered).
	policies, opPolicies []topology.PolicyDef
	havePolicies         bool
}

// pending is a publish awaiting its confirm.
type pending struct {
	srcTag uint64
	id     string
	route  moveplan.Route
}

// moveOn is one move on this client's node (Move goes on through another
// when it loses it: failover.go). The source message is acked only after
// the target confirmed it and did not return it; anything nacked, returned
// or unconfirmed stays in the source (in order) when the move ends.
func (l *Live) moveOn(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	rep := broker.NewMoveReport(req)
	if l.r.ReadOnly && !req.DryRun {
		return rep, fmt.Errorf("move from %s: %w", req.From, broker.ErrReadOnly)
	}
	v, err := l.mgmt.VhostFresh(ctx, l.r.Vhost)
	if err != nil {
		return rep, err
	}
	if l.adaptVhost != nil {
		l.adaptVhost(&v)
	}
	l.evidence.Apply(&v)
	version, verr := l.mgmt.BrokerVersion(ctx)
	if verr != nil {
		// Without it ladder cannot tell whether the broker carries x-death
		// on (a 4.x broker would lose the history): refuse, as replay does.
		return rep, fmt.Errorf("move from %s: %w", req.From, verr)
	}
	spec := req.Spec(time.Now())
	spec.Clock = time.Now // a pick's remaining delay, as it is published
	spec.ForBroker(version)
	var m *mover
	// A length-limited queue's ready count, exact (the management API's
	// lags by its stats interval), when the plan first reaches it.
	spec.Ready = func(queue string) (int64, bool) {
		if m == nil || m.conn == nil {
			return 0, false
		}
		n, err := passiveDepth(m.conn, queue)
		return int64(n), err == nil
	}
	// The policies as listed now: a queue's effective policy in the vhost
	// read lags a new one by seconds.
	spec.Policy = func(queue, typ string) (map[string]any, bool) {
		if m == nil || !m.havePolicies {
			return nil, false
		}
		return topology.EffectivePolicy(queue, typ, m.policies, m.opPolicies)
	}
	planner, err := moveplan.NewPlanner(&v, topology.Discover(&v), spec)
	if err != nil {
		return rep, err
	}
	m = &mover{
		l: l, req: req, rep: rep, planner: planner,
		waitDeclared: map[string]time.Time{}, waitArgs: map[string]retry.Headers{},
		progress: progress, start: time.Now(), run: preview.RunID(), pace: pace.New(req.Rate),
	}
	for _, k := range req.Pick {
		m.lastPick = max(m.lastPick, k.Position)
	}
	m.readPolicies(ctx)
	q, _ := v.Queue(req.From)
	if limit, ok := broker.DeliveryLimit(q, version); ok {
		m.deliveryLimit = limit
	}
	conn, err := l.connection(ctx)
	if err != nil {
		return rep, err
	}
	m.conn = conn
	ready, err := passiveDepth(conn, req.From)
	if err != nil {
		return rep, fmt.Errorf("move: source queue %q: %w", req.From, err)
	}
	rep.Requested = preview.Requested(req, ready)
	if req.Chooses() {
		// Every message is looked at; Limit counts the chosen ones.
		all := req
		all.Limit = 0
		rep.Requested = preview.Requested(all, ready)
		m.lookAt = rep.Requested
	}
	if req.Pick != nil && ready == 0 {
		// Every planned message has left the queue: say so, as the
		// simulation does, not "nothing to move".
		rep.Requested = len(req.Pick)
		rep.Notes = append(rep.Notes, moveplan.PicksGoneNote(len(req.Pick)))
		if req.DryRun {
			return rep, nil
		}
		return rep, fmt.Errorf("move from %s: moved 0 of %d (0 returned, 0 failed, 0 skipped): %w", req.From, len(req.Pick), broker.ErrPartial)
	}
	if req.DryRun {
		return rep, m.dryRun(ctx, ready)
	}
	if rep.Requested == 0 {
		return rep, nil
	}
	return rep, m.move(ctx)
}

// selected says whether the message at pos is part of the move.
func (m *mover) selected(pos int) bool {
	return len(m.req.Positions) == 0 || slices.Contains(m.req.Positions, pos)
}

// lastPosition is the last queue position the move needs to look at.
func (m *mover) lastPosition() int {
	if len(m.req.Positions) == 0 {
		return -1
	}
	return slices.Max(m.req.Positions)
}

// dryRun browses the messages the move would take (ready were ready) and
// plans each one with the planner the move itself uses, from the same
// inputs. Where that browse counts a delivery toward a delivery limit (a
// quorum queue before 4.3) it runs only with req.ForcePeek: otherwise it is
// refused before the queue is touched, as a peek is.
func (m *mover) dryRun(ctx context.Context, ready int) error {
	limit, capped := preview.ReadsCapped(m.req, ready)
	if capped {
		m.rep.Note(fmt.Sprintf("--where looked at the first %d messages only (a move holds at most that many back at a time)", heldBudget))
	}
	if limit == 0 {
		return nil
	}
	bodyPreview := 1
	if !m.req.Where.Empty() {
		bodyPreview = preview.MaxBody // body~REGEX reads the whole body, as the move will
	}
	res, err := m.l.Peek(ctx, m.req.From, broker.PeekOptions{Limit: limit, BodyPreview: bodyPreview, Force: m.req.ForcePeek})
	if err != nil {
		return fmt.Errorf("dry run: %w", err)
	}
	n := 0
	for _, msg := range res.Messages {
		if !m.selected(msg.Position) || n >= m.rep.Requested || (m.lookAt > 0 && m.req.Limit > 0 && n >= m.req.Limit) {
			continue
		}
		r := m.plan(msg.MoveInput().Message(true))
		if !r.Unmatched {
			n++
		}
	}
	m.rep.Requested = n
	if m.req.Pick != nil {
		m.rep.Requested = len(m.req.Pick)
		m.notePicksGone()
	}
	for _, note := range m.planner.RoomNotes() {
		m.rep.Note(note)
	}
	m.rep.Notes = append(m.rep.Notes, "dry run: nothing was published or acknowledged; browsing set the redelivered flag")
	for _, n := range preview.CostNotes(res) {
		m.rep.Note(n)
	}
	return nil
}

// notePicksGone says how many picked messages (ladder unblock) no message
// of the queue was found to be: they stay unmoved, counted as requested.
func (m *mover) notePicksGone() {
	if n := m.planner.PicksMissed(); n > 0 {
		m.rep.Notes = append(m.rep.Notes, moveplan.PicksGoneNote(n))
	}
}

// plan routes one message and books it in the report: every plan in a dry
// run, only the skipped ones otherwise (moved ones are counted as they
// settle).
func (m *mover) plan(msg moveplan.Message) moveplan.Route {
	return m.rep.Book(msg, m.planner.Plan(msg))
}

// move is the loss-free pipeline.
func (m *mover) move(ctx context.Context) (err error) {
	if m.src, err = m.conn.Channel(); err != nil {
		return fmt.Errorf("move from %s: open source channel: %w", m.req.From, err)
	}
	defer m.src.Close() // returns every message not acked, in order
	// Publishing gets its own connection, as a shovel does: flow control
	// throttles a publishing connection, and it must not hold back the
	// consuming side's acks.
	pubConn, err := m.l.r.DialAMQP(ctx, m.l.purpose+" (publish)")
	if err != nil {
		return fmt.Errorf("move from %s: %w", m.req.From, err)
	}
	defer pubConn.Close()
	if m.dst, err = pubConn.Channel(); err != nil {
		return fmt.Errorf("move from %s: open target channel: %w", m.req.From, err)
	}
	defer m.dst.Close()
	m.dstWatch = WatchChannel(m.dst)
	if err := m.dst.Confirm(false); err != nil {
		return fmt.Errorf("move from %s: confirm mode: %w", m.req.From, err)
	}
	// Buffers larger than the window: amqp091 gives up on a full listener
	// after a while, and a lost confirm would leave its message unsettled.
	confirms := m.dst.NotifyPublish(make(chan amqp.Confirmation, moveWindow*2))
	var returns <-chan amqp.Return = m.dst.NotifyReturn(make(chan amqp.Return, moveWindow*2)) // nil once closed (nextReturns)
	dstClosed := m.dst.NotifyClose(make(chan *amqp.Error, 1))
	// A resource alarm blocks publishing: stop taking deliveries until it
	// clears, so the loop keeps settling confirms and can be cancelled.
	blocked := pubConn.NotifyBlocked(make(chan amqp.Blocking, 4))
	srcClosed := m.src.NotifyClose(make(chan *amqp.Error, 1))

	// Messages the move holds back (not selected, skipped, returned,
	// nacked) stay unacked until the end, so the prefetch leaves room for
	// them beside the window — bounded, since deliveries sit in memory.
	look := min(m.rep.Requested, heldBudget)
	if last := m.lastPosition(); last >= 0 {
		look = last + 1
	}
	if m.req.Pick != nil {
		look = min(look, m.lastPick+1)
	}
	m.prefetch = min(maxPrefetch, max(2*moveWindow, look+moveWindow))
	if err := m.src.Qos(m.prefetch, 0, false); err != nil {
		return fmt.Errorf("move from %s: qos: %w", m.req.From, err)
	}
	// Not ctx: cancelling must stop deliveries, not close them under us.
	deliveries, err := m.src.ConsumeWithContext(context.Background(), m.req.From, "ladder-move-"+m.run, false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("move from %s: consume: %w", m.req.From, err)
	}

	p := &pipeline{m: m, inflight: map[uint64]pending{}, returned: map[string]bool{}, heldMin: math.MaxUint64, consuming: true}
	// Idleness is checked by a ticker against the last event: resetting a
	// timer on every delivery and confirm costs more than it needs to.
	idle := time.NewTicker(moveIdle / 8)
	defer idle.Stop()
	// The queues the move reaches are read again as it runs, off this
	// loop (move_reread.go): a length limit added by a policy, or a queue
	// filled from elsewhere, stops the move before it drops anything.
	reread := time.NewTicker(rereadEvery)
	defer reread.Stop()
	rctx, stopReads := context.WithCancel(ctx)
	defer stopReads()
	last := time.Now()
	// settleBy bounds the wait for the last confirms once the move stops
	// taking messages. A resource alarm holds confirms back for as long
	// as it lasts: the bound waits for it to clear, unless the move was
	// cancelled.
	var settleBy <-chan time.Time
	settling, cancelled := false, false
	settleFrom := func() {
		settleBy = nil
		if settling && (!p.blocked || cancelled) {
			settleBy = time.After(settleWait)
		}
	}
	stop := func() {
		if p.consuming {
			p.consuming = false
			settling = true
			settleFrom()
		}
	}
	takeReturn := func(r amqp.Return) {
		if id, ok := r.Headers[broker.HeaderMoveID].(string); ok {
			p.returned[id] = true
		}
	}

	sourceClosed := func(e *amqp.Error) {
		// No ack can reach the source now: every published message is
		// back in it and may also be in the target.
		p.fail(m.lost(e, len(p.inflight)+len(p.okTags), "source"))
		// Acks not yet shown processed may not have reached it either.
		m.rep.DuplicatesAtMost += p.unsynced
		p.unsynced = 0
		p.inflight, p.okTags, p.okRoutes = map[uint64]pending{}, nil, nil
		p.consuming = false
	}

	// ackFailed takes an ack the source refused. amqp091 marks a channel
	// closed before it posts the reason, so an ack can fail first on a
	// channel the client dropped (a message it could not parse): the
	// reason, when it comes, says what stopped the move.
	ackFailed := func(err error) {
		if errors.Is(err, amqp.ErrClosed) && srcClosed != nil {
			select {
			case e, ok := <-srcClosed:
				srcClosed = nil
				if ok {
					sourceClosed(e)
					return
				}
			case <-time.After(closeNoticeWait):
			}
		}
		p.fail(err)
		stop()
	}

	// deliver takes one delivery (ok false: the deliveries closed).
	deliver := func(d amqp.Delivery, ok bool) {
		if !ok {
			// amqp091 posts a channel's close reason before it closes
			// the deliveries: take the reason when there is one.
			select {
			case e, ok := <-srcClosed:
				if ok {
					sourceClosed(e)
					srcClosed = nil
					return
				}
			default:
			}
			p.fail(fmt.Errorf("move from %s: the broker closed the source channel", m.req.From))
			stop()
			return
		}
		last = time.Now()
		seq := p.seq
		err := p.take(ctx, &d)
		if slowTake != nil {
			slowTake()
		}
		if p.seq != seq {
			m.rereadSent(p.inflight[p.seq]) // published while a read is under way
		}
		if err != nil {
			p.fail(err)
			stop()
			return
		}
		if p.done() {
			stop()
		}
	}

	var paceC <-chan time.Time
	for p.consuming || len(p.inflight) > 0 {
		var in <-chan amqp.Delivery
		resumed := m.req.Hold.Resumed()
		if p.consuming && !p.blocked && len(p.inflight) < moveWindow && resumed == nil {
			in = deliveries
			if w := m.pace.Wait(time.Now()); w > 0 {
				in, paceC = nil, time.After(w) // --rate: the next publish waits
			}
		}
		select {
		case <-resumed:
			last = time.Now() // paused: not idle
		case <-paceC:
			paceC, last = nil, time.Now()
		case d, ok := <-in:
			deliver(d, ok)
		case c, ok := <-confirms:
			if !ok {
				confirms = nil
				continue
			}
			last = time.Now() // a full window waits on confirms, not deliveries
			// A return always comes before the confirm of the same message.
			returns = drainReturns(returns, takeReturn)
			p.settle(c)
			if len(p.okTags) >= ackBatch || len(p.inflight) == 0 {
				if err := p.flushAcks(); err != nil {
					ackFailed(err)
				}
			}
		case r, ok := <-returns:
			returns = nextReturns(returns, r, ok, takeReturn)
		case b, ok := <-blocked:
			if !ok {
				blocked = nil
				continue
			}
			if b.Active == p.blocked {
				continue
			}
			p.blocked, m.blocked = b.Active, ""
			last = time.Now()
			if b.Active {
				m.blocked = blockedReason(b.Reason)
				m.rep.Note("the broker blocked publishing for a while (" + m.blocked + ")")
			}
			if settling && !cancelled {
				settleFrom() // paused while blocked, afresh when it clears
			}
			m.report()
		case <-reread.C:
			if p.consuming {
				m.startReread(rctx, p, time.Now())
			}
		case res := <-m.rereads.results:
			m.applyReread(res, time.Now())
		case <-idle.C:
			if time.Since(last) < moveIdle || p.blocked || paceC != nil || resumed != nil {
				continue // busy, blocked by the broker, pacing (--rate) or paused
			}
			if in != nil {
				// Idle only if no delivery is waiting: a slow step (a
				// wait queue's declare on a busy broker) or a starved
				// goroutine leaves last old while deliveries queue up,
				// and select picks among ready cases at random.
				select {
				case d, ok := <-in:
					deliver(d, ok)
					continue
				default:
				}
			}
			if p.consuming && p.held >= m.prefetch-moveWindow {
				m.rep.Notes = append(m.rep.Notes, fmt.Sprintf("stopped after holding back %s it could not move (ladder's limit is %d at a time): run the move again for the rest", topology.Plural(p.held, "message", "messages"), heldBudget))
				p.fail(fmt.Errorf("move from %s: stopped after holding back %d messages: %w", m.req.From, p.held, broker.ErrPartial))
			}
			stop()
		case <-settleBy:
			p.fail(fmt.Errorf("move from %s: %d confirms did not arrive in %v", m.req.From, len(p.inflight), settleWait))
			// A late confirm means the target has it, while the source
			// keeps it too.
			m.rep.DuplicatesPossible = true
			m.rep.DuplicatesAtMost += len(p.inflight)
			m.rep.Failed += len(p.inflight)
			p.inflight = map[uint64]pending{}
		case e, ok := <-dstClosed:
			if !ok {
				dstClosed = nil
				continue
			}
			// Confirms already sent are still valid: settle them, then the
			// rest is unknown.
			if confirms != nil {
				for c := range confirms { // closed right after the close notice
					returns = drainReturns(returns, takeReturn)
					p.settle(c)
				}
				confirms = nil
			}
			if err := p.flushAcks(); err != nil {
				p.fail(err)
			}
			refused := notPublished(e, p.inflight)
			if refused > 0 {
				// Not published: failed, in the source, and said why.
				m.rep.Failed += refused
				m.rep.Notes = append(m.rep.Notes, fmt.Sprintf("%s not published (the broker refused %s: %s) and %s in %s",
					wording.Were(refused, "message", "messages"), wording.Plain(refused, "it", "them"), strings.TrimSpace(e.Reason), wording.StayStays(refused), m.req.From))
			}
			p.fail(m.lost(e, len(p.inflight)-refused, "target"))
			p.inflight = map[uint64]pending{}
			m.report()
			p.consuming = false
		case e, ok := <-srcClosed:
			if !ok {
				srcClosed = nil
				continue
			}
			sourceClosed(e)
		case <-ctx.Done():
			cancelled = true
			if p.consuming {
				p.fail(fmt.Errorf("move from %s: %w", m.req.From, ctx.Err()))
				stop()
				// Stop deliveries; in-flight confirms still settle.
				_ = m.src.Cancel("ladder-move-"+m.run, false)
			} else if settleBy == nil {
				settleFrom() // no more waiting for an alarm to clear
			}
			ctx = context.Background()
		}
	}
	if err := p.flushAcks(); err != nil {
		ackFailed(err)
	}
	p.syncAcks()
	m.renewWaitQueues()
	if m.lookAt > 0 {
		m.rep.Requested = max(m.rep.Moved+m.rep.Failed+m.rep.Returned+m.rep.Skipped, len(m.req.Expect))
	}
	if m.req.Pick != nil {
		// Every planned message counts, found or not: none is taken for
		// another (see moveplan.Pick).
		m.rep.Requested = len(m.req.Pick)
		if p.failure == nil {
			m.notePicksGone()
		}
	}
	m.report()
	failure := p.failure
	if failure == nil && m.rep.Moved < m.rep.Requested {
		failure = fmt.Errorf("move from %s: moved %d of %d (%d returned, %d failed, %d skipped)",
			m.req.From, m.rep.Moved, m.rep.Requested, m.rep.Returned, m.rep.Failed, m.rep.Skipped)
	}
	if m.rep.Via[topology.ViaDelayedExchange] > 0 {
		m.rep.Notes = append(m.rep.Notes, "published to a delayed-message exchange without mandatory (it returns every mandatory message): a message unroutable after its delay is dropped by the plugin")
	}
	if m.rep.Returned > 0 {
		m.rep.Notes = append(m.rep.Notes, fmt.Sprintf("%s returned as unroutable and %s in %s", wording.Were(m.rep.Returned, "message", "messages"), wording.StayStays(m.rep.Returned), m.req.From))
	}
	for _, note := range m.planner.RoomNotes() {
		m.rep.Note(note)
	}
	// Once consuming began, any failure may leave messages behind.
	if failure != nil && !errors.Is(failure, broker.ErrPartial) {
		failure = fmt.Errorf("%w: %w", failure, broker.ErrPartial)
	}
	return failure
}

// pipeline is one move's bookkeeping between deliveries and confirms.
type pipeline struct {
	m        *mover
	inflight map[uint64]pending // publish sequence → source delivery
	returned map[string]bool    // move ids the target returned
	seq      uint64             // publish sequence on the confirm channel, from 1
	pos      int                // next delivery's queue position
	taken    int                // selected deliveries so far
	matched  int                // of those, chosen by --where
	held     int                // deliveries kept unacked until the end
	// okTags are confirmed source tags not yet acked; acked in batches with
	// multiple=true while no held message lies below them. okRoutes are
	// their plans, counted in the report once acked.
	okTags []uint64
	// unsynced counts acks sent since the broker last showed it had
	// processed them (ackSync).
	unsynced  int
	okRoutes  []moveplan.Route
	heldMin   uint64
	consuming bool
	blocked   bool // the broker blocked the publishing connection
	failure   error
}

func (p *pipeline) fail(err error) {
	if p.failure == nil {
		p.failure = err
	}
}

// hold keeps a delivery unacked: it returns to the source, in order, when
// the move's channel closes.
func (p *pipeline) hold(tag uint64) {
	p.heldMin = min(p.heldMin, tag)
	p.held++
}

// done says whether the move has looked at every message it needs.
func (p *pipeline) done() bool {
	m := p.m
	if last := m.lastPosition(); last >= 0 {
		return p.pos > last
	}
	if m.req.Pick != nil && (p.matched >= len(m.req.Pick) || p.pos > m.lastPick) {
		// Every picked message was seen, or the move is past where the peek
		// saw the last one: messages only leave from the head, so none
		// behind it can be a pick (and holding the rest would stop them
		// expiring).
		return true
	}
	if m.lookAt > 0 {
		return p.taken >= m.lookAt || (m.req.Limit > 0 && p.matched >= m.req.Limit)
	}
	return p.taken >= m.rep.Requested
}

// take handles one delivery: hold it, or publish it to its destination.
// An error stops the move (the delivery is held).
func (p *pipeline) take(ctx context.Context, d *amqp.Delivery) error {
	m := p.m
	pos := p.pos
	p.pos++
	if !m.selected(pos) {
		p.hold(d.DeliveryTag)
		return m.checkDeliveryLimit(d)
	}
	p.taken++
	// The body's SHA-256 is worked out where it is read (MoveInput.Message,
	// Book, unplan).
	r := m.plan(broker.MoveInput{Position: pos, MessageID: d.MessageId, Exchange: d.Exchange, RoutingKey: d.RoutingKey,
		Headers: fromTable(d.Headers), Expiration: d.Expiration, Timestamp: &d.Timestamp, Body: d.Body}.Message(m.planner.ReadsDigest()))
	if r.Unmatched {
		p.hold(d.DeliveryTag)
		return m.checkDeliveryLimit(d)
	}
	p.matched++
	if !r.Moves() {
		p.hold(d.DeliveryTag)
		m.report()
		if r.Stop {
			// A queue it reaches is full: nothing more goes (this one and
			// the rest stay in the source).
			return fmt.Errorf("move from %s: stopped at message #%d: %s: %w", m.req.From, pos, r.Skip, broker.ErrPartial)
		}
		return m.checkDeliveryLimit(d)
	}
	pub := m.publishing(d, pos, r)
	if r.Via == topology.ViaDelayQueue {
		if err := m.ensureWaitQueue(r.Queue, r.WaitQueueArgs); err != nil {
			if r.BodyDigest == "" {
				r.BodyDigest = moveplan.BodyDigest(d.Body)
			}
			m.unplan(r, err.Error())
			p.hold(d.DeliveryTag)
			m.report()
			return m.checkDeliveryLimit(d)
		}
	}
	if err := m.dst.PublishWithContext(ctx, r.Exchange, r.RoutingKey, r.Mandatory, false, pub); err != nil {
		p.hold(d.DeliveryTag)
		return AMQPFailure(m.conn, "move from "+m.req.From+": publish", err, m.dstWatch)
	}
	m.pace.Took(time.Now())
	p.seq++
	p.inflight[p.seq] = pending{srcTag: d.DeliveryTag, id: pub.Headers[broker.HeaderMoveID].(string), route: r}
	return nil
}

// unplan turns a planned move into a skipped one (its wait queue could not
// be declared).
func (m *mover) unplan(r moveplan.Route, why string) {
	m.rep.Skipped++
	m.rep.Planned = append(m.rep.Planned, r.Skipped(why))
}

// settle accounts for one confirm.
func (p *pipeline) settle(c amqp.Confirmation) {
	m := p.m
	pd, known := p.inflight[c.DeliveryTag]
	if !known {
		return
	}
	delete(p.inflight, c.DeliveryTag)
	switch {
	case p.returned[pd.id]:
		delete(p.returned, pd.id)
		p.hold(pd.srcTag)
		m.rep.Returned++
		m.report()
	case !c.Ack:
		p.hold(pd.srcTag)
		m.rep.Failed++
		m.report()
	default:
		p.okTags = append(p.okTags, pd.srcTag)
		p.okRoutes = append(p.okRoutes, pd.route)
	}
}

// flushAcks acks the confirmed messages in the source: one frame when no
// held message lies below them, else one by one.
func (p *pipeline) flushAcks() error {
	m := p.m
	if len(p.okTags) == 0 {
		return nil
	}
	acked := 0
	var err error
	if last := p.okTags[len(p.okTags)-1]; last < p.heldMin {
		if err = m.src.Ack(last, true); err == nil {
			acked = len(p.okTags)
		}
	} else {
		for _, t := range p.okTags {
			if err = m.src.Ack(t, false); err != nil {
				break
			}
			acked++
		}
	}
	m.rep.Moved += acked
	p.unsynced += acked
	for _, r := range p.okRoutes[:acked] {
		m.rep.Count(r)
	}
	if err != nil {
		// Confirmed at the target, still in the source.
		m.rep.DuplicatesPossible = true
		m.rep.DuplicatesAtMost += len(p.okTags) - acked
		m.rep.Failed += len(p.okTags) - acked
		p.okTags, p.okRoutes = p.okTags[:0], p.okRoutes[:0]
		return fmt.Errorf("move from %s: ack source: %w", m.req.From, err)
	}
	p.okTags, p.okRoutes = p.okTags[:0], p.okRoutes[:0]
	if p.unsynced >= ackSync {
		// Any reply on the channel comes after the acks sent before it.
		if _, err := m.src.QueueDeclarePassive(m.req.From, true, false, false, false, nil); err == nil {
			p.unsynced = 0
		}
	}
	m.report()
	return nil
}

// syncAcks ends the move's source channel and with it the doubt about the
// last acks: AMQP does not confirm an ack, and one written to a socket that
// stalled (or whose connection then died) never reached the broker, which
// returns the message to the source although it is in the target. The
// close is a round trip after them; if it does not complete (the channel
// or its connection is gone, a heartbeat timed out), every ack since the
// last sync may be lost.
func (p *pipeline) syncAcks() {
	if p.unsynced == 0 {
		return
	}
	m := p.m
	if !m.src.IsClosed() && m.src.Close() == nil {
		p.unsynced = 0
		return
	}
	m.rep.DuplicatesPossible = true
	m.rep.DuplicatesAtMost += p.unsynced
	m.rep.Notes = append(m.rep.Notes, fmt.Sprintf("the broker did not confirm it processed the last %s sent to %s (the connection stalled or closed): up to %s may be back in %s as well as in the target",
		topology.Plural(p.unsynced, "ack", "acks"), m.req.From, topology.Plural(p.unsynced, "message", "messages"), m.req.From))
	p.fail(fmt.Errorf("move from %s: the source's last acks were not confirmed: %w", m.req.From, broker.ErrPartial))
	p.unsynced = 0
}

// lost accounts for a channel the broker closed mid-move: unconfirmed
// messages are still in the source; one may have reached the target too.
func (m *mover) lost(e *amqp.Error, unsettled int, which string) error {
	if unsettled > 0 {
		m.rep.DuplicatesPossible = true
		m.rep.DuplicatesAtMost += unsettled
		m.rep.Failed += unsettled
	}
	if which == "source" && clientCouldNotParse(e) {
		m.rep.Notes = append(m.rep.Notes, fmt.Sprintf("the AMQP client could not read a message of %s (%s: %s) and dropped the connection: %s still in %s and may also have reached the target; ladder peek %s shows where it stops",
			m.req.From, e.Reason, unparsedHint, wording.IsAre(unsettled, "unsettled message", "unsettled messages"), m.req.From, m.req.From))
		return fmt.Errorf("move from %s: stopped at a message the AMQP client could not read (%s): %w", m.req.From, unparsedHint, broker.ErrPartial)
	}
	if unsettled > 0 {
		m.rep.Notes = append(m.rep.Notes, fmt.Sprintf("the broker closed the %s channel: %s still in %s and may also have reached the target", which, wording.IsAre(unsettled, "unsettled message", "unsettled messages"), m.req.From))
	} else {
		m.rep.Notes = append(m.rep.Notes, fmt.Sprintf("the broker closed the %s channel: what was in flight was not published and is still in %s", which, m.req.From))
	}
	if e == nil {
		return fmt.Errorf("move from %s: %s channel closed: %w", m.req.From, which, broker.ErrPartial)
	}
	return fmt.Errorf("%w: %w", amqpLost(connAddr(m.conn), "move from "+m.req.From+" ("+which+")", e), broker.ErrPartial)
}

func (m *mover) report() {
	if m.progress == nil {
		return
	}
	r := m.rep
	total, done := r.Requested, r.Moved+r.Failed+r.Returned+r.Skipped
	switch {
	case m.req.Pick != nil:
		total = len(m.req.Pick) // the plan, not the wait queue's depth
	case len(m.req.Expect) > 0:
		total = len(m.req.Expect) // the confirmed plan, not the source's depth
	case m.lookAt > 0:
		// --where without a preview: every message is looked at; those it
		// did not choose are done too.
		done += r.Unmatched
	}
	m.progress(broker.MoveProgress{
		Total: total, Done: done,
		Moved: r.Moved, Failed: r.Failed, Elapsed: time.Since(m.start), Blocked: m.blocked,
	})
}

// blockedReason is the broker's reason for a connection.blocked, or words
// for one that gave none.
func blockedReason(reason string) string {
	if reason == "" {
		return "a resource alarm"
	}
	return reason
}

// waitRenew is how often a per-delay wait queue in use is declared again:
// a declare counts as use, so its x-expires (a day) never runs
// out while messages are still being put in.
const waitRenew = 10 * time.Second

// ensureWaitQueue declares a per-delay wait queue when first used and again
// every waitRenew. A queue of that name with other arguments refuses the
// declare (on a throwaway channel): its messages are skipped.
func (m *mover) ensureWaitQueue(name string, args retry.Headers) error {
	if at, ok := m.waitDeclared[name]; ok && time.Since(at) < waitRenew {
		return nil
	}
	if err := m.declareWaitQueue(name, args); err != nil {
		return err
	}
	m.waitDeclared[name], m.waitArgs[name] = time.Now(), args
	return nil
}

// renewWaitQueues declares every wait queue once more when the move ends,
// so each expires only retry.WaitQueueLinger after its last message could
// have left.
func (m *mover) renewWaitQueues() {
	for q, args := range m.waitArgs {
		if err := m.declareWaitQueue(q, args); err != nil {
			m.rep.Notes = append(m.rep.Notes, err.Error())
		}
	}
}

func (m *mover) declareWaitQueue(name string, args retry.Headers) error {
	ch, err := m.conn.Channel()
	if err != nil {
		return fmt.Errorf("declare wait queue %s: %w", name, err)
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare(name, true, false, false, false, toTable(args)); err != nil {
		return declareError(m.conn, name, err)
	}
	return nil
}

// notPublished counts the unconfirmed publishes the broker cannot have
// taken when it closed the channel over e, a publish it refused (no
// permission, no such exchange, a message it will not take): it handles a
// channel's publishes in order and discards what follows the refused one.
// When the reason names the exchange, the refused one is the first
// in-flight publish to it; otherwise only that one is known not to be
// published. The rest may have reached the target.
func notPublished(e *amqp.Error, inflight map[uint64]pending) int {
	if e == nil || len(inflight) == 0 {
		return 0
	}
	if !publishRefusal(e) {
		return 0
	}
	x, ok := refusedExchange(e)
	if !ok {
		return 1
	}
	first := uint64(math.MaxUint64)
	for seq, pd := range inflight {
		if pd.route.Exchange == x && seq < first {
			first = seq
		}
	}
	if first == math.MaxUint64 {
		return 1
	}
	n := 0
	for seq := range inflight {
		if seq >= first {
			n++
		}
	}
	return n
}

// checkDeliveryLimit stops a move on a quorum queue before the messages it
// holds back (each returned at the end counts a delivery) reach the limit.
func (m *mover) checkDeliveryLimit(d *amqp.Delivery) error {
	if m.deliveryLimit <= 0 {
		return nil
	}
	if n, ok := retry.HeaderInt(d.Headers["x-delivery-count"]); ok && n >= m.deliveryLimit-deliveryLimitMargin {
		return fmt.Errorf("move from %s: message %q has been delivered %d times (delivery limit %d); returning it once more may dead-letter it: stopping here",
			m.req.From, d.MessageId, n, m.deliveryLimit)
	}
	return nil
}

// publishing builds the message to publish: every property and header
// kept with its type, the plan's header edits, and the move id.
func (m *mover) publishing(d *amqp.Delivery, pos int, r moveplan.Route) amqp.Publishing {
	headers := make(amqp.Table, len(d.Headers)+len(r.SetHeaders)+1)
	for k, v := range d.Headers {
		headers[k] = v
	}
	for _, k := range r.DropHeaders {
		delete(headers, k)
	}
	for k, v := range r.SetHeaders {
		headers[k] = toValue(v)
	}
	headers[broker.HeaderMoveID] = m.run + "/" + strconv.Itoa(pos)
	p := amqp.Publishing{
		Headers: headers, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
		DeliveryMode: d.DeliveryMode, Priority: d.Priority, CorrelationId: d.CorrelationId,
		ReplyTo: d.ReplyTo, Expiration: r.Expiration, MessageId: d.MessageId, Timestamp: d.Timestamp,
		Type: d.Type, AppId: d.AppId, Body: d.Body,
	}
	// The broker refuses a user-id that is not the publishing user's.
	if d.UserId == m.l.r.amqpUser() {
		p.UserId = d.UserId
	}
	return p
}
