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
)

// Move tuning.
const (
	// moveWindow is how many publishes may await their confirm at once:
	// pipelining, not one round trip per message.
	moveWindow = 512
	// moveIdle ends a move when the source stops delivering (other consumers
	// took the rest, or fewer messages than counted).
	moveIdle = 2 * time.Second
	// settleWait bounds the wait for outstanding confirms after a cancel.
	settleWait  = 30 * time.Second
	maxPrefetch = 65535
	// ackBatch confirmed messages are acked in the source with one frame.
	ackBatch = 128
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

	snap      retry.Vhost
	router    *retry.Router
	ladders   []retry.Ladder
	routes    map[string]retry.ReplayRoute // exchange\x00key → route
	routeErrs map[string]error
	declared  map[string]bool // per-delay wait queues declared in this move
	mains     map[string]bool // ladder main queues: where "origin" leads

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
		routes: map[string]retry.ReplayRoute{}, routeErrs: map[string]error{}, declared: map[string]bool{},
		progress: progress, start: time.Now(), run: runID(),
	}
	m.mains = retry.MainQueues(m.ladders)
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
// planned once per destination by the retry engine.
func (m *mover) route(exchange, key string) (retry.ReplayRoute, error) {
	k := exchange + "\x00" + key
	if rt, ok := m.routes[k]; ok {
		return rt, nil
	}
	if err, ok := m.routeErrs[k]; ok {
		return retry.ReplayRoute{}, err
	}
	if exchange != "" && !m.router.Route(exchange, "", nil).ExchangeExists {
		err := fmt.Errorf("exchange %q does not exist", exchange)
		m.routeErrs[k] = err
		return retry.ReplayRoute{}, err
	}
	rt, err := retry.PlanReplay(m.router, m.ladders, exchange, key, m.req.Delay)
	if err != nil {
		m.routeErrs[k] = err
		return rt, err
	}
	m.routes[k] = rt
	if m.rep.Via == "" || m.rep.Via == string(rt.Kind) {
		m.rep.Via = string(rt.Kind)
	} else {
		m.rep.Via = "mixed"
	}
	return rt, nil
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
			rt, err = m.route(ex, key)
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
	confirms := m.dst.NotifyPublish(make(chan amqp.Confirmation, moveWindow*2))
	returns := m.dst.NotifyReturn(make(chan amqp.Return, moveWindow*2))
	dstClosed := m.dst.NotifyClose(make(chan *amqp.Error, 1))
	srcClosed := m.src.NotifyClose(make(chan *amqp.Error, 1))

	// Messages the move skips or that fail stay unacked until the end, so
	// the prefetch must leave room for them beside the window.
	look := m.rep.Requested
	if last := m.lastPosition(); last >= 0 {
		look = last + 1
	}
	prefetch := min(maxPrefetch, max(moveWindow, look))
	if err := m.src.Qos(prefetch, 0, false); err != nil {
		return fmt.Errorf("move from %s: qos: %w", m.req.From, err)
	}
	// Not ctx: cancelling must stop deliveries, not close them under us.
	deliveries, err := m.src.ConsumeWithContext(context.Background(), m.req.From, "ladder-move-"+m.run, false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("move from %s: consume: %w", m.req.From, err)
	}

	inflight := map[uint64]pending{}
	returned := map[string]bool{}
	var seq uint64 // publish sequence on the confirm channel, from 1
	pos, taken := 0, 0
	consuming := true
	idle := time.NewTimer(moveIdle)
	defer idle.Stop()
	var settleBy <-chan time.Time
	var failure error

	// Confirmed source tags not yet acked; acked in batches with
	// multiple=true while no held message lies below them.
	var okTags []uint64
	heldMin := uint64(math.MaxUint64)
	hold := func(tag uint64) { heldMin = min(heldMin, tag) }
	flushAcks := func() error {
		if len(okTags) == 0 {
			return nil
		}
		var err error
		if last := okTags[len(okTags)-1]; last < heldMin {
			err = m.src.Ack(last, true)
		} else {
			for _, t := range okTags {
				if err = m.src.Ack(t, false); err != nil {
					break
				}
			}
		}
		if err != nil {
			// Confirmed at the target, still in the source.
			m.rep.DuplicatesPossible = true
			m.rep.Failed += len(okTags)
			okTags = okTags[:0]
			return fmt.Errorf("move from %s: ack source: %w", m.req.From, err)
		}
		m.rep.Moved += len(okTags)
		okTags = okTags[:0]
		m.report()
		return nil
	}
	drainReturns := func() {
		for {
			select {
			case r := <-returns:
				if id, ok := r.Headers[HeaderMoveID].(string); ok {
					returned[id] = true
				}
			default:
				return
			}
		}
	}
	stop := func() {
		if consuming {
			consuming = false
			settleBy = time.After(settleWait)
		}
	}
	channelLost := func(e *amqp.Error, which string) {
		failure = m.lost(e, len(inflight)+len(okTags), which)
		inflight, okTags = map[uint64]pending{}, okTags[:0]
		consuming = false
	}

	for consuming || len(inflight) > 0 {
		var in <-chan amqp.Delivery
		if consuming && len(inflight) < moveWindow {
			in = deliveries
		}
		select {
		case d, ok := <-in:
			if !ok {
				failure = fmt.Errorf("move from %s: the broker closed the source channel", m.req.From)
				stop()
				continue
			}
			idle.Reset(moveIdle)
			p := pos
			pos++
			if !m.selected(p) {
				hold(d.DeliveryTag) // returns to the source when the move ends
				m.stopIfDone(p, taken, stop)
				continue
			}
			taken++
			pub, rt, perr := m.publishing(&d, p)
			if perr != nil {
				hold(d.DeliveryTag)
				m.rep.Skipped++
				m.rep.Planned = append(m.rep.Planned, PlannedMove{Position: p, MessageID: d.MessageId, Note: perr.Error()})
			} else {
				if rt.Kind == retry.ActionDelayQueue && !m.declared[rt.Queue] {
					if derr := m.declareWaitQueue(rt); derr != nil {
						hold(d.DeliveryTag)
						failure = derr
						stop()
						continue
					}
				}
				if err := m.dst.PublishWithContext(ctx, rt.Exchange, rt.RoutingKey, rt.Mandatory, false, pub); err != nil {
					hold(d.DeliveryTag)
					failure = fmt.Errorf("move from %s: publish: %w", m.req.From, err)
					stop()
					continue
				}
				seq++
				inflight[seq] = pending{srcTag: d.DeliveryTag, id: pub.Headers[HeaderMoveID].(string)}
			}
			m.stopIfDone(p, taken, stop)
		case c, ok := <-confirms:
			if !ok {
				confirms = nil
				continue
			}
			idle.Reset(moveIdle) // a full window waits on confirms, not deliveries
			// A return always comes before the confirm of the same message.
			drainReturns()
			pd, known := inflight[c.DeliveryTag]
			if !known {
				continue
			}
			delete(inflight, c.DeliveryTag)
			switch {
			case returned[pd.id]:
				delete(returned, pd.id)
				hold(pd.srcTag)
				m.rep.Returned++
				m.report()
			case !c.Ack:
				hold(pd.srcTag)
				m.rep.Failed++
				m.report()
			default:
				okTags = append(okTags, pd.srcTag)
			}
			if len(okTags) >= ackBatch || len(inflight) == 0 {
				if err := flushAcks(); err != nil {
					failure = err
					stop()
				}
			}
		case r := <-returns:
			if id, ok := r.Headers[HeaderMoveID].(string); ok {
				returned[id] = true
			}
		case <-idle.C:
			stop()
		case <-settleBy:
			failure = fmt.Errorf("move from %s: %d confirms did not arrive in %v", m.req.From, len(inflight), settleWait)
			m.rep.Failed += len(inflight)
			inflight = map[uint64]pending{}
		case e := <-dstClosed:
			channelLost(e, "target")
		case e := <-srcClosed:
			channelLost(e, "source")
		case <-ctx.Done():
			if consuming {
				failure = fmt.Errorf("move from %s: %w", m.req.From, ctx.Err())
				stop()
				// Stop deliveries; in-flight confirms still settle.
				_ = m.src.Cancel("ladder-move-"+m.run, false)
			}
			ctx = context.Background()
		}
	}
	if err := flushAcks(); err != nil && failure == nil {
		failure = err
	}
	m.report()
	if failure == nil && m.rep.Moved < m.rep.Requested {
		failure = fmt.Errorf("move from %s: moved %d of %d (%d returned, %d failed, %d skipped): %w",
			m.req.From, m.rep.Moved, m.rep.Requested, m.rep.Returned, m.rep.Failed, m.rep.Skipped, ErrPartial)
	}
	if m.rep.Via == string(retry.ActionDelayedExchange) {
		m.rep.Notes = append(m.rep.Notes, "published to a delayed-message exchange without mandatory (it returns every mandatory message): a message unroutable after its delay is dropped by the plugin")
	}
	if m.rep.Returned > 0 {
		m.rep.Notes = append(m.rep.Notes, fmt.Sprintf("%d message(s) were returned as unroutable and stay in %s", m.rep.Returned, m.req.From))
	}
	return failure
}

