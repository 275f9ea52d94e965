package brokertest

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/retry"
)

// SpringRetry is a Spring AMQP application's retry loop, and the queue its
// failures end in, as a Spring AMQP listener and RepublishMessageRecoverer
// leave them (spring-projects/spring-amqp:
// spring-rabbit/src/main/java/org/springframework/amqp/rabbit/retry/RepublishMessageRecoverer.java,
// recover: x-exception-stacktrace, x-exception-message, x-original-exchange
// and x-original-routingKey added to the message's own headers, x-death
// included, published persistent to the error exchange with "error." and
// the key it was received with; the container then acks it; and
// spring-amqp/src/main/java/org/springframework/amqp/AmqpRejectAndDontRequeueException.java:
// a listener that throws it has the message rejected without requeue).
//
// The work queue Queue, bound to the direct exchange of the same name with
// its own name, dead-letters through the default exchange into Retry,
// whose x-message-ttl sends what expires back to the exchange Queue with
// key Queue. The listener rejects a message until x-death says Retry
// expired it Expiries times, then hands it to RepublishMessageRecoverer,
// whose error exchange (the direct exchange DLX) routes error.<Queue> to
// Failed. Nothing dead-letters into Failed and no naming ladder knows
// (retry.ErrorQueueNamings: Q.failed, Q_error…) names it: only its
// messages tell whose failures it holds.
type SpringRetry struct {
	Queue, Retry, Failed string
	Expiries             int64
	// TTL is Retry's x-message-ttl (Spring's apps use seconds; a test a
	// fraction of one).
	TTL time.Duration
	// Error is the exception's message the recoverer records.
	Error string
}

// NewSpringRetry names the loop of work queue queue: queue.retry, and
// queue.given-up for what is given up on after two expiries.
func NewSpringRetry(queue string) SpringRetry {
	return SpringRetry{Queue: queue, Retry: queue + ".retry", Failed: queue + ".given-up", Expiries: 2, TTL: 200 * time.Millisecond,
		Error: "Order 42 has no customer"}
}

// Declare declares the exchanges, queues and bindings.
func (s SpringRetry) Declare(ch *amqp.Channel) error {
	steps := []func() error{
		func() error { return ch.ExchangeDeclare(s.Queue, amqp.ExchangeDirect, true, false, false, false, nil) },
		func() error { return ch.ExchangeDeclare("DLX", amqp.ExchangeDirect, true, false, false, false, nil) },
		func() error {
			_, err := ch.QueueDeclare(s.Queue, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": s.Retry})
			return err
		},
		func() error { return ch.QueueBind(s.Queue, s.Queue, s.Queue, false, nil) },
		func() error {
			_, err := ch.QueueDeclare(s.Retry, true, false, false, false, amqp.Table{
				"x-message-ttl": int32(s.TTL / time.Millisecond), "x-dead-letter-exchange": s.Queue, "x-dead-letter-routing-key": s.Queue})
			return err
		},
		func() error {
			_, err := ch.QueueDeclare(s.Failed, true, false, false, false, nil)
			return err
		},
		func() error { return ch.QueueBind(s.Failed, "error."+s.Queue, "DLX", false, nil) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("declare spring retry loop of %s: %w", s.Queue, err)
		}
	}
	return nil
}

// Fail publishes n messages (ids <prefix>-0…) to the work queue's exchange
// and runs the listener until every one is in Failed: each goes round the
// loop until Retry has expired it Expiries times. ch must be in confirm
// mode. It gives up after within.
func (s SpringRetry) Fail(ctx context.Context, ch *amqp.Channel, prefix string, n int, within time.Duration) error {
	var ps []amqp.Publishing
	for i := range n {
		ps = append(ps, amqp.Publishing{MessageId: fmt.Sprintf("%s-%d", prefix, i), DeliveryMode: amqp.Persistent,
			ContentType: "application/json", Timestamp: time.Now().Truncate(time.Second), Body: fmt.Appendf(nil, `{"order":%d}`, i)})
	}
	if err := PublishConfirmed(ctx, ch, s.Queue, s.Queue, ps); err != nil {
		return err
	}
	deadline := time.Now().Add(within)
	for failed := 0; failed < n; {
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s, %d of %d messages are in %s", within, failed, n, s.Failed)
		}
		d, ok, err := ch.Get(s.Queue, false)
		if err != nil {
			return fmt.Errorf("get from %s: %w", s.Queue, err)
		}
		if !ok {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		var expired int64
		for _, x := range retry.DecodeXDeath(retry.Headers(d.Headers)).Deaths {
			if x.Queue == s.Retry && x.Reason == retry.ReasonExpired {
				expired = x.Count
			}
		}
		if expired < s.Expiries {
			// AmqpRejectAndDontRequeueException: rejected, dead-lettered
			// into the retry queue.
			if err := d.Nack(false, false); err != nil {
				return fmt.Errorf("reject: %w", err)
			}
			continue
		}
		// RepublishMessageRecoverer.recover, then the container's ack.
		h := amqp.Table{}
		for k, v := range d.Headers {
			h[k] = v
		}
		h["x-exception-stacktrace"] = "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method 'handle' threw exception\n\tat …\nCaused by: java.lang.IllegalStateException: " + s.Error
		h["x-exception-message"] = s.Error
		h["x-original-exchange"], h["x-original-routingKey"] = d.Exchange, d.RoutingKey
		p := amqp.Publishing{MessageId: d.MessageId, DeliveryMode: amqp.Persistent, ContentType: d.ContentType, Timestamp: d.Timestamp, Headers: h, Body: d.Body}
		if err := PublishConfirmed(ctx, ch, "DLX", "error."+d.RoutingKey, []amqp.Publishing{p}); err != nil {
			return fmt.Errorf("republish to DLX: %w", err)
		}
		if err := d.Ack(false); err != nil {
			return fmt.Errorf("ack: %w", err)
		}
		failed++
	}
	return nil
}
