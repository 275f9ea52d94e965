package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
	amqp "github.com/rabbitmq/amqp091-go"
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
	// heartbeatFrame: bytes that arrive as a heartbeat are not a delivery.
	heartbeatFrame = 8
	// peekStall is how long a browse waits without a delivery while the
	// queue says messages are ready (and it has credit): past it, the
	// broker is taken to prefer another consumer.
	peekStall = 5 * time.Second
	// deliveryLimitMargin: a quorum message this close to its delivery limit
	// stops a move or a drain (each return counts as a delivery).
	deliveryLimitMargin = 2
	// defaultDeliveryLimit4 is RabbitMQ 4.0–4.2's default quorum delivery limit.
	defaultDeliveryLimit4 = 20
)

// peekQueue browses q on its own channel (see collect), then closes it,
// which returns every unacked message to the queue in its order, within a
// bound (see browseChannels.close). Streams are read by offset.
// deathQueues are the queues whose x-death counts are this queue's retries;
// mains the vhost's ladder main queues (where "origin" leads).
func peekQueue(ctx context.Context, conn *amqp.Connection, q topology.Queue, brokerVersion string, opt PeekOptions, deathQueues, mains map[string]bool) (*PeekResult, error) {
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
	res := &PeekResult{Queue: q.Name, Type: q.Type, Total: q.Messages, Ready: q.Ready, Messages: []Message{}, PeekedAt: time.Now()}
	res.SideEffects = peekSideEffects(consumeMode(q), q.Type, brokerVersion)
	// Ready messages are all a consumer can see, and those ready now are all
	// a peek reads: not what arrives while it reads. A stream is read from
	// its first offset.
	want := opt.Limit
	if q.Type != topology.QueueStream && q.Ready < int64(want) {
		want = int(q.Ready)
	}
	run := NewBrowseRun(res, opt, want)
	bc := &browseChannels{conn: conn, main: ch}
	err = collect(ctx, bc, q, brokerVersion, opt, run, deathQueues, mains)
	// Closing the channel is what returns the messages: always do it.
	forced := bc.close(browseCloseBound)
	run.Finish()
	if err != nil {
		return nil, err
	}
	if res.Incomplete == "" && !forced {
		// A connection that died under the peek (a stall ends so: silence,
		// then a missed heartbeat) may have cut it short.
		if lost := amqpLost(connAddr(conn), "peek "+q.Name, connClosed(conn)); lost != nil {
			return nil, lost
		}
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
	}
	NoteDeadLettered(res, q, brokerVersion)
	return finishPeek(res, q), nil
}

