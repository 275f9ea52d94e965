package rabbit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Peek defaults.
const (
	// peekAssemble is the wait after a large delivery's bytes stopped
	// arriving and before it was handed over.
	peekAssemble = 3 * time.Second
	// heartbeatFrame: bytes that arrive as a heartbeat are not a delivery.
	heartbeatFrame = 8
	// peekStall is how long a browse waits without a delivery while the
	// queue says messages are ready (and it has credit): past it, the
	// broker is taken to prefer another consumer. A busy broker pauses
	// longer than one might think: 3.10 on two busy cores delivered
	// nothing for over 5 s in the middle of a 70,000-message browse.
	peekStall = 20 * time.Second
	// peekStallSAC is peekStall on a queue with a single active consumer,
	// where another consumer being preferred is the likely reason.
	peekStallSAC = 5 * time.Second
	// deliveryLimitMargin: a quorum message this close to its delivery limit
	// stops a move or a drain (each return counts as a delivery).
	deliveryLimitMargin = 2
)

// peekIdle is how long a peek waits for one more delivery once the
// broker has stopped sending: fewer ready messages than asked for (a
// variable: tests shorten it).
var peekIdle = 300 * time.Millisecond

// browseStarve, when a test sets it, is called with the count read before
// each wait of a browse for what comes next: it pauses the browse as a
// starved process is paused, its timers running on.
var browseStarve func(read int)

// peekQueue browses q on its own channel (see collect), then closes it,
// which returns every unacked message to the queue in its order, within a
// bound (see browseChannels.close). Streams are read by offset.
// deathQueues are the queues whose x-death counts are this queue's retries;
// mains the vhost's ladder main queues (where "origin" leads).
func peekQueue(ctx context.Context, conn *amqp.Connection, q topology.Queue, brokerVersion string, opt broker.PeekOptions, dec *decode.Decoder) (*broker.PeekResult, error) {
	if opt.Limit <= 0 {
		opt.Limit = broker.DefaultPeekLimit
	}
	if opt.BodyPreview <= 0 {
		opt.BodyPreview = broker.DefaultBodyPreview
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, AMQPFailure(conn, "peek "+q.Name, err, nil)
	}
	res := &broker.PeekResult{Queue: q.Name, Type: q.Type, Total: q.Messages, Ready: q.Ready, Messages: []broker.Message{}, PeekedAt: time.Now()}
	res.SideEffects = broker.PeekSideEffectsVia(broker.ConsumeMode(q), q.Type, brokerVersion)
	// Ready messages are all a consumer can see, and those ready now are all
	// a peek reads: not what arrives while it reads. A stream is read from
	// its first offset.
	want := opt.Limit
	if q.Type != topology.QueueStream && q.Ready < int64(want) {
		want = int(q.Ready)
	}
	run := broker.NewBrowseRun(res, opt, want)
	bc := &browseChannels{conn: conn, main: ch}
	err = collect(ctx, bc, q, brokerVersion, opt, run, dec)
	// Closing the channel is what returns the messages: always do it.
	forced := bc.close(browseCloseBound)
	if err == nil && res.Incomplete == "" && !forced {
		// A connection that died under the peek (a stall ends so: silence,
		// then a missed heartbeat) may have cut it short.
		err = amqpLost(connAddr(conn), "peek "+q.Name, connClosed(conn))
	}
	// A delivery the client could not parse ends the connection: however
	// the read learnt it (the delivery stream's close, a consumer it could
	// not open, the connection's reason after; a busy machine orders them
	// differently), it is a stop at that message, said, not a failure.
	if errors.Is(err, broker.ErrUnparsable) && stopUnreadable(run, err) {
		err = nil
	}
	run.Finish()
	if err != nil {
		return nil, err
	}
	if run.Read() == 0 && !slices.Contains(res.SideEffects, res.Incomplete) {
		// Nothing was delivered, nothing changed (but a message the client
		// could not read was delivered, and returned: its note says so).
		res.SideEffects = []string{}
	}
	if forced {
		res.SideEffects = append(res.SideEffects, fmt.Sprintf(
			"the broker did not confirm closing ladder's channel within %s: ladder dropped its connection, so the broker returned every browsed message at once", browseCloseBound))
	}
	// Quorum queues apply returns asynchronously: a count taken now would
	// mistake returns in flight for released messages.
	if q.Type == topology.QueueClassic && !forced {
		noteReleased(conn, q, res)
	} else if q.Type != topology.QueueStream {
		broker.NoteLeft(res, q, broker.OthersSeen{ConsumersBefore: q.Consumers, Unacked: q.Unacked}, 0, time.Now())
	}
	broker.NoteDeadLettered(res, q, brokerVersion)
	return finishPeek(res, q), nil
}

