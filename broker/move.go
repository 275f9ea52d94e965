package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/retry"
)

// Headers ladder writes on every moved message.
const (
	HeaderMovedFrom = "x-ladder-moved-from"
	// HeaderMoveID ("<run>/<n>") ties a basic.return to the publish it
	// answers (returns carry no delivery tag) and lets consumers drop the
	// duplicate a crash between confirm and ack can leave.
	HeaderMoveID = "x-ladder-move-id"
	// HeaderOriginalExpiration keeps a message's expiration property when a
	// delayed move takes it off (it would shorten the delay).
	HeaderOriginalExpiration = "x-ladder-original-expiration"
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
	// heldBudget bounds the messages a move keeps unacked because it cannot
	// move them (deliveries sit in memory until the move ends).
	heldBudget = 10000
	// ackBatch confirmed messages are acked in the source with one frame.
	ackBatch = 256
)

// ErrPartial marks a move that left messages in the source.
var ErrPartial = errors.New("some messages were not moved")

// ParseTarget reads queue:NAME, exchange:NAME[:ROUTING_KEY] or origin.
func ParseTarget(s string) (Target, error) {
	switch {
	case s == TargetOrigin:
		return Target{Kind: TargetOrigin}, nil
	case strings.HasPrefix(s, "queue:") && len(s) > len("queue:"):
		return Target{Kind: TargetQueue, Name: s[len("queue:"):]}, nil
	case strings.HasPrefix(s, "exchange:"):
		rest := s[len("exchange:"):]
		name, key, hasKey := strings.Cut(rest, ":")
		if name == "" {
			return Target{}, fmt.Errorf("--to %q: exchange name is empty (the default exchange is reached with queue:NAME)", s)
		}
		t := Target{Kind: TargetExchange, Name: name}
		if hasKey {
			t.RoutingKey = key
			t.HasKey = true
		}
		return t, nil
	}
	return Target{}, fmt.Errorf("--to %q: want queue:NAME, exchange:NAME[:ROUTING_KEY] or origin", s)
}

// String is the target as the user writes it.
func (t Target) String() string {
	switch t.Kind {
	case TargetQueue:
		return "queue:" + t.Name
	case TargetExchange:
		if t.HasKey {
			return "exchange:" + t.Name + ":" + t.RoutingKey
		}
		return "exchange:" + t.Name
	default:
		return t.Kind
	}
}

// destination is where one message goes before any delay is applied.
// mains are the vhost's ladder main queues, for origin (see retry.OriginIn).
func (t Target) destination(d *amqp.Delivery, h retry.Headers, mains map[string]bool) (exchange, key string, err error) {
	switch t.Kind {
	case TargetQueue:
		return "", t.Name, nil
	case TargetExchange:
		if t.HasKey {
			return t.Name, t.RoutingKey, nil
		}
		return t.Name, d.RoutingKey, nil
	case TargetOrigin:
		o, ok := retry.OriginIn(retry.DecodeXDeath(h), mains)
		if !ok {
			return "", "", errors.New("no x-death origin: it was never dead-lettered (or its headers were rewritten)")
		}
		return o.Exchange, o.RoutingKey, nil
	}
	return "", "", fmt.Errorf("unknown target kind %q", t.Kind)
}

// mover runs one move: a consuming source channel, a confirming target channel.
type mover struct {
	l     *Live
	req   MoveRequest
	conn  *amqp.Connection
	src   *amqp.Channel
	dst   *amqp.Channel
	rep   *MoveReport
	run   string
	start time.Time

	snap         retry.Vhost
	router       *retry.Router
	ladders      []retry.Ladder
	routes       map[string]retry.ReplayRoute // exchange\x00key → route
	routeErrs    map[string]error
	mains        map[string]bool      // ladder main queues: where "origin" leads
	headerRouted map[string]bool      // Router.UsesHeaders, per exchange
	waitDeclared map[string]time.Time // per-delay wait queues, last declared
	waitArgs     map[string]retry.Headers
	prefetch     int
	// deliveryLimit is the source's quorum delivery limit (0: none): every
	// message held back and returned counts one delivery.
	deliveryLimit int64

	progress func(MoveProgress)
}

