package rabbit

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/pace"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// BrokerVersion implements Client.
func (l *Live) BrokerVersion(ctx context.Context) (string, error) { return l.mgmt.BrokerVersion(ctx) }

// Topology implements Client: the vhost read fresh, as moves read it.
func (l *Live) Topology(ctx context.Context) (topology.Vhost, error) {
	v, err := l.mgmt.VhostFresh(ctx, l.r.Vhost)
	if err != nil {
		return v, err
	}
	if l.adaptVhost != nil {
		l.adaptVhost(&v)
	}
	l.evidence.Apply(&v)
	return v, nil
}

// Publish implements Client on a confirming channel of its own: every
// message is confirmed or reported; a return (matched by HeaderMoveID)
// arrives before its confirm. An error without outcomes: nothing of the
// batch was published. An error with outcomes says why publishing stopped
// short (the broker refused a publish and closed the channel, the
// connection was lost, ctx ended): each outcome says what became of its
// message.
func (l *Live) Publish(ctx context.Context, batch []broker.Outgoing) ([]broker.Outcome, error) {
	if l.r.ReadOnly {
		return nil, fmt.Errorf("publish: %w", broker.ErrReadOnly)
	}
	out := make([]broker.Outcome, len(batch))
	if len(batch) == 0 {
		return out, nil
	}
	conn, err := l.connection(ctx)
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, o := range batch {
		if o.WaitQueue != "" && !declared[o.WaitQueue] {
			if err := declareQueueOn(conn, o.WaitQueue, o.WaitQueueArgs); err != nil {
				return nil, err
			}
			declared[o.WaitQueue] = true
		}
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, AMQPFailure(conn, "publish: open channel", err, nil)
	}
	defer ch.Close()
	// amqp091 tells why a channel closed once; every later call only says
	// it is not open.
	watch := WatchChannel(ch)
	if err := ch.Confirm(false); err != nil {
		return nil, AMQPFailure(conn, "publish: confirm mode", err, watch)
	}
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, len(batch)+1))
	var returns <-chan amqp.Return = ch.NotifyReturn(make(chan amqp.Return, len(batch)+1))
	index := make(map[string]int, len(batch))
	var seqs []int // publish sequence - 1 → batch index
	// stopped is why publishing stopped before the end of the batch;
	// notMade what each message it did not publish says.
	var stopped, notMade error
	for i, o := range batch {
		if stopped != nil {
			out[i] = broker.Outcome{NotSent: true, Err: notMade}
			continue
		}
		p := publishingOf(o)
		if err := p.Headers.Validate(); err != nil {
			out[i] = broker.Outcome{NotSent: true, Err: fmt.Errorf("headers: %w", err)}
			continue // checked before anything is sent: the channel stays usable
		}
		id, _ := o.Headers[broker.HeaderMoveID].(string)
		index[id] = i
		if err := ch.PublishWithContext(ctx, o.Exchange, o.RoutingKey, o.Mandatory, false, p); err != nil {
			switch {
			case ctx.Err() != nil && errors.Is(err, ctx.Err()):
				// Checked before anything is written.
				stopped = fmt.Errorf("publish: %w", err)
				notMade = stopped
				out[i] = broker.Outcome{NotSent: true, Err: notMade}
			case errors.Is(err, amqp.ErrClosed):
				// Checked before anything is written: why the channel
				// closed is its close reason (see channelEnded).
				stopped = err
				notMade = fmt.Errorf("%w: the channel had closed", broker.ErrNotReached)
				out[i] = broker.Outcome{NotSent: true, Err: notMade}
			default:
				// A write that failed part way: this one may have reached
				// the broker; its connection is gone.
				stopped = AMQPFailure(conn, "publish", err, watch)
				notMade = fmt.Errorf("%w: the connection failed", broker.ErrNotReached)
				out[i].Err = fmt.Errorf("%w: it may have reached the broker", stopped)
			}
			continue
		}
		seqs = append(seqs, i)
	}
	sent := len(seqs)
	returned := map[int]bool{}
	take := func(r amqp.Return) {
		if id, ok := r.Headers[broker.HeaderMoveID].(string); ok {
			if i, ok := index[id]; ok {
				returned[i] = true
			}
		}
	}
	settled := map[int]bool{}
	unsettled := func(err error) {
		for _, i := range seqs {
			if !settled[i] {
				out[i].Err = err
			}
		}
	}
	// While a resource alarm blocks the connection no confirm comes: the
	// wait says so (see WithBlockedNotice) and lasts until the alarm
	// clears or ctx ends; the confirms then get settleWait afresh.
	blockedBy, change := l.blockOf(conn).state()
	notice := pace.BlockedNotice(ctx)
	cancel, cancelled := ctx.Done(), false
	stoppedBlocked := func() ([]broker.Outcome, error) {
		unsettled(fmt.Errorf("stopped while the broker blocked publishing (%s): it may have reached the broker", blockedBy))
		return out, nil
	}
	notice(blockedBy)
	defer func() { notice(l.blockOf(conn).blockedBy()) }()
	// end settles what publishing stopped short of: a channel that closed
	// under the batch says why (channelEnded).
	end := func() ([]broker.Outcome, error) {
		if stopped == nil || errors.Is(stopped, context.Canceled) || errors.Is(stopped, context.DeadlineExceeded) {
			return out, stopped
		}
		return out, l.channelEnded(conn, watch.Reason(time.Second), batch, seqs, settled, out)
	}
	var timeout <-chan time.Time
	if blockedBy == "" {
		timeout = time.After(settleWait)
	}
	for got := 0; got < sent; {
		select {
		case r, ok := <-returns:
			returns = nextReturns(returns, r, ok, take) // closed with its channel: the confirms say the rest
		case c, ok := <-confirms:
			if !ok {
				// The close reason is posted before the confirms close.
				return out, l.channelEnded(conn, watch.Reason(time.Second), batch, seqs, settled, out)
			}
			// Returns come before their confirm: take what is waiting.
			returns = drainReturns(returns, take)
			got++
			k := int(c.DeliveryTag) - 1
			if k < 0 || k >= sent {
				continue
			}
			i := seqs[k]
			settled[i] = true
			switch {
			case returned[i]:
				out[i].Returned = true
			case c.Ack:
				out[i].Confirmed = true
			default:
				out[i].Err = errors.New("the broker nacked it")
			}
		case <-change:
			was := blockedBy
			blockedBy, change = l.blockOf(conn).state()
			if blockedBy == was {
				continue
			}
			notice(blockedBy)
			timeout = nil
			if blockedBy == "" {
				timeout = time.After(settleWait)
			} else if cancelled {
				return stoppedBlocked()
			}
		case <-cancel:
			// Unblocked, the confirms come soon (within the bound below).
			cancel, cancelled = nil, true
			if blockedBy != "" {
				return stoppedBlocked()
			}
		case <-timeout:
			unsettled(fmt.Errorf("no confirm within %v: it may have reached the broker", settleWait))
			return end()
		}
	}
	return end()
}

