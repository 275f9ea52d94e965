package rabbit

import (
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// How an AMQP 0-9-1 browse reads a queue: consumers that never ack (but on
// a stream, see consumerChain), so every message it read stays held until
// its channel closes and the broker returns them all, in order.

const (
	// browseBudget bounds the bytes a browse lets the broker send ahead of
	// what it has handed on (a consumer's prefetch is sized to it): a dump
	// of any length keeps its memory flat.
	browseBudget = 16 << 20
	// browseFirst is the first consumer's prefetch, before sizes are known.
	browseFirst = 64
	// deliveryOverhead is what a delivery costs beyond its body: properties,
	// headers, the client's structs.
	deliveryOverhead = 1 << 10
	// peekGap is the pause in deliveries after which a browse asks the
	// queue whether anything is still ready (see probeSchedule);
	// probeEvery spaces those questions while deliveries trickle,
	// probeQuiet is the least pause that allows one, and probeForce the
	// longest a browse goes without asking.
	peekGap    = 25 * time.Millisecond
	probeEvery = 50 * time.Millisecond
	probeQuiet = 5 * time.Millisecond
	probeForce = 250 * time.Millisecond
	// settleQuiet and settleMost: once a queue other than a classic one had
	// nothing ready, the deliveries already on their way are taken (no
	// later than settleMost, and while they come no more than settleQuiet
	// apart), then the read ends.
	settleQuiet = 20 * time.Millisecond
	settleMost  = 100 * time.Millisecond
	// firstDelivery is how long a new consumer may take to get its first.
	firstDelivery = 2 * time.Second
)

// browseCloseBound is how long closing a browse's channels may take before
// its connection is dropped instead (a variable: tests shorten it).
var browseCloseBound = 5 * time.Second

// browsePrefetchCap caps every consumer's prefetch (maxPrefetch:
// basic.qos prefetch-count is a short); tests lower it to make a browse
// chain many consumers.
var browsePrefetchCap = maxPrefetch

// consumerChain reads a queue through consumers opened one after another on
// one channel. A consumer's prefetch is at most 65,535 and the messages a
// browse holds unacked count against it, so one consumer can browse no
// further; each next one starts only once the one before has received all
// it was given, and that one is cancelled (its messages stay held): only
// one consumer has credit at any time, so the broker delivers in queue
// order, as to a single consumer. Each is given as many messages as fit
// browseBudget by the sizes seen so far.
//
// A stream is read by one consumer that acks what it handed on: on a
// stream an ack only grants credit, it removes nothing.
type consumerChain struct {
	ch     *amqp.Channel
	queue  string
	args   amqp.Table
	stream bool

	n          int // consumers opened
	tag        string
	deliveries <-chan amqp.Delivery
	due        int   // deliveries the current consumer still owes
	given      int   // its prefetch
	bytes      int64 // the body bytes it delivered
	next       int   // the next consumer's prefetch
}

// open starts the next consumer for at most left messages.
func (c *consumerChain) open(left int) error {
	if c.tag != "" {
		// It has delivered all it was given: nothing of it is in flight.
		if err := c.ch.Cancel(c.tag, false); err != nil {
			return fmt.Errorf("cancel consumer %s: %w", c.tag, err)
		}
	}
	if c.next == 0 {
		c.next = browseFirst
	}
	n := min(c.next, left, browsePrefetchCap)
	if n < 1 {
		n = 1
	}
	if err := c.ch.Qos(n, 0, false); err != nil {
		return fmt.Errorf("qos: %w", err)
	}
	c.n++
	c.tag = "ladder-peek"
	if c.n > 1 {
		c.tag = fmt.Sprintf("ladder-peek-%d", c.n)
	}
	// Consume, not ConsumeWithContext: its goroutine would cancel the
	// consumer on the context's end with an RPC racing the channel's close.
	d, err := c.ch.Consume(c.queue, c.tag, false, false, false, false, c.args)
	if err != nil {
		return fmt.Errorf("consume: %w", err)
	}
	c.deliveries, c.given, c.bytes = d, n, 0
	c.due = n
	if c.stream {
		c.due = left // acks keep its credit coming: it is the only one
	}
	return nil
}

// got counts a delivery of the current consumer, and sizes the next one
// when this one is spent.
func (c *consumerChain) got(d *amqp.Delivery) error {
	c.due--
	c.bytes += int64(len(d.Body))
	if c.stream {
		if err := c.ch.Ack(d.DeliveryTag, false); err != nil {
			return fmt.Errorf("ack (a stream's credit): %w", err)
		}
	}
	if c.due == 0 {
		per := c.bytes/int64(c.given) + deliveryOverhead
		// Sizes may change along a queue: grow by steps.
		c.next = max(1, min(int(browseBudget/per), 8*c.given, maxPrefetch))
	}
	return nil
}

// probeSchedule says when a browse asks the queue whether anything is still
// ready: after a pause in deliveries (peekGap), and while they trickle
// (once probeEvery, after a pause of probeQuiet at least: not in the middle
// of a burst of the queue's own messages), and at least every probeForce
// whatever comes (a steady flow of arrivals has no pause). Once the queue
// had nothing ready it times the settling instead (settleQuiet).
type probeSchedule struct {
	on   bool
	t    *time.Timer
	last time.Time // the last question
}

func newProbeSchedule(on bool) *probeSchedule {
	p := &probeSchedule{on: on, last: time.Now()}
	if on {
		p.t = time.NewTimer(peekGap)
	}
	return p
}

// c fires when it is time (never when off).
func (p *probeSchedule) c() <-chan time.Time {
	if !p.on {
		return nil
	}
	return p.t.C
}

func (p *probeSchedule) reset(d time.Duration) {
	if p.on {
		p.t.Reset(d)
	}
}

// opened: a new consumer starts; its deliveries come before any question.
func (p *probeSchedule) opened() { p.reset(peekGap) }

func (p *probeSchedule) delivered() {
	since := time.Since(p.last)
	switch {
	case since >= probeForce:
		p.reset(0)
	case since >= probeEvery:
		p.reset(probeQuiet)
	default:
		p.reset(max(probeQuiet, min(peekGap, probeEvery-since)))
	}
}

// settle: the queue had nothing ready; the read ends at the next pause.
func (p *probeSchedule) settle() { p.reset(settleQuiet) }

// asked: the queue answered it still had some ready (ok), or could not
// answer: ask again later, or (no answer) leave it to the idle timer.
func (p *probeSchedule) asked(ok bool) {
	p.last = time.Now()
	if !ok {
		p.stop()
		return
	}
	p.reset(probeEvery)
}

func (p *probeSchedule) stop() {
	if p.on {
		p.t.Stop()
		p.on = false
	}
}

// errNoProbe: the browse cannot ask the queue its depth (the probe channel
// failed once).
var errNoProbe = errors.New("no probe channel")

// browseChannels are the channels a browse opened on its connection:
// closing them returns every message it holds.
type browseChannels struct {
	conn      *amqp.Connection
	main      *amqp.Channel
	probe     *amqp.Channel
	probeDead bool
	// probeRead counts the bytes the probe's answers brought: they are not
	// a delivery arriving (see received).
	probeRead int64
}

// received is how many bytes the connection has read, the probe's answers
// left out (-1: not counted).
func (bc *browseChannels) received() int64 {
	n := bytesReceived(bc.conn)
	if n < 0 {
		return n
	}
	return n - bc.probeRead
}

// depth asks the queue for its ready count (a passive declare) on a channel
// of its own, opened once.
func (bc *browseChannels) depth(queue string) (int, error) {
	if bc.probeDead {
		return 0, errNoProbe
	}
	before := bytesReceived(bc.conn)
	defer func() { bc.probeRead += bytesReceived(bc.conn) - before }()
	if bc.probe == nil {
		ch, err := bc.conn.Channel()
		if err != nil {
			bc.probeDead = true
			return 0, err
		}
		bc.probe = ch
	}
	q, err := bc.probe.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		bc.probeDead = true // the broker closed the channel (the queue is gone)
		return 0, err
	}
	return q.Messages, nil
}

// close closes the browse's channels, which returns what it holds to the
// queue, in order. amqp091's Channel.Close waits for the broker's answer
// without a bound; when none comes within bound the connection is dropped
// instead (the broker returns everything a closed connection held) and
// forced says so. The caller's next call dials again.
func (bc *browseChannels) close(bound time.Duration) (forced bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if bc.probe != nil {
			bc.probe.Close()
		}
		bc.main.Close()
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-t.C:
	}
	// A deadline already past fails the socket's pending and next reads and
	// writes: amqp091 shuts the connection down, and every call waiting on
	// it (the Close above) returns.
	go bc.conn.CloseDeadline(time.Now())
	t.Reset(bound)
	select {
	case <-done:
	case <-t.C:
	}
	return true
}