// returnsBound bounds noteReleased's wait for the returns of what a peek
// read, asked every returnsPoll.
const (
	returnsBound = 2 * time.Second
	returnsPoll  = 50 * time.Millisecond
)

// noteReleased counts messages that left during the peek. Only the head of
// a queue expires, so a message whose TTL ran out behind a longer-lived one
// waits — until a consumer (this peek) takes the one ahead: then it is
// dead-lettered or dropped at once. Other consumers take some too: the
// queue's consumers before the read (q.Consumers, exact) and after it
// (ladder's own channel closed) say whether anyone else was reading, and
// broker.NoteLeft words it accordingly.
func noteReleased(conn *amqp.Connection, q topology.Queue, res *broker.PeekResult) {
	others := broker.OthersSeen{ConsumersBefore: q.Consumers, Unacked: q.Unacked}
	after, consumers, err := passiveState(conn, q.Name)
	// What ladder read it gave back: fewer ready than that is returns the
	// queue has not applied yet (seen on a busy machine: 0 ready right
	// after the channel closed, 2 returns taken for 2 more released), or
	// another consumer taking them. Asked again, within a bound.
	for deadline := time.Now().Add(returnsBound); err == nil && after < res.Read() && time.Now().Before(deadline); {
		time.Sleep(returnsPoll)
		after, consumers, err = passiveState(conn, q.Name)
	}
	if err != nil {
		broker.NoteLeft(res, q, others, 0, time.Now())
		return
	}
	others.ConsumersAfter = consumers
	broker.NoteLeft(res, q, others, q.Ready-int64(after), time.Now())
}