// nextReturns hands a return read from returns (ok: not closed) to take,
// and gives back the channel to wait on next: nil once it is closed (with
// its channel: the confirms still buffered are read after it, and a
// closed channel is always ready, so waiting on it again would spin).
func nextReturns(returns <-chan amqp.Return, r amqp.Return, ok bool, take func(amqp.Return)) <-chan amqp.Return {
	if !ok {
		return nil
	}
	take(r)
	return returns
}

// drainReturns takes the returns waiting in returns, and gives back the
// channel to wait on next (see nextReturns).
func drainReturns(returns <-chan amqp.Return, take func(amqp.Return)) <-chan amqp.Return {
	for returns != nil {
		select {
		case r, ok := <-returns:
			returns = nextReturns(returns, r, ok, take)
		default:
			return returns
		}
	}
	return nil
}

// publishRefusal says whether the broker closed a channel over a publish
// it refused: no write access, no such exchange, a message it will not
// take (too large, a user-id not the user's…).
func publishRefusal(e *amqp.Error) bool {
	if e == nil || !e.Server {
		return false
	}
	switch e.Code {
	case amqp.AccessRefused, amqp.NotFound, amqp.PreconditionFailed:
		return true
	}
	return false
}

// refusedExchange reads the exchange a refusal names ("write access to
// exchange 'amq.default' in vhost …", "no exchange 'x' in vhost …"): ""
// for the default exchange.
func refusedExchange(e *amqp.Error) (string, bool) {
	m := refusedExchangeRE.FindStringSubmatch(e.Reason)
	if m == nil {
		return "", false
	}
	x := m[1]
	if x == "amq.default" {
		x = ""
	}
	return x, true
}