// stopIfDone ends consumption after the last message the move needs.
func (m *mover) stopIfDone(pos, taken int, stop func()) {
	if taken >= m.rep.Requested || (m.lastPosition() >= 0 && pos >= m.lastPosition()) {
		stop()
	}
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

// declareWaitQueue declares a per-delay wait queue (idempotent; it renews
// the queue's x-expires). A conflicting existing queue fails the move.
func (m *mover) declareWaitQueue(rt retry.ReplayRoute) error {
	ch, err := m.conn.Channel()
	if err != nil {
		return fmt.Errorf("declare wait queue %s: %w", rt.Queue, err)
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare(rt.Queue, true, false, false, false, toTable(rt.QueueArgs)); err != nil {
		return fmt.Errorf("declare wait queue %s: %w", rt.Queue, err)
	}
	m.declared[rt.Queue] = true
	return nil
}

// publishing builds the message to publish: every property and header
// kept with its type, plus ladder's headers.
func (m *mover) publishing(d *amqp.Delivery, pos int) (amqp.Publishing, retry.ReplayRoute, error) {
	h := fromTable(d.Headers)
	ex, key, err := m.req.To.destination(d, h, m.mains)
	if err != nil {
		return amqp.Publishing{}, retry.ReplayRoute{}, err
	}
	rt, err := m.route(ex, key)
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
	p := amqp.Publishing{
		Headers: headers, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
		DeliveryMode: d.DeliveryMode, Priority: d.Priority, CorrelationId: d.CorrelationId,
		ReplyTo: d.ReplyTo, Expiration: d.Expiration, MessageId: d.MessageId, Timestamp: d.Timestamp,
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