// pending is a publish awaiting its confirm.
type pending struct {
	srcTag uint64
	id     string
}

// Move implements Client. The source message is acked only after the target
// confirmed it and did not return it; anything nacked, returned or
// unconfirmed stays in the source (in order) when the move ends.
func (l *Live) Move(ctx context.Context, req MoveRequest, progress func(MoveProgress)) (*MoveReport, error) {
	rep := &MoveReport{Target: req.To.String(), DelayMS: req.Delay.Milliseconds(), DryRun: req.DryRun}
	if l.r.ReadOnly && !req.DryRun {
		return rep, fmt.Errorf("move from %s: %w", req.From, ErrReadOnly)
	}
	if req.Delay < 0 {
		return rep, fmt.Errorf("move from %s: negative delay %v", req.From, req.Delay)
	}
	q, err := l.mgmt.Queue(ctx, l.r.Vhost, req.From)
	if err != nil {
		return rep, fmt.Errorf("move: source %w", err)
	}
	if q.Type == retry.QueueStream {
		return rep, fmt.Errorf("move from %s: a stream cannot give messages up (read it with peek)", req.From)
	}
	v, err := l.mgmt.VhostFresh(ctx, l.r.Vhost)
	if err != nil {
		return rep, err
	}
	if l.adaptVhost != nil {
		l.adaptVhost(&v)
	}
	m := &mover{
		l: l, req: req, rep: rep, snap: v, router: retry.NewRouter(&v), ladders: retry.Discover(&v),
		routes: map[string]retry.ReplayRoute{}, routeErrs: map[string]error{}, waitDeclared: map[string]time.Time{}, waitArgs: map[string]retry.Headers{}, headerRouted: map[string]bool{},
		progress: progress, start: time.Now(), run: runID(),
	}
	m.mains = retry.MainQueues(m.ladders)
	if version, err := l.mgmt.BrokerVersion(ctx); err == nil {
		if limit, ok := deliveryLimit(q, version); ok {
			m.deliveryLimit = limit
		}
	}
	if err := m.checkTarget(); err != nil {
		return rep, err
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
	rep.Requested = requested(req, ready)
	if req.DryRun {
		return rep, m.dryRun(ctx, q)
	}
	if rep.Requested == 0 {
		return rep, nil
	}
	return rep, m.move(ctx)
}

func runID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// requested is how many messages the move will take from the source.
func requested(req MoveRequest, ready int) int {
	n := ready
	if len(req.Positions) > 0 {
		n = 0
		for _, p := range req.Positions {
			if p >= 0 && p < ready {
				n++
			}
		}
	}
	if req.Limit > 0 && req.Limit < n {
		n = req.Limit
	}
	return n
}

// checkTarget refuses a target that does not exist before anything moves.
func (m *mover) checkTarget() error {
	t := m.req.To
	switch t.Kind {
	case TargetQueue:
		if len(m.router.Route("", t.Name, nil).Queues) == 0 {
			return fmt.Errorf("move: target queue %q does not exist in vhost %s", t.Name, m.l.r.Vhost)
		}
		if t.Name == m.req.From {
			return fmt.Errorf("move: target queue %q is the source", t.Name)
		}
	case TargetExchange:
		if !m.router.Route(t.Name, "", nil).ExchangeExists {
			return fmt.Errorf("move: target exchange %q does not exist in vhost %s", t.Name, m.l.r.Vhost)
		}
	case TargetOrigin:
	default:
		return fmt.Errorf("move: unknown target %q", t.Kind)
	}
	return nil
}

// route is how a message reaches exchange/key after the request's delay,
// planned by the retry engine once per destination — per message when the
// route depends on headers.
func (m *mover) route(exchange, key string, headers retry.Headers) (retry.ReplayRoute, error) {
	k := exchange + "\x00" + key
	perMessage := m.usesHeaders(exchange)
	if !perMessage {
		if rt, ok := m.routes[k]; ok {
			return rt, nil
		}
		if err, ok := m.routeErrs[k]; ok {
			return retry.ReplayRoute{}, err
		}
	}
	if exchange != "" && !m.router.Route(exchange, "", nil).ExchangeExists {
		err := fmt.Errorf("exchange %q does not exist", exchange)
		m.routeErrs[k] = err
		return retry.ReplayRoute{}, err
	}
	rt, err := retry.PlanReplay(m.router, m.ladders, exchange, key, headers, m.req.Delay)
	if err != nil {
		if !perMessage {
			m.routeErrs[k] = err
		}
		return rt, err
	}
	if !perMessage {
		m.routes[k] = rt
	}
	if rt.Note != "" && !slices.Contains(m.rep.Notes, rt.Note) {
		m.rep.Notes = append(m.rep.Notes, rt.Note)
	}
	if m.rep.Via == "" || m.rep.Via == string(rt.Kind) {
		m.rep.Via = string(rt.Kind)
	} else {
		m.rep.Via = "mixed"
	}
	return rt, nil
}

// usesHeaders caches Router.UsesHeaders per exchange.
func (m *mover) usesHeaders(exchange string) bool {
	if v, ok := m.headerRouted[exchange]; ok {
		return v
	}
	v := m.router.UsesHeaders(exchange)
	m.headerRouted[exchange] = v
	return v
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

// dryRun browses the messages the move would take and says where each goes.
func (m *mover) dryRun(ctx context.Context, q retry.Queue) error {
	limit := m.rep.Requested
	if last := m.lastPosition(); last >= 0 {
		limit = last + 1
	}
	if limit == 0 {
		return nil
	}
	res, err := m.l.Peek(ctx, m.req.From, PeekOptions{Limit: limit, BodyPreview: 1})
	if err != nil {
		return fmt.Errorf("dry run: %w", err)
	}
	n := 0
	for _, msg := range res.Messages {
		if !m.selected(msg.Position) || n >= m.rep.Requested {
			continue
		}
		n++
		d := amqp.Delivery{RoutingKey: msg.RoutingKey}
		pm := PlannedMove{Position: msg.Position, MessageID: msg.Properties.MessageID}
		ex, key, err := m.req.To.destination(&d, msg.Headers, retry.MainQueues(m.ladders))
		if err == nil {
			var rt retry.ReplayRoute
			rt, err = m.route(ex, key, msg.Headers)
			if err == nil {
				pm.Exchange, pm.RoutingKey, pm.Via = rt.Exchange, rt.RoutingKey, string(rt.Kind)
				pm.TargetExchange, pm.TargetRoutingKey = ex, key
				if rt.Kind == retry.ActionDirect && len(m.router.Route(ex, key, msg.Headers).Queues) == 0 {
					pm.Note = "unroutable: it would be returned and stay in the source"
				}
			}
		}
		if err != nil {
			pm.Note = err.Error()
			m.rep.Skipped++
		}
		m.rep.Planned = append(m.rep.Planned, pm)
	}
	m.rep.Notes = append(m.rep.Notes, "dry run: nothing was published or acknowledged; browsing set the redelivered flag")
	return nil
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
	if err := m.dst.Confirm(false); err != nil {
		return fmt.Errorf("move from %s: confirm mode: %w", m.req.From, err)
	}
	// Buffers larger than the window: amqp091 gives up on a full listener
	// after a while, and a lost confirm would leave its message unsettled.
	confirms := m.dst.NotifyPublish(make(chan amqp.Confirmation, moveWindow*2))
	returns := m.dst.NotifyReturn(make(chan amqp.Return, moveWindow*2))
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
	last := time.Now()
	var settleBy <-chan time.Time
	stop := func() {
		if p.consuming {
			p.consuming = false
			settleBy = time.After(settleWait)
		}
	}
	readReturn := func(r amqp.Return, ok bool) {
		if !ok {
			returns = nil // closed with its channel
			return
		}
		if id, ok := r.Headers[HeaderMoveID].(string); ok {
			p.returned[id] = true
		}
	}
	drainReturns := func() {
		for returns != nil {
			select {
			case r, ok := <-returns:
				readReturn(r, ok)
			default:
				return
			}
		}
	}

	for p.consuming || len(p.inflight) > 0 {
		var in <-chan amqp.Delivery
		if p.consuming && !p.blocked && len(p.inflight) < moveWindow {
			in = deliveries
		}
		select {
		case d, ok := <-in:
			if !ok {
				p.fail(fmt.Errorf("move from %s: the broker closed the source channel", m.req.From))
				stop()
				continue
			}
			last = time.Now()
			if err := p.take(ctx, &d); err != nil {
				p.fail(err)
				stop()
				continue
			}
			if p.done() {
				stop()
			}
		case c, ok := <-confirms:
			if !ok {
				confirms = nil
				continue
			}
			last = time.Now() // a full window waits on confirms, not deliveries
			// A return always comes before the confirm of the same message.
			drainReturns()
			p.settle(c)
			if len(p.okTags) >= ackBatch || len(p.inflight) == 0 {
				if err := p.flushAcks(); err != nil {
					p.fail(err)
					stop()
				}
			}
		case r, ok := <-returns:
			readReturn(r, ok)
		case b, ok := <-blocked:
			if !ok {
				blocked = nil
				continue
			}
			p.blocked = b.Active
			last = time.Now()
			if b.Active {
				m.rep.Notes = append(m.rep.Notes, "the broker blocked publishing for a while ("+b.Reason+")")
			}
		case <-idle.C:
			if time.Since(last) < moveIdle || p.blocked {
				continue
			}
			if p.consuming && p.held >= m.prefetch-moveWindow {
				m.rep.Notes = append(m.rep.Notes, fmt.Sprintf("stopped after holding back %d message(s) it could not move (ladder's limit is %d at a time): run the move again for the rest", p.held, heldBudget))
			}
			stop()
		case <-settleBy:
			p.fail(fmt.Errorf("move from %s: %d confirms did not arrive in %v", m.req.From, len(p.inflight), settleWait))
			// A late confirm means the target has it, while the source
			// keeps it too.
			m.rep.DuplicatesPossible = true
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
					drainReturns()
					p.settle(c)
				}
				confirms = nil
			}
			if err := p.flushAcks(); err != nil {
				p.fail(err)
			}
			p.fail(m.lost(e, len(p.inflight), "target"))
			p.inflight = map[uint64]pending{}
			p.consuming = false
		case e, ok := <-srcClosed:
			if !ok {
				srcClosed = nil
				continue
			}
			// No ack can reach the source now: every published message is
			// back in it and may also be in the target.
			p.fail(m.lost(e, len(p.inflight)+len(p.okTags), "source"))
			p.inflight, p.okTags = map[uint64]pending{}, nil
			p.consuming = false
		case <-ctx.Done():
			if p.consuming {
				p.fail(fmt.Errorf("move from %s: %w", m.req.From, ctx.Err()))
				stop()
				// Stop deliveries; in-flight confirms still settle.
				_ = m.src.Cancel("ladder-move-"+m.run, false)
			}
			ctx = context.Background()
		}
	}
	if err := p.flushAcks(); err != nil {
		p.fail(err)
	}
	m.renewWaitQueues()
	m.report()
	failure := p.failure
	if failure == nil && m.rep.Moved < m.rep.Requested {
		failure = fmt.Errorf("move from %s: moved %d of %d (%d returned, %d failed, %d skipped)",
			m.req.From, m.rep.Moved, m.rep.Requested, m.rep.Returned, m.rep.Failed, m.rep.Skipped)
	}
	if m.rep.Via == string(retry.ActionDelayedExchange) {
		m.rep.Notes = append(m.rep.Notes, "published to a delayed-message exchange without mandatory (it returns every mandatory message): a message unroutable after its delay is dropped by the plugin")
	}
	if m.rep.Returned > 0 {
		m.rep.Notes = append(m.rep.Notes, fmt.Sprintf("%d message(s) were returned as unroutable and stay in %s", m.rep.Returned, m.req.From))
	}
	// Once consuming began, any failure may leave messages behind.
	if failure != nil && !errors.Is(failure, ErrPartial) {
		failure = fmt.Errorf("%w: %w", failure, ErrPartial)
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
	held     int                // deliveries kept unacked until the end
	// okTags are confirmed source tags not yet acked; acked in batches with
	// multiple=true while no held message lies below them.
	okTags    []uint64
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
	skip := func(note string) error {
		p.hold(d.DeliveryTag)
		m.rep.Skipped++
		m.rep.Planned = append(m.rep.Planned, PlannedMove{Position: pos, MessageID: d.MessageId, Note: note})
		m.report()
		return m.checkDeliveryLimit(d)
	}
	if want, ok := m.expectedID(pos); ok && want != d.MessageId {
		return skip(fmt.Sprintf("expected message %q at position %d, found %q: the queue changed since it was browsed", want, pos, d.MessageId))
	}
	pub, rt, err := m.publishing(d, pos)
	if err != nil {
		return skip(err.Error())
	}
	if rt.Kind == retry.ActionDelayQueue {
		if err := m.ensureWaitQueue(rt); err != nil {
			return skip(err.Error())
		}
	}
	if err := m.dst.PublishWithContext(ctx, rt.Exchange, rt.RoutingKey, rt.Mandatory, false, pub); err != nil {
		p.hold(d.DeliveryTag)
		return fmt.Errorf("move from %s: publish: %w", m.req.From, err)
	}
	p.seq++
	p.inflight[p.seq] = pending{srcTag: d.DeliveryTag, id: pub.Headers[HeaderMoveID].(string)}
	return nil
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
	if err != nil {
		// Confirmed at the target, still in the source.
		m.rep.DuplicatesPossible = true
		m.rep.Failed += len(p.okTags) - acked
		p.okTags = p.okTags[:0]
		return fmt.Errorf("move from %s: ack source: %w", m.req.From, err)
	}
	p.okTags = p.okTags[:0]
	m.report()
	return nil
}

// lost accounts for a channel the broker closed mid-move: unconfirmed
// messages are still in the source; one may have reached the target too.
func (m *mover) lost(e *amqp.Error, unsettled int, which string) error {
	if unsettled > 0 {
		m.rep.DuplicatesPossible = true
		m.rep.Failed += unsettled
	}
	m.rep.Notes = append(m.rep.Notes, fmt.Sprintf("the broker closed the %s channel: %d unsettled message(s) are still in %s and may also have reached the target", which, unsettled, m.req.From))
	if e == nil {
		return fmt.Errorf("move from %s: %s channel closed: %w", m.req.From, which, ErrPartial)
	}
	return fmt.Errorf("move from %s: %s channel closed: %s: %w", m.req.From, which, e.Reason, ErrPartial)
}

func (m *mover) report() {
	if m.progress == nil {
		return
	}
	r := m.rep
	m.progress(MoveProgress{
		Total: r.Requested, Done: r.Moved + r.Failed + r.Returned + r.Skipped,
		Moved: r.Moved, Failed: r.Failed, Elapsed: time.Since(m.start),
	})
}

// waitRenew is how often a per-delay wait queue in use is declared again:
// a declare counts as use, so its x-expires (at least a minute) never runs
// out while messages are still being put in.
const waitRenew = 10 * time.Second

// ensureWaitQueue declares a per-delay wait queue when first used and again
// every waitRenew. A queue of that name with other arguments refuses the
// declare (on a throwaway channel): its messages are skipped.
func (m *mover) ensureWaitQueue(rt retry.ReplayRoute) error {
	if at, ok := m.waitDeclared[rt.Queue]; ok && time.Since(at) < waitRenew {
		return nil
	}
	if err := m.declareWaitQueue(rt.Queue, rt.QueueArgs); err != nil {
		return err
	}
	m.waitDeclared[rt.Queue], m.waitArgs[rt.Queue] = time.Now(), rt.QueueArgs
	return nil
}

// renewWaitQueues declares every wait queue once more when the move ends,
// so each expires only a minute after its last message could have left.
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
		return fmt.Errorf("declare wait queue %s (a queue of that name with other arguments exists?): %w", name, err)
	}
	return nil
}