// The broker quotes names as they are: the exchange's ends at the last
// "' in vhost '" (a quote in it is its own).
var refusedExchangeRE = regexp.MustCompile(`exchange '(.*)' in vhost '`)

// channelEnded settles a batch whose channel closed (over why; nil: no
// reason known) before every confirm came, and words why. When the broker
// refused a publish and it can be told which, that one is not published
// and nor is any after it (the broker handles a channel's publishes in
// order and ignores what follows a channel.close): the first not settled,
// in publish order, of the size a too-large refusal names (and the limit
// it names is learnt), or to the exchange an access or not-found refusal
// names (every publish to it would be refused, so no earlier one was
// taken). Those before it that were not confirmed, or every unsettled one
// when none can be told (a lost connection, a refusal naming nothing), may
// have reached the broker.
func (l *Live) channelEnded(conn *amqp.Connection, why *amqp.Error, batch []broker.Outgoing, seqs []int, settled map[int]bool, out []broker.Outcome) error {
	var ended error
	if why == nil {
		ended = errors.New("publish: the channel closed before every confirm arrived")
	} else {
		ended = amqpLost(connAddr(conn), "publish", why)
	}
	at := -1
	if publishRefusal(why) {
		limit, size := refusedSize(why), 0
		if limit > 0 {
			size, _ = strconv.Atoi(sizeRefused.FindStringSubmatch(why.Reason)[1])
		}
		x, named := refusedExchange(why)
		for k, i := range seqs {
			if settled[i] {
				continue
			}
			if limit > 0 && len(batch[i].Body) == size || limit == 0 && named && batch[i].Exchange == x {
				at = k
				break
			}
		}
		if at >= 0 && limit > 0 {
			l.maxMsg.Store(limit)
		}
	}
	for k, i := range seqs {
		switch {
		case settled[i]:
		case at < 0 || k < at:
			out[i].Err = fmt.Errorf("%w, before it confirmed this one: it may have reached the broker", ended)
		case k == at:
			out[i] = broker.Outcome{NotSent: true, Err: ended}
		default:
			out[i] = broker.Outcome{NotSent: true, Err: broker.ErrNotReached}
		}
	}
	return ended
}

func publishingOf(o broker.Outgoing) amqp.Publishing {
	p := o.Properties
	pub := amqp.Publishing{
		Headers: toTable(o.Headers), ContentType: p.ContentType, ContentEncoding: p.ContentEncoding,
		DeliveryMode: p.DeliveryMode, Priority: p.Priority, CorrelationId: p.CorrelationID, ReplyTo: p.ReplyTo,
		Expiration: p.Expiration, MessageId: p.MessageID, Type: p.Type, UserId: p.UserID, AppId: p.AppID, Body: o.Body,
	}
	if p.Timestamp != nil {
		pub.Timestamp = *p.Timestamp
	}
	return pub
}

func declareQueueOn(conn *amqp.Connection, name string, args retry.Headers) error {
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("declare wait queue %s: %w", name, err)
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare(name, true, false, false, false, toTable(args)); err != nil {
		return declareError(conn, name, err)
	}
	return nil
}
