package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/retry"
)

// Topology implements Client: the vhost read fresh, as moves read it.
func (l *Live) Topology(ctx context.Context) (retry.Vhost, error) {
	v, err := l.mgmt.VhostFresh(ctx, l.r.Vhost)
	if err != nil {
		return v, err
	}
	if l.adaptVhost != nil {
		l.adaptVhost(&v)
	}
	return v, nil
}

// Publish implements Client on a confirming channel of its own: every
// message is confirmed or reported; a return (matched by HeaderMoveID)
// arrives before its confirm.
func (l *Live) Publish(ctx context.Context, batch []Outgoing) ([]Outcome, error) {
	if l.r.ReadOnly {
		return nil, fmt.Errorf("publish: %w", ErrReadOnly)
	}
	out := make([]Outcome, len(batch))
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
		return nil, fmt.Errorf("publish: open channel: %w", err)
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return nil, fmt.Errorf("publish: confirm mode: %w", err)
	}
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, len(batch)+1))
	returns := ch.NotifyReturn(make(chan amqp.Return, len(batch)+1))
	index := make(map[string]int, len(batch))
	sent := 0
	for i, o := range batch {
		id, _ := o.Headers[HeaderMoveID].(string)
		index[id] = i
		p := publishingOf(o)
		if err := ch.PublishWithContext(ctx, o.Exchange, o.RoutingKey, o.Mandatory, false, p); err != nil {
			for j := i; j < len(batch); j++ {
				out[j].Err = fmt.Errorf("publish: %w", err)
			}
			break
		}
		sent++
	}
	returned := map[int]bool{}
	timeout := time.After(settleWait)
	for got := 0; got < sent; {
		select {
		case r := <-returns:
			if id, ok := r.Headers[HeaderMoveID].(string); ok {
				if i, ok := index[id]; ok {
					returned[i] = true
				}
			}
		case c, ok := <-confirms:
			if !ok {
				err := errors.New("publish: the broker closed the channel before every confirm arrived")
				for i := got; i < sent; i++ {
					out[i].Err = err
				}
				return out, nil
			}
			// Returns come before their confirm: take what is waiting.
			for drained := false; !drained; {
				select {
				case r := <-returns:
					if id, ok := r.Headers[HeaderMoveID].(string); ok {
						if i, ok := index[id]; ok {
							returned[i] = true
						}
					}
				default:
					drained = true
				}
			}
			i := int(c.DeliveryTag) - 1
			switch {
			case i < 0 || i >= sent:
			case returned[i]:
				out[i].Returned = true
			case c.Ack:
				out[i].Confirmed = true
			default:
				out[i].Err = errors.New("the broker nacked it")
			}
			got++
		case <-timeout:
			for i := range out[:sent] {
				if !out[i].Confirmed && !out[i].Returned && out[i].Err == nil {
					out[i].Err = fmt.Errorf("no confirm within %v: it may have reached the broker", settleWait)
				}
			}
			return out, nil
		}
	}
	return out, nil
}

func publishingOf(o Outgoing) amqp.Publishing {
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
		return fmt.Errorf("declare wait queue %s (a queue of that name with other arguments exists?): %w", name, err)
	}
	return nil
}

// Drain implements Client: consume with manual ack, ack each message only
// once handle kept it; the rest return to the queue when the channel closes.
func (l *Live) Drain(ctx context.Context, queue string, limit int, handle func(*Message) (bool, error)) (int, error) {
	if l.r.ReadOnly {
		return 0, fmt.Errorf("drain %s: %w", queue, ErrReadOnly)
	}
	conn, err := l.connection(ctx)
	if err != nil {
		return 0, err
	}
	ready, err := passiveDepth(conn, queue)
	if err != nil {
		return 0, fmt.Errorf("drain: queue %q: %w", queue, err)
	}
	look := ready
	ch, err := conn.Channel()
	if err != nil {
		return 0, fmt.Errorf("drain %s: open channel: %w", queue, err)
	}
	defer ch.Close() // returns every message not acked, in order
	if err := ch.Qos(min(max(look, 1), 1000), 0, false); err != nil {
		return 0, fmt.Errorf("drain %s: qos: %w", queue, err)
	}
	deliveries, err := ch.ConsumeWithContext(context.Background(), queue, "ladder-drain", false, false, false, false, nil)
	if err != nil {
		return 0, fmt.Errorf("drain %s: consume: %w", queue, err)
	}
	taken := 0
	for pos := 0; pos < look && (limit <= 0 || taken < limit); pos++ {
		var d amqp.Delivery
		select {
		case dd, ok := <-deliveries:
			if !ok {
				return taken, fmt.Errorf("drain %s: the broker closed the channel", queue)
			}
			d = dd
		case <-time.After(moveIdle):
			return taken, nil // fewer ready than counted: someone else took some
		case <-ctx.Done():
			return taken, fmt.Errorf("drain %s: %w", queue, ctx.Err())
		}
		m := decodeDelivery(&d, pos, maxBody, map[string]bool{queue: true}, nil)
		take, err := handle(&m)
		if err != nil {
			return taken, err
		}
		if take {
			if err := d.Ack(false); err != nil {
				return taken, fmt.Errorf("drain %s: ack: %w", queue, err)
			}
			taken++
		}
	}
	return taken, nil
}