// collect reads up to run.Want() messages on bc.main without acking them
// (see consumerChain), in queue order. It ends when it has them all; when
// the queue has nothing more ready for it (see probeSchedule: what arrives
// after that arrived during the read, and is not read); when no delivery
// comes for a while; at the deadline; or at a message the AMQP client
// cannot read.
func collect(ctx context.Context, bc *browseChannels, q topology.Queue, brokerVersion string, opt broker.PeekOptions, run *broker.BrowseRun, dec *decode.Decoder) error {
	if run.Done() {
		return nil
	}
	chain := &consumerChain{ch: bc.main, queue: q.Name, stream: q.Type == topology.QueueStream}
	if chain.stream {
		chain.args = amqp.Table{"x-stream-offset": "first"}
	}
	// A frame the AMQP client cannot read ends the whole connection: its
	// reason says why (see unreadable).
	closed := bc.main.NotifyClose(make(chan *amqp.Error, 1))
	idle := time.NewTimer(firstDelivery)
	defer idle.Stop()
	// A stream has no ready count to ask: it never probes.
	probe := newProbeSchedule(!chain.stream)
	defer probe.stop()
	lastRead, assembling := bc.received(), false
	// caughtUp: the queue had nothing ready left (see below).
	var caughtUp time.Time
	var settleRead int64
	lastDelivery := time.Now() // or the last consumer's start
	fence := q.Type == topology.QueueClassic
	// catchUp: this consumer has credit, yet nothing is ready: every
	// message the queue held when the read began has been sent or has
	// left, and whatever comes now arrived since. stop: the read ends
	// there (the AMQP client gave up on a delivery).
	catchUp := func() (stop bool, err error) {
		caughtUp, settleRead = time.Now(), bc.received()
		if !fence {
			// What is on its way comes within moments, from the queue's
			// process as much as the cancel's answer would: take it.
			probe.settle()
			return false, nil
		}
		// A classic queue sends its deliveries and its answer to a
		// cancel the same way, in order: once the cancel is confirmed
		// every delivery sent before is in the client (the channel
		// closes when they are read), and nothing later comes.
		probe.stop()
		if err := chain.ch.Cancel(chain.tag, false); err != nil {
			if stopUnreadable(run, err) {
				return true, nil
			}
			return true, fmt.Errorf("peek %s: cancel consumer: %w", q.Name, err)
		}
		return false, nil
	}
	for !run.Done() {
		if chain.due == 0 {
			if !caughtUp.IsZero() {
				return nil // another consumer would only get what arrived since
			}
			if err := chain.open(run.Left()); err != nil {
				if stopUnreadable(run, err) {
					return nil
				}
				return AMQPFailure(bc.conn, "peek "+q.Name, err, nil)
			}
			idle.Reset(firstDelivery)
			probe.opened()
			lastDelivery = time.Now()
			lastRead = bc.received() // the answers to qos and consume are in
		}
		if browseStarve != nil {
			browseStarve(run.Read())
		}
		select {
		case d, ok := <-chain.deliveries:
			if !ok {
				if !caughtUp.IsZero() && fence {
					return nil // cancelled: every delivery sent before is in
				}
				if ctx.Err() != nil {
					return fmt.Errorf("peek %s: %w", q.Name, ctx.Err())
				}
				var why *amqp.Error
				select {
				case why = <-closed:
				case <-time.After(time.Second):
				}
				if stopUnreadable(run, why) {
					return nil
				}
				if why != nil {
					return amqpLost(connAddr(bc.conn), "peek "+q.Name, why)
				}
				return fmt.Errorf("peek %s: the broker closed the channel", q.Name)
			}
			if err := chain.got(&d); err != nil {
				return fmt.Errorf("peek %s: %w", q.Name, err)
			}
			if err := run.Take(decodeDelivery(&d, run.Read(), opt.BodyPreview, dec)); err != nil {
				if errors.Is(err, broker.ErrStopBrowse) {
					return nil
				}
				return err
			}
			idle.Reset(peekIdle)
			lastDelivery = time.Now()
			switch {
			case caughtUp.IsZero():
				probe.delivered()
			case fence:
				// Reading what came before the cancel's answer.
			case time.Since(caughtUp) >= settleMost:
				return nil
			default:
				settleRead = bc.received()
				probe.settle()
			}
		case <-probe.c():
			run.Tick()
			if !caughtUp.IsZero() {
				if n := bc.received(); n-settleRead > heartbeatFrame {
					settleRead = n // a large delivery still arriving
					probe.settle()
					continue
				}
				return nil // settled: what was on its way is in
			}
			ready, err := bc.depth(q.Name)
			if err != nil || ready > 0 {
				probe.asked(err == nil)
				continue
			}
			if stop, err := catchUp(); stop || err != nil {
				return err
			}
		case <-idle.C:
			run.Tick()
			if !caughtUp.IsZero() && fence {
				// Cancelled, the cancel confirmed: what the queue sent
				// before it waits in the client's buffer, and the
				// deliveries end once it is read. Nothing is awaited from
				// the broker: a pause here is this process's own (starved
				// of CPU, its timers ran on), not the queue's end.
				idle.Reset(peekIdle)
				continue
			}
			// A delivery still arriving (a body of many megabytes) is
			// not the end of the queue: wait while bytes come in.
			if n := bc.received(); n >= 0 && n-lastRead > heartbeatFrame {
				lastRead, assembling = n, true
				idle.Reset(peekIdle)
				continue
			}
			if assembling {
				// The bytes are in; the client may still be putting the
				// delivery together (a slow machine, -race): once more.
				assembling = false
				idle.Reset(peekAssemble)
				continue
			}
			if !chain.stream && caughtUp.IsZero() {
				ready, err := bc.depth(q.Name)
				if err == nil && ready == 0 && fence {
					// Nothing ready is not the end of the read: the queue
					// may have sent this consumer all it holds, and the
					// deliveries wait unread in the client's buffer (a
					// process starved of CPU reads them late; the bytes
					// came in long ago). The cancel says where they end.
					if stop, err := catchUp(); stop || err != nil {
						return err
					}
					idle.Reset(peekIdle)
					continue
				}
				if err == nil && ready > 0 {
					// Messages wait and this consumer has credit: a busy
					// broker (returning another read's messages, say)
					// delivers them in a while; one that prefers another
					// consumer never does.
					stall := peekStall
					if sac, _ := q.Arguments["x-single-active-consumer"].(bool); sac {
						stall = peekStallSAC
					}
					if time.Since(lastDelivery) < stall {
						idle.Reset(peekIdle)
						continue
					}
					run.Stop(fmt.Sprintf("the broker delivered nothing for %s after %s with %d still ready (another consumer is preferred: single active consumer, or a consumer priority?)",
						stall, topology.Plural(run.Read(), "message", "messages"), ready))
				}
			}
			return nil
		case <-run.Deadline():
			run.TimedOut()
			return nil
		case <-ctx.Done():
			return fmt.Errorf("peek %s: %w", q.Name, ctx.Err())
		}
	}
	return nil
}

