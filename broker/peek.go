package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/retry"
)

// Peek defaults.
const (
	DefaultPeekLimit   = 100
	DefaultBodyPreview = 4096
	// peekIdle is how long a peek waits for one more delivery once the
	// broker has stopped sending: fewer ready messages than asked for.
	peekIdle = 300 * time.Millisecond
	// peekAssemble is the wait after a large delivery's bytes stopped
	// arriving and before it was handed over.
	peekAssemble = 3 * time.Second
	// deliveryLimitMargin: a quorum message this close to its delivery limit
	// is not peeked without --force (each peek counts as a delivery).
	deliveryLimitMargin = 2
	// defaultDeliveryLimit4 is RabbitMQ 4.0–4.2's default quorum delivery limit.
	defaultDeliveryLimit4 = 20
)

// ErrNearDeliveryLimit refuses a peek that could dead-letter messages.
var ErrNearDeliveryLimit = errors.New("near the delivery limit")

// peekQueue browses q on its own channel: consume with manual ack and a
// prefetch of limit, collect, then close the channel so every unacked
// message returns to the queue in its order. Streams are read by offset.
// deathQueues are the queues whose x-death counts are this queue's retries;
// mains the vhost's ladder main queues (where "origin" leads).
func peekQueue(ctx context.Context, conn *amqp.Connection, q retry.Queue, brokerVersion string, opt PeekOptions, deathQueues, mains map[string]bool) (*PeekResult, error) {
	if opt.Limit <= 0 {
		opt.Limit = DefaultPeekLimit
	}
	if opt.BodyPreview <= 0 {
		opt.BodyPreview = DefaultBodyPreview
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, AMQPFailure(conn, "peek "+q.Name, err, nil)
	}
	res, err := collect(ctx, conn, ch, q, brokerVersion, opt, deathQueues, mains)
	// Closing the channel is what returns the messages: always do it.
	ch.Close()
	if err != nil {
		return nil, err
	}
	if res.Incomplete == "" {
		// A connection that died under the peek (a stall ends so: silence,
		// then a missed heartbeat) may have cut it short.
		if lost := amqpLost(connAddr(conn), "peek "+q.Name, connClosed(conn)); lost != nil {
			return nil, lost
		}
	}
	if len(res.Messages) == 0 && res.Incomplete == "" {
		res.SideEffects = []string{} // nothing was delivered, nothing changed
	}
	// Quorum queues apply returns asynchronously: a count taken now would
	// mistake returns in flight for released messages.
	if q.Type == retry.QueueClassic {
		noteReleased(conn, q, res)
	}
	return finishPeek(res, q), nil
}

// ReleaseRoute says where a queue's expired messages go: its dead-letter
// route, or nowhere.
func ReleaseRoute(q retry.Queue) string {
	t, route := retry.DeadLetterTarget(retry.EffectiveSettings(&q))
	switch {
	case route == retry.DeadLettersDropped:
		return "nowhere (dropped: no dead-letter exchange)"
	case route == retry.DeadLettersOwnKeysDefault:
		return "the default exchange with their own keys"
	case t.Kind == retry.TargetQueue:
		return "queue " + t.Name
	case t.HasKey:
		return "exchange " + t.Name + " with key " + t.RoutingKey
	}
	return "exchange " + t.Name + " with their own keys"
}

// noteReleased counts messages that left during the peek. Only the head of
// a queue expires, so a message whose TTL ran out behind a longer-lived one
// waits — until a consumer (this peek) takes the one ahead: then it is
// dead-lettered or dropped at once. Other consumers may also have taken some.
func noteReleased(conn *amqp.Connection, q retry.Queue, res *PeekResult) {
	after, err := passiveDepth(conn, q.Name)
	if err != nil {
		return
	}
	if gone := q.Ready - int64(after); gone > 0 {
		at := time.Now()
		res.Released, res.ReleasedTo, res.ReleasedAt = gone, ReleaseRoute(q), &at
		res.SideEffects = append(res.SideEffects, fmt.Sprintf(
			"%s the queue during the peek, by %s, to %s: messages whose TTL ran out behind a longer-lived one leave as soon as a consumer uncovers them; other consumers may also have taken some",
			retry.Plural(int(gone), "message left", "messages left"), at.Format("15:04:05"), res.ReleasedTo))
	}
}

