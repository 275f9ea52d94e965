package brokertest

import (
	"context"
	"fmt"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Fixtures the benchmarks share with scripts/benchfix, which builds the
// same ones for the benchmarks bench.sh times as whole processes.

// DeclareLadders declares n ladders in the vhost ch is on, each of a
// topic exchange svcNNN.topic, a main queue svcNNN.process bound to it,
// three TTL tiers svcNNN.wait.{5000,30000,300000} bound to svcNNN.retry and
// dead-lettering back through the topic exchange, and a DLQ svcNNN.dlq:
// 5 queues and 4 bindings (besides the default exchange's) per ladder.
func DeclareLadders(ch *amqp.Channel, n int) error {
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("svc%03d", i)
		if err := ch.ExchangeDeclare(p+".topic", "topic", false, true, false, false, nil); err != nil {
			return err
		}
		if err := ch.ExchangeDeclare(p+".retry", "direct", false, true, false, false, nil); err != nil {
			return err
		}
		if _, err := ch.QueueDeclare(p+".process", false, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": p + ".dlq"}); err != nil {
			return err
		}
		if _, err := ch.QueueDeclare(p+".dlq", false, false, false, false, nil); err != nil {
			return err
		}
		if err := ch.QueueBind(p+".process", p+".#", p+".topic", false, nil); err != nil {
			return err
		}
		for _, ttl := range []int32{5000, 30000, 300000} {
			name := fmt.Sprintf("%s.wait.%d", p, ttl)
			if _, err := ch.QueueDeclare(name, false, false, false, false, amqp.Table{"x-message-ttl": ttl, "x-dead-letter-exchange": p + ".topic"}); err != nil {
				return err
			}
			if err := ch.QueueBind(name, name, p+".retry", false, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// BenchBody is the benchmarks' message body: 1 KiB.
var BenchBody = []byte(strings.Repeat("x", 1024))

// PublishConfirmed publishes msgs (persistent unless they say otherwise) on
// ch, which must be in confirm mode, in batches of 2,000, waiting for every
// confirm of a batch before the next.
func PublishConfirmed(ctx context.Context, ch *amqp.Channel, exchange, key string, msgs []amqp.Publishing) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	const batch = 2000
	for i := 0; i < len(msgs); i += batch {
		var confs []*amqp.DeferredConfirmation
		for _, m := range msgs[i:min(len(msgs), i+batch)] {
			if m.DeliveryMode == 0 {
				m.DeliveryMode = amqp.Persistent
			}
			dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, false, false, m)
			if err != nil {
				return err
			}
			confs = append(confs, dc)
		}
		for _, dc := range confs {
			if ok, err := dc.WaitContext(ctx); err != nil || !ok {
				return fmt.Errorf("publish to %q/%q not confirmed: %v", exchange, key, err)
			}
		}
	}
	return nil
}

// BenchMessages is n persistent 1 KiB messages with ids prefix-<i>.
func BenchMessages(n int, prefix string) []amqp.Publishing {
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("%s-%05d", prefix, i), DeliveryMode: amqp.Persistent, Body: BenchBody}
	}
	return msgs
}