// unreadable says, for the close reason of a peek's channel, whether the
// AMQP client itself gave up on a delivery it could not parse: amqp091-go
// refuses a field table nested more than 32 deep or holding more than 8192
// fields (RabbitMQ accepts both) and drops the connection. The note counts
// the messages read before; deliveries already parsed but not yet handed
// to the peek are lost with the connection, so the unreadable one may come
// later than that.
func unreadable(why *amqp.Error, pos int) (string, bool) {
	if !clientCouldNotParse(why) {
		return "", false
	}
	return fmt.Sprintf("stopped after %s: the AMQP client could not read the next (%s: %s); the connection was dropped and every browsed message returned to the queue", topology.Plural(pos, "message", "messages"), why.Reason, unparsedHint), true
}

// stopUnreadable ends the browse run where the AMQP client gave up on a
// delivery it could not parse (err, or the channel's close reason, says
// so), whichever step met it: the delivery loop, or a cancel or a next
// consumer that found the connection gone. The messages read so far are
// good; the rest, that one among them, went back to the queue with the
// connection.
func stopUnreadable(run *broker.BrowseRun, err error) bool {
	var why *amqp.Error
	if !errors.As(err, &why) {
		return false
	}
	note, ok := unreadable(why, run.Read())
	if ok {
		run.Stop(note)
		run.Result().SideEffects = append(run.Result().SideEffects, note)
	}
	return ok
}

// clientCouldNotParse says whether a channel's close reason is the AMQP
// client's own refusal of a frame it could not parse, not the broker's.
func clientCouldNotParse(why *amqp.Error) bool { return parseFailure(why) }

// unparsedHint is what may make a delivery unreadable to amqp091-go.
const unparsedHint = "headers nested more than 32 deep, or a table of more than 8192 fields?"

// decodeDelivery turns a delivery into a Message. Only a bounded prefix of
// the body is copied.
func decodeDelivery(d *amqp.Delivery, pos, preview int, dec *decode.Decoder) broker.Message {
	m := broker.Message{
		Position:    pos,
		Exchange:    d.Exchange,
		RoutingKey:  d.RoutingKey,
		Redelivered: d.Redelivered,
		Properties:  propertiesOf(d),
		Headers:     fromTable(d.Headers),
	}
	dec.Decode(&m, d.Body, preview)
	return m
}

func propertiesOf(d *amqp.Delivery) broker.Properties {
	p := broker.Properties{
		MessageID: d.MessageId, Expiration: d.Expiration, ContentType: d.ContentType,
		ContentEncoding: d.ContentEncoding, DeliveryMode: d.DeliveryMode, Priority: d.Priority,
		CorrelationID: d.CorrelationId, ReplyTo: d.ReplyTo, Type: d.Type, UserID: d.UserId, AppID: d.AppId,
	}
	switch t := d.Timestamp; {
	case t.IsZero():
	case t.Year() > 9999 || t.Year() < 0:
		// RFC 3339 has four-digit years: encoding/json refuses the time
		// and with it the whole peek.
		p.TimestampRaw = t.Unix()
	default:
		p.Timestamp = &t
	}
	return p
}

func finishPeek(res *broker.PeekResult, q topology.Queue) *broker.PeekResult {
	decode.AnnotateHoL(res, topology.EffectiveSettings(&q), time.Now())
	broker.NotePartial(res)
	return res
}