// ReleaseRoute says where a queue's expired messages go: its dead-letter
// route, or nowhere.
func ReleaseRoute(q topology.Queue) string {
	t, route := moveplan.DeadLetterTarget(topology.EffectiveSettings(&q))
	switch {
	case route == moveplan.DeadLettersDropped:
		return "nowhere (dropped: no dead-letter exchange)"
	case route == moveplan.DeadLettersOwnKeysDefault:
		return "the default exchange with their own keys"
	case t.Kind == moveplan.TargetQueue:
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
func noteReleased(conn *amqp.Connection, q topology.Queue, res *PeekResult) {
	after, err := passiveDepth(conn, q.Name)
	if err != nil {
		return
	}
	if gone := q.Ready - int64(after); gone > 0 {
		at := time.Now()
		res.Released, res.ReleasedTo, res.ReleasedAt = gone, ReleaseRoute(q), &at
		res.SideEffects = append(res.SideEffects, fmt.Sprintf(
			"%s the queue during the peek, by %s, to %s: messages whose TTL ran out behind a longer-lived one leave as soon as a consumer uncovers them; other consumers may also have taken some",
			topology.Plural(int(gone), "message left", "messages left"), at.Format("15:04:05"), res.ReleasedTo))
	}
}

// collect reads up to run.Want() messages on bc.main without acking them
// (see consumerChain), in queue order. It ends when it has them all; when
// the queue has nothing more ready for it (see probeSchedule: what arrives
// after that arrived during the read, and is not read); when no delivery
// comes for a while; at the deadline; or at a message the AMQP client
// cannot read.
func collect(ctx context.Context, bc *browseChannels, q topology.Queue, brokerVersion string, opt PeekOptions, run *BrowseRun, deathQueues, mains map[string]bool) error {
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
	for !run.Done() {
		if chain.due == 0 {
			if !caughtUp.IsZero() {
				return nil // another consumer would only get what arrived since
			}
			if err := chain.open(run.Left()); err != nil {
				return AMQPFailure(bc.conn, "peek "+q.Name, err, nil)
			}
			idle.Reset(firstDelivery)
			probe.opened()
			lastDelivery = time.Now()
			lastRead = bc.received() // the answers to qos and consume are in
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
				if note, ok := unreadable(why, run.Read()); ok {
					// The messages read so far are good; the rest, this one
					// among them, went back to the queue with the connection.
					run.Stop(note)
					run.res.SideEffects = append(run.res.SideEffects, note)
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
			if err := run.Take(decodeDelivery(&d, run.Read(), opt.BodyPreview, deathQueues, mains)); err != nil {
				if errors.Is(err, ErrStopBrowse) {
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
			// This consumer has credit, yet nothing is ready: every message
			// the queue held when the read began has been read or has left,
			// and whatever comes now arrived since.
			caughtUp, settleRead = time.Now(), bc.received()
			if !fence {
				// What is on its way comes within moments, from the queue's
				// process as much as the cancel's answer would: take it.
				probe.settle()
				continue
			}
			// A classic queue sends its deliveries and its answer to a
			// cancel the same way, in order: once the cancel is confirmed
			// every delivery sent before is in (the channel closes when
			// they are read), and nothing later comes.
			probe.stop()
			if err := chain.ch.Cancel(chain.tag, false); err != nil {
				return fmt.Errorf("peek %s: cancel consumer: %w", q.Name, err)
			}
		case <-idle.C:
			run.Tick()
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
				if ready, err := bc.depth(q.Name); err == nil && ready > 0 {
					// Messages wait and this consumer has credit: a busy
					// broker (returning another read's messages, say)
					// delivers them in a while; one that prefers another
					// consumer never does.
					if time.Since(lastDelivery) < peekStall {
						idle.Reset(peekIdle)
						continue
					}
					run.Stop(fmt.Sprintf("the broker delivered nothing for %s after %s with %d still ready (another consumer is preferred: single active consumer, or a consumer priority?)",
						peekStall, topology.Plural(run.Read(), "message", "messages"), ready))
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

// clientCouldNotParse says whether a channel's close reason is the AMQP
// client's own refusal of a frame it could not parse, not the broker's.
func clientCouldNotParse(why *amqp.Error) bool { return parseFailure(why) }

// unparsedHint is what may make a delivery unreadable to amqp091-go.
const unparsedHint = "headers nested more than 32 deep, or a table of more than 8192 fields?"

func finishPeek(res *PeekResult, q topology.Queue) *PeekResult {
	AnnotateHoL(res, topology.EffectiveSettings(&q), time.Now())
	return res
}

// PeekMode is how a peek browses a queue.
type PeekMode int

const (
	// PeekConsumeClose: consume over AMQP 0-9-1 with manual ack, then close
	// the channel, which returns every message in order with redelivered
	// set. On a quorum queue the return counts a delivery.
	PeekConsumeClose PeekMode = iota
	// PeekReleased: a quorum queue on RabbitMQ 4.3+, browsed over AMQP 1.0
	// and settled with the released outcome: the delivery count and the
	// delivery limit are untouched, only x-acquired-count rises.
	PeekReleased
	// PeekByOffset: a stream, read by offset, which changes nothing.
	PeekByOffset
)

// PeekModeOf is how q is browsed on a broker of brokerVersion when AMQP 1.0
// answers. Measured (TestPeekQuorumByVersion): on 4.3.6 an AMQP 1.0
// released outcome leaves x-delivery-count alone; on 4.0.5 it counts a
// delivery like any return (4.1 and 4.2 are taken to be as 4.0: 4.3 is
// where returns without a failure stopped counting). Classic queues stay on
// 0-9-1: over AMQP 1.0 they keep the same order and get the same
// redelivered flag (seen on 4.0.5 and 4.3.6), and RabbitMQ's conversion to
// AMQP 1.0 drops some 0-9-1 headers (see amqp1_message.go).
func PeekModeOf(q topology.Queue, brokerVersion string) PeekMode {
	switch {
	case q.Type == topology.QueueStream:
		return PeekByOffset
	case q.Type == topology.QueueQuorum && topology.VersionAtLeast(brokerVersion, 4, 3):
		return PeekReleased
	}
	return PeekConsumeClose
}

// consumeMode is how an AMQP 0-9-1 peek reads q: streams by offset, the
// rest by consume and close.
func consumeMode(q topology.Queue) PeekMode {
	if q.Type == topology.QueueStream {
		return PeekByOffset
	}
	return PeekConsumeClose
}

// PeekSideEffects says what browsing a queue of this type costs on a broker
// of this version, browsed the way PeekModeOf chooses (the demo simulation
// says the same).
func PeekSideEffects(queueType, brokerVersion string) []string {
	return peekSideEffects(PeekModeOf(topology.Queue{Type: queueType}, brokerVersion), queueType, brokerVersion)
}

// peekSideEffects says what a peek by mode costs. Seen here: a
// consume-and-close peek raises x-delivery-count on 3.10, 4.0 and 4.3 (and
// x-acquired-count on 4.3); from 4.0 a quorum queue has a delivery limit
// of 20 unless set; an AMQP 1.0 browse released on 4.3 raises only
// x-acquired-count, and later consumers see the messages redelivered.
func peekSideEffects(mode PeekMode, queueType, brokerVersion string) []string {
	const hidden = "while ladder held them, these messages were invisible to other consumers"
	switch {
	case mode == PeekByOffset:
		return []string{}
	case mode == PeekReleased:
		return []string{
			"quorum queue browsed over AMQP 1.0 and released: x-delivery-count and the delivery limit are untouched; each peek raises x-acquired-count by one, and later consumers see these messages as redelivered",
			hidden,
		}
	case queueType == topology.QueueQuorum:
		count := "quorum queue: each peek increments x-delivery-count, which counts toward the queue's delivery limit if it has one"
		switch v := brokerVersion; {
		case topology.VersionAtLeast(v, 4, 3):
			count = "quorum queue, browsed over AMQP 0-9-1 (AMQP 1.0 was not available): each peek increments x-delivery-count and x-acquired-count; the delivery count counts toward the delivery limit (20 unless set)"
		case topology.VersionAtLeast(v, 4, 0):
			count = "quorum queue: each peek increments x-delivery-count, which counts toward the delivery limit (20 unless set)"
		}
		return []string{
			"messages were delivered to ladder and returned: their redelivered flag is now set",
			count,
			hidden,
		}
	default:
		return []string{
			"messages were delivered to ladder and returned: their redelivered flag is now set",
			hidden,
		}
	}
}

// PeekCost is what a peek of a queue would cost, known before it runs (the
// terminal UI asks first when it matters), by the rules PeekSideEffects and
// the refusals follow.
type PeekCost struct {
	// Consumers would not see the peeked messages while ladder holds them;
	// ConsumersUnknown: the broker did not say, so there may be some.
	Consumers        int
	ConsumersUnknown bool
	// Redelivered: every peeked message comes back with redelivered set
	// (all but streams, which are read by offset).
	Redelivered bool
	// Acquired: browsed over AMQP 1.0 and released (a quorum queue on
	// 4.3+): x-acquired-count rises, the delivery count does not.
	Acquired bool
	// Counted: each peek raises x-delivery-count (a quorum queue with no
	// costless browse). Limited: toward DeliveryLimit, past which the
	// peek's return dead-letters or drops a message; DefaultLimit when that
	// limit is the broker's default (none set).
	Counted       bool
	Limited       bool
	DeliveryLimit int64
	DefaultLimit  bool
}

// PeekCostOf is the cost of peeking q on a broker of brokerVersion, browsed
// the way PeekModeOf chooses. A stream costs nothing: it is read by offset,
// hidden from no one.
func PeekCostOf(q topology.Queue, brokerVersion string) PeekCost {
	return peekCostVia(q, brokerVersion, PeekModeOf(q, brokerVersion))
}

func peekCostVia(q topology.Queue, brokerVersion string, mode PeekMode) PeekCost {
	if mode == PeekByOffset {
		return PeekCost{}
	}
	c := PeekCost{Consumers: q.Consumers, ConsumersUnknown: q.ConsumersUnknown, Redelivered: true}
	switch {
	case mode == PeekReleased:
		c.Acquired = true
	case q.Type == topology.QueueQuorum:
		c.Counted = true
		if limit, ok := deliveryLimit(q, brokerVersion); ok {
			c.Limited, c.DeliveryLimit = true, limit
			c.DefaultLimit = !topology.EffectiveSettings(&q).HasDeliveryLimit
		}
	}
	return c
}

// Felt says whether someone else pays for the peek: consumers that lose
// sight of the messages (or may: unknown), or a delivery limit it counts
// toward. A peek of an unconsumed queue without a limit only sets the
// redelivered flag (and raises a quorum count).
func (c PeekCost) Felt() bool {
	return c.Consumers > 0 || c.ConsumersUnknown || c.Limited
}

// CountsDelivery: the peek raises x-delivery-count, a change read-only
// mode refuses.
func (c PeekCost) CountsDelivery() bool { return c.Counted }

// NeedsConsent: the peek counts toward a delivery limit, and how near the
// messages are cannot be seen without spending a delivery: it is refused
// unless forced (--force; the terminal UI's yes).
func (c PeekCost) NeedsConsent() bool { return c.Limited }

// ErrPeekCostsDelivery refuses, unless forced, a peek that counts a
// delivery toward a quorum queue's delivery limit.
var ErrPeekCostsDelivery = errors.New("a peek would count a delivery toward the delivery limit")

// PeekRefused is a peek refused before it touched the queue: under
// read-only mode (Kind ErrReadOnly) because it would raise the delivery
// count, or (Kind ErrPeekCostsDelivery) because it would count toward a
// delivery limit and was not forced. Cost is what it would have cost, Ready
// the queue's ready messages as the management API last said, Limit the
// most it would have read (0: not known), so that a question can say how
// many it reads.
type PeekRefused struct {
	Queue string
	Ready int64
	Limit int
	Cost  PeekCost
	Kind  error
	Why   string
}

func (e *PeekRefused) Error() string { return "peek " + e.Queue + ": " + e.Why }
func (e *PeekRefused) Unwrap() error { return e.Kind }

// PeekRefusalOf is the refusal a peek of q by the mode PeekModeOf chooses
// meets: nil when it may run. The terminal UI reads it before it asks, the
// simulation follows it; Live.Peek applies the same rule.
func PeekRefusalOf(q topology.Queue, brokerVersion string, readOnly, force bool) *PeekRefused {
	return peekRefusal(q, brokerVersion, peekCostVia(q, brokerVersion, PeekModeOf(q, brokerVersion)), readOnly, force, "")
}

// peekRefusal decides from what is known before the queue is touched —
// its type, limit and the broker's version, never a delivery — whether a
// peek costing c may run. because says why no costless browse exists
// ("" for the version's rule).
func peekRefusal(q topology.Queue, brokerVersion string, c PeekCost, readOnly, force bool, because string) *PeekRefused {
	if !c.CountsDelivery() || (!readOnly && (force || !c.NeedsConsent())) {
		return nil
	}
	if because == "" {
		because = "RabbitMQ " + brokerVersion + " has no peek that leaves it unchanged; 4.3 has"
	}
	what := "a peek of this quorum queue counts a delivery (x-delivery-count +1)"
	if c.Limited {
		what += fmt.Sprintf(" toward its %s of %d", limitName(c), c.DeliveryLimit)
	}
	if readOnly {
		return &PeekRefused{Queue: q.Name, Ready: q.Ready, Cost: c, Kind: ErrReadOnly, Why: "read-only: " + what + "; " + because}
	}
	return &PeekRefused{Queue: q.Name, Ready: q.Ready, Cost: c, Kind: ErrPeekCostsDelivery, Why: fmt.Sprintf(
		"%s, and a message already delivered %d times would be %s; how near they are cannot be seen without spending one (%s)",
		what, c.DeliveryLimit, deadLetteredTo(q), because)}
}

func limitName(c PeekCost) string {
	if c.DefaultLimit {
		return "default delivery limit"
	}
	return "delivery limit"
}

// deadLetteredTo says where a message past its delivery limit goes.
func deadLetteredTo(q topology.Queue) string {
	if r := ReleaseRoute(q); !strings.HasPrefix(r, "nowhere") {
		return "dead-lettered to " + r
	}
	return "dropped (no dead-letter exchange)"
}

// NoteDeadLettered reports the messages a peek's return pushed past their
// delivery limit: each return raised x-delivery-count by one, and a quorum
// queue dead-letters (or drops) a message returned once it had been
// delivered limit times before. Counted from each message's
// x-delivery-count as delivered (exact; no waiting on a quorum queue's
// asynchronous returns), on what the peek itself read.
func NoteDeadLettered(res *PeekResult, q topology.Queue, brokerVersion string) {
	limit, ok := deliveryLimit(q, brokerVersion)
	if !ok {
		return
	}
	var gone []string
	for _, c := range res.deliveryCounts() {
		if c.count >= limit {
			gone = append(gone, strconv.Itoa(c.position))
		}
	}
	if len(gone) == 0 {
		return
	}
	at := time.Now()
	res.Released += int64(len(gone))
	res.ReleasedTo, res.ReleasedAt = ReleaseRoute(q), &at
	res.SideEffects = append(res.SideEffects, fmt.Sprintf(
		"%s by this peek (position %s): delivered %d times before, the return passed the delivery limit of %d",
		topology.Plural(len(gone), "message was "+deadLetteredTo(q), "messages were "+deadLetteredTo(q)), strings.Join(gone, ", "), limit, limit))
}

// RepeekDeadLetters counts the messages of prev, a consume-and-close peek
// of q, that another such peek would dead-letter: read from the counts
// prev saw, which its own return raised by one. The terminal UI refuses a
// re-peek that would, without spending a delivery to find out.
func RepeekDeadLetters(prev *PeekResult, q topology.Queue, brokerVersion string) int {
	c := PeekCostOf(q, brokerVersion)
	if prev == nil || !c.Limited {
		return 0
	}
	n := 0
	for _, m := range prev.Messages {
		seen, _ := headerInt(m.Headers["x-delivery-count"])
		if seen+1 >= c.DeliveryLimit {
			n++
		}
	}
	return n
}

// deliveryLimit is the quorum queue's effective limit; RabbitMQ 4.0–4.2
// apply 20 when none is set (4.3 no longer counts returns the same way, but
// a conservative limit is still right for a peek).
func deliveryLimit(q topology.Queue, brokerVersion string) (int64, bool) {
	if q.Type != topology.QueueQuorum {
		return 0, false
	}
	s := topology.EffectiveSettings(&q)
	if s.HasDeliveryLimit {
		return s.DeliveryLimit, s.DeliveryLimit >= 0
	}
	if topology.VersionAtLeast(brokerVersion, 4, 0) {
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
