package rabbit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/broker/preview"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// drainLost marks a drain that lost its connection (or was stopped) after
// taking some messages as partial: those are written and acked, the rest
// stay queued.
func drainLost(taken int, err error) error {
	if taken > 0 {
		return &partialNote{err: err, note: "the rest stay queued"}
	}
	return err
}

// partialNote is err as a partial run (ErrPartial) in its own words:
// ErrPartial's are a move's.
type partialNote struct {
	err  error
	note string
}

func (e *partialNote) Error() string { return e.err.Error() + ": " + e.note }

func (e *partialNote) Unwrap() error { return e.err }

func (e *partialNote) Is(target error) bool { return target == broker.ErrPartial }

// Drain implements Client: consume with manual ack, ack each message only
// once handle kept it; the rest return to the queue when the channel closes.
// On a classic queue nothing is delivered that is not looked at (see the
// prefetch below). A quorum queue gets a fixed prefetch (the limit when one is
// given): what it delivered and was not looked at returns with its delivery
// count raised once; a message close to its quorum delivery limit stops the
// drain, as it stops a move.
func (l *Live) Drain(ctx context.Context, queue string, limit int, handle func(*broker.Message) (bool, error)) (int, error) {
	if l.r.ReadOnly {
		return 0, fmt.Errorf("drain %s: %w", queue, broker.ErrReadOnly)
	}
	q, err := l.mgmt.Queue(ctx, l.r.Vhost, queue)
	if err != nil {
		return 0, fmt.Errorf("drain: %w", err)
	}
	var dlimit int64
	if version, err := l.mgmt.BrokerVersion(ctx); err == nil {
		if n, ok := broker.DeliveryLimit(q, version); ok {
			dlimit = n
		}
	}
	conn, err := l.connection(ctx)
	if err != nil {
		return 0, err
	}
	look, err := passiveDepth(conn, queue)
	if err != nil {
		return 0, fmt.Errorf("drain: queue %q: %w", queue, err)
	}
	ch, err := conn.Channel()
	if err != nil {
		return 0, fmt.Errorf("drain %s: open channel: %w", queue, err)
	}
	defer ch.Close() // returns every message not acked, in order
	watch := WatchChannel(ch)
	held := 0
	// Nothing is delivered that is not looked at: a consumer with a
	// prefetch of one, replaced by a new one whenever it holds its message
	// back (held messages stay unacked on the channel; a new consumer does
	// not count them). Not a global prefetch: 4.3 denies it by default.
	// Quorum queues get a fixed prefetch, as a move does, and every
	// delivery's count is checked.
	quorum := q.Type == topology.QueueQuorum
	prefetch := 1
	if quorum {
		prefetch = min(max(look, 1), heldBudget+1, maxPrefetch)
		if limit > 0 {
			prefetch = min(prefetch, limit)
		}
	}
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return 0, fmt.Errorf("drain %s: qos: %w", queue, err)
	}
	consumer := 0
	consume := func() (<-chan amqp.Delivery, error) {
		consumer++
		d, err := ch.ConsumeWithContext(context.Background(), queue, "ladder-drain-"+strconv.Itoa(consumer), false, false, false, false, nil)
		if err != nil {
			return nil, fmt.Errorf("drain %s: consume: %w", queue, err)
		}
		return d, nil
	}
	deliveries, err := consume()
	if err != nil {
		return 0, err
	}
	taken := 0
	for pos := 0; pos < look && (limit <= 0 || taken < limit); pos++ {
		var d amqp.Delivery
		select {
		case dd, ok := <-deliveries:
			if !ok {
				return taken, drainLost(taken, AMQPFailure(conn, "drain "+queue, amqp.ErrClosed, watch))
			}
			d = dd
		case <-time.After(moveIdle):
			if quorum && held >= prefetch {
				// The fixed prefetch is full of held-back messages.
				return taken, fmt.Errorf("drain %s: stopped after holding back %s not chosen: %w", queue, topology.Plural(held, "message", "messages"), broker.ErrPartial)
			}
			if err := stillAnswers(conn, "drain "+queue, queue, stallCheck); err != nil {
				return taken, drainLost(taken, err) // not emptied: stalled
			}
			return taken, nil // fewer ready than counted: someone else took some
		case <-ctx.Done():
			return taken, drainLost(taken, fmt.Errorf("drain %s: %w", queue, ctx.Err()))
		}
		if n, ok := retry.HeaderInt(d.Headers["x-delivery-count"]); ok && dlimit > 0 && n >= dlimit-deliveryLimitMargin {
			return taken, fmt.Errorf("drain %s: message %q has been delivered %d times (delivery limit %d); returning it once more may dead-letter it: stopped after %d: %w",
				queue, d.MessageId, n, dlimit, taken, broker.ErrPartial)
		}
		m := decodeDelivery(&d, pos, preview.MaxBody, &decode.Decoder{DeathQueues: map[string]bool{queue: true}})
		take, err := handle(&m)
		if err != nil {
			return taken, err
		}
		if take {
			if err := d.Ack(false); err != nil {
				return taken, fmt.Errorf("drain %s: ack: %w", queue, err)
			}
			taken++
			continue
		}
		// Held back: it returns when the drain ends.
		held++
		if held >= heldBudget {
			return taken, fmt.Errorf("drain %s: stopped after holding back %d messages not chosen (ladder holds at most %d at a time): %w", queue, held, heldBudget, broker.ErrPartial)
		}
		if !quorum {
			if err := ch.Cancel("ladder-drain-"+strconv.Itoa(consumer), false); err != nil {
				return taken, fmt.Errorf("drain %s: cancel: %w", queue, err)
			}
			if deliveries, err = consume(); err != nil {
				return taken, err
			}
		}
	}
	return taken, nil
}