// collect consumes up to opt.Limit messages on ch without acking them.
func collect(ctx context.Context, conn *amqp.Connection, ch *amqp.Channel, q retry.Queue, brokerVersion string, opt PeekOptions, deathQueues, mains map[string]bool) (*PeekResult, error) {
	prefetch := opt.Limit
	if prefetch > 65535 {
		prefetch = 65535 // basic.qos prefetch-count is a short
	}
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return nil, AMQPFailure(conn, "peek "+q.Name, err, nil)
	}
	var args amqp.Table
	if q.Type == retry.QueueStream {
		args = amqp.Table{"x-stream-offset": "first"}
	}
	// Ready messages are all a consumer can see; for a stream everything is.
	want := opt.Limit
	if q.Type != retry.QueueStream && q.Ready < int64(want) {
		want = int(q.Ready)
	}
	res := &PeekResult{Queue: q.Name, Type: q.Type, Total: q.Messages, Ready: q.Ready, Messages: []Message{}, PeekedAt: time.Now()}
	res.SideEffects = PeekSideEffects(q.Type, brokerVersion)
	if want == 0 {
		return res, nil
	}
	tag := "ladder-peek"
	// A frame the AMQP client cannot read ends the whole connection: its
	// reason says why (see unreadable).
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	deliveries, err := ch.ConsumeWithContext(ctx, q.Name, tag, false, false, false, false, args)
	if err != nil {
		return nil, AMQPFailure(conn, "peek "+q.Name, err, nil)
	}
	limit, hasLimit := deliveryLimit(q, brokerVersion)
	idle := time.NewTimer(2 * time.Second) // the first delivery may take a moment
	lastRead, assembling := bytesReceived(conn), false
	defer idle.Stop()
	for len(res.Messages) < want {
		select {
		case d, ok := <-deliveries:
			if !ok {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("peek %s: %w", q.Name, ctx.Err())
				}
				var why *amqp.Error
				select {
				case why = <-closed:
				case <-time.After(time.Second):
				}
				if note, ok := unreadable(why, len(res.Messages)); ok {
					// The messages read so far are good; the rest, this one
					// among them, went back to the queue with the connection.
					res.Incomplete = note
					res.SideEffects = append(res.SideEffects, note)
					return res, nil
				}
				if why != nil {
					return nil, amqpLost(connAddr(conn), "peek "+q.Name, why)
				}
				return nil, fmt.Errorf("peek %s: the broker closed the channel", q.Name)
			}
			if hasLimit && !opt.Force {
				if n, ok := headerInt(d.Headers["x-delivery-count"]); ok && n >= limit-deliveryLimitMargin {
					return nil, fmt.Errorf("peek %s: message %d has been delivered %d times, delivery limit %d: another peek may dead-letter it (this check itself counted once); use --force to peek anyway: %w",
						q.Name, len(res.Messages), n, limit, ErrNearDeliveryLimit)
				}
			}
			res.Messages = append(res.Messages, decodeDelivery(&d, len(res.Messages), opt.BodyPreview, deathQueues, mains))
			idle.Reset(peekIdle)
		case <-idle.C:
			// A delivery still arriving (a body of many megabytes) is
			// not the end of the queue: wait while bytes come in.
			if n := bytesReceived(conn); n >= 0 && n != lastRead {
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
			return res, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("peek %s: %w", q.Name, ctx.Err())
		}
	}
	return res, nil
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
	return fmt.Sprintf("stopped after %s: the AMQP client could not read the next (%s: %s); the connection was dropped and every browsed message returned to the queue", retry.Plural(pos, "message", "messages"), why.Reason, unparsedHint), true
}

// clientCouldNotParse says whether a channel's close reason is the AMQP
// client's own refusal of a frame it could not parse, not the broker's.
func clientCouldNotParse(why *amqp.Error) bool { return parseFailure(why) }

// unparsedHint is what may make a delivery unreadable to amqp091-go.
const unparsedHint = "headers nested more than 32 deep, or a table of more than 8192 fields?"

func finishPeek(res *PeekResult, q retry.Queue) *PeekResult {
	AnnotateHoL(res, retry.EffectiveSettings(&q), time.Now())
	return res
}