// checkDeliveryLimit stops a move on a quorum queue before the messages it
// holds back (each returned at the end counts a delivery) reach the limit.
func (m *mover) checkDeliveryLimit(d *amqp.Delivery) error {
	if m.deliveryLimit <= 0 {
		return nil
	}
	if n, ok := headerInt(d.Headers["x-delivery-count"]); ok && n >= m.deliveryLimit-deliveryLimitMargin {
		return fmt.Errorf("move from %s: message %q has been delivered %d times (delivery limit %d); returning it once more may dead-letter it: stopping here",
			m.req.From, d.MessageId, n, m.deliveryLimit)
	}
	return nil
}

// expectedID is the message id the request expects at a queue position.
func (m *mover) expectedID(pos int) (string, bool) {
	for i, p := range m.req.Positions {
		if p == pos && i < len(m.req.PositionIDs) && m.req.PositionIDs[i] != "" {
			return m.req.PositionIDs[i], true
		}
	}
	return "", false
}

// publishing builds the message to publish: every property and header
// kept with its type, plus ladder's headers.
func (m *mover) publishing(d *amqp.Delivery, pos int) (amqp.Publishing, retry.ReplayRoute, error) {
	// The engine's view of the headers is needed only for origin targets,
	// headers-routed targets and resets; converting is skipped otherwise.
	var h retry.Headers
	if m.req.To.Kind == TargetOrigin || m.req.ResetRetries || m.usesHeaders(m.req.To.Name) {
		h = fromTable(d.Headers)
	}
	ex, key, err := m.req.To.destination(d, h, m.mains)
	if err != nil {
		return amqp.Publishing{}, retry.ReplayRoute{}, err
	}
	rt, err := m.route(ex, key, h)
	if err != nil {
		return amqp.Publishing{}, rt, err
	}
	headers := amqp.Table{}
	if m.req.ResetRetries {
		headers = toTable(retry.ResetCount(h, retry.ReadState(h, m.deathQueues())))
	} else {
		for k, v := range d.Headers {
			headers[k] = v
		}
	}
	headers[HeaderMovedFrom] = m.req.From
	headers[HeaderMoveID] = m.run + "/" + strconv.Itoa(pos)
	if rt.Kind == retry.ActionDelayedExchange {
		headers["x-delay"] = rt.XDelay
	}
	expiration := d.Expiration
	if rt.Kind != retry.ActionDirect && expiration != "" {
		// A per-message TTL would cut the wait short (a queue expires a
		// message at the smaller of its own and the message's TTL): keep
		// the value in a header instead.
		headers[HeaderOriginalExpiration] = expiration
		expiration = ""
	}
	p := amqp.Publishing{
		Headers: headers, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
		DeliveryMode: d.DeliveryMode, Priority: d.Priority, CorrelationId: d.CorrelationId,
		ReplyTo: d.ReplyTo, Expiration: expiration, MessageId: d.MessageId, Timestamp: d.Timestamp,
		Type: d.Type, AppId: d.AppId, Body: d.Body,
	}
	// The broker refuses a user-id that is not the publishing user's.
	if d.UserId == m.l.r.amqpUser() {
		p.UserId = d.UserId
	}
	return p, rt, nil
}

func (m *mover) deathQueues() map[string]bool {
	if l, ok := LadderOf(m.ladders, m.req.From); ok {
		return retry.DeathQueues(&l)
	}
	return map[string]bool{m.req.From: true}
}