// PeekSideEffects says what browsing a queue of this type costs on a broker
// of this version (the demo simulation says the same). Seen here: a peek
// returns messages by closing its channel, which raises x-delivery-count on
// 3.10, 4.0 and 4.3 (and x-acquired-count on 4.3); from 4.0 a quorum queue
// has a delivery limit of 20 unless set.
func PeekSideEffects(queueType, brokerVersion string) []string {
	switch queueType {
	case retry.QueueStream:
		return []string{}
	case retry.QueueQuorum:
		count := "quorum queue: each peek increments x-delivery-count, which counts toward the queue's delivery limit if it has one"
		switch v := brokerVersion; {
		case retry.VersionAtLeast(v, 4, 3):
			count = "quorum queue: each peek increments x-delivery-count and x-acquired-count; the delivery count counts toward the delivery limit (20 unless set)"
		case retry.VersionAtLeast(v, 4, 0):
			count = "quorum queue: each peek increments x-delivery-count, which counts toward the delivery limit (20 unless set)"
		}
		return []string{
			"messages were delivered to ladder and returned: their redelivered flag is now set",
			count,
			"while ladder held them, these messages were invisible to other consumers",
		}
	default:
		return []string{
			"messages were delivered to ladder and returned: their redelivered flag is now set",
			"while ladder held them, these messages were invisible to other consumers",
		}
	}
}

// PeekCost is what a peek of a queue would cost, known before it runs (the
// terminal UI asks first when it matters), by the rules PeekSideEffects and
// the delivery-limit guard follow.
type PeekCost struct {
	// Consumers would not see the peeked messages while ladder holds them;
	// ConsumersUnknown: the broker did not say, so there may be some.
	Consumers        int
	ConsumersUnknown bool
	// Redelivered: every peeked message comes back with redelivered set
	// (all but streams, which are read by offset).
	Redelivered bool
	// Limited: a quorum queue whose requeue counts toward DeliveryLimit;
	// DefaultLimit when that limit is the broker's default (none set).
	Limited       bool
	DeliveryLimit int64
	DefaultLimit  bool
}

// PeekCostOf is the cost of peeking q on a broker of brokerVersion. A
// stream costs nothing: it is read by offset, hidden from no one.
func PeekCostOf(q retry.Queue, brokerVersion string) PeekCost {
	if q.Type == retry.QueueStream {
		return PeekCost{}
	}
	c := PeekCost{Consumers: q.Consumers, ConsumersUnknown: q.ConsumersUnknown, Redelivered: true}
	if limit, ok := deliveryLimit(q, brokerVersion); ok {
		c.Limited, c.DeliveryLimit = true, limit
		c.DefaultLimit = !retry.EffectiveSettings(&q).HasDeliveryLimit
	}
	return c
}

// Felt says whether someone else pays for the peek: consumers that lose
// sight of the messages (or may: unknown), or a delivery limit it counts
// toward. A peek of an unconsumed queue without a limit only sets the
// redelivered flag.
func (c PeekCost) Felt() bool {
	return c.Consumers > 0 || c.ConsumersUnknown || c.Limited
}

// deliveryLimit is the quorum queue's effective limit; RabbitMQ 4.0–4.2
// apply 20 when none is set (4.3 no longer counts returns the same way, but
// a conservative limit is still right for a peek).
func deliveryLimit(q retry.Queue, brokerVersion string) (int64, bool) {
	if q.Type != retry.QueueQuorum {
		return 0, false
	}
	s := retry.EffectiveSettings(&q)
	if s.HasDeliveryLimit {
		return s.DeliveryLimit, s.DeliveryLimit >= 0
	}
	if retry.VersionAtLeast(brokerVersion, 4, 0) {
		return defaultDeliveryLimit4, true
	}
	return 0, false
}

func headerInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int:
		return int64(x), true
	}
	return 0, false
}

// decodeDelivery turns a delivery into a Message. Only a bounded prefix of
// the body is copied.
func decodeDelivery(d *amqp.Delivery, pos, preview int, deathQueues, mains map[string]bool) Message {
	m := Message{
		Position:    pos,
		Exchange:    d.Exchange,
		RoutingKey:  d.RoutingKey,
		Redelivered: d.Redelivered,
		Properties:  propertiesOf(d),
		Headers:     fromTable(d.Headers),
	}
	DecodeMessage(&m, d.Body, preview, deathQueues, mains)
	return m
}

func propertiesOf(d *amqp.Delivery) Properties {
	p := Properties{
		MessageID: d.MessageId, Expiration: d.Expiration, ContentType: d.ContentType,
		ContentEncoding: d.ContentEncoding, DeliveryMode: d.DeliveryMode, Priority: d.Priority,
		CorrelationID: d.CorrelationId, ReplyTo: d.ReplyTo, Type: d.Type, UserID: d.UserId, AppID: d.AppId,
	}
	if !d.Timestamp.IsZero() {
		t := d.Timestamp
		p.Timestamp = &t
	}
	return p
}
