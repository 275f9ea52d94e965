package conformance

import (
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/retry"
)

// Spring's two ways of failing a message, reproduced from their sources.
//
// Spring AMQP, spring-projects/spring-amqp:
// spring-rabbit/src/main/java/org/springframework/amqp/rabbit/retry/RepublishMessageRecoverer.java
// recover: after the listener's (stateless, in-memory) retries, the message
// is published to the error exchange with the routing key "error." + the
// key it was received with (errorRoutingKeyPrefix), x-exception-message
// (the cause's message), x-exception-stacktrace (includeStackTrace),
// x-original-exchange and x-original-routingKey (where it was received
// from) added, persistent unless it says otherwise; the container then acks
// it. No count is written.
//
// Spring Cloud Stream's RabbitMQ binder, spring-cloud/spring-cloud-stream:
// binders/rabbit-binder/spring-cloud-stream-binder-rabbit-core/…/provisioning/RabbitExchangeQueueProvisioner.java
// (provisionConsumerDestination, autoBindDLQ, queueArgs: the topic
// exchange <destination>, the durable queue <destination>.<group> bound
// with "#" and dead-lettering to the direct exchange DLX with its own name
// as key, the DLQ <queue>.dlq bound to DLX with that key, dlqTtl as its
// x-message-ttl and dlqDeadLetterExchange as its x-dead-letter-exchange)
// and binders/rabbit-binder/spring-cloud-stream-binder-rabbit/…/RabbitMessageChannelBinder.java
// (republishToDlq: the failed message is published to DLX with the
// queue's name as key, x-exception-*, x-original-exchange and
// x-original-routingKey set, and MessageProperties.incrementRetryCount
// written as retry-count; spring-amqp's DefaultMessagePropertiesConverter
// reads retry-count back on the next delivery). The docs' retry loop
// (docs/modules/ROOT/pages/rabbit/rabbit_overview/rabbitmq-retry.adoc,
// putting-it-all-together.adoc: dlqTtl with dlqDeadLetterExchange set to
// the default exchange, so the DLQ's expired messages return to the queue
// by its name) gives up after the x-death count says N cycles; the parking
// lot <queue>.parkingLot is rabbit_dlq.adoc's, where the application sends
// what it gives up on, through the default exchange.
//
// internal/cli/spring_broker_test.go has the consumer-group shape (two
// groups on one destination, no TTL loop); this is the loop and the
// parking lot.

// TestSpringAMQPRepublishMessageRecoverer: a listener retrying in memory
// and RepublishMessageRecoverer to invoices.dlq is one ladder of invoices
// (retries in the consumer, the DLQ by Spring's naming); peek reads the
// error and the original route; move --to origin returns every message to
// invoices alone.
func TestSpringAMQPRepublishMessageRecoverer(t *testing.T) {
	e := gcStart(t)
	const (
		n     = 4
		queue = "invoices"
		dlq   = queue + ".dlq"
		text  = "Invoice 42 has no customer"
	)
	ids := gcIDs("spring-amqp", n)
	e.must(e.ch.ExchangeDeclare(queue, amqp.ExchangeDirect, true, false, false, false, nil), "declare exchange "+queue)
	_, err := e.ch.QueueDeclare(queue, true, false, false, false, nil)
	e.must(err, "declare queue "+queue)
	e.must(e.ch.QueueBind(queue, queue, queue, false, nil), "bind "+queue)
	// The application's error exchange and DLQ, as given to
	// new RepublishMessageRecoverer(template, "DLX").
	e.must(e.ch.ExchangeDeclare("DLX", amqp.ExchangeDirect, true, false, false, false, nil), "declare exchange DLX")
	_, err = e.ch.QueueDeclare(dlq, true, false, false, false, nil)
	e.must(err, "declare queue "+dlq)
	e.must(e.ch.QueueBind(dlq, "error."+queue, "DLX", false, nil), "bind "+dlq)

	for _, id := range ids {
		e.publish(queue, queue, false, amqp.Publishing{MessageId: id, DeliveryMode: amqp.Persistent, ContentType: "application/json", Body: []byte(`{"invoice":42}`)})
	}
	for range n {
		d := e.take(queue)
		h := gcCopy(d.Headers)
		h["x-exception-stacktrace"] = "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method 'handle' threw exception\n\tat …\nCaused by: java.lang.IllegalStateException: " + text
		h["x-exception-message"] = text
		h["x-original-exchange"] = d.Exchange
		h["x-original-routingKey"] = d.RoutingKey
		e.publish("DLX", "error."+d.RoutingKey, false, amqp.Publishing{
			MessageId: d.MessageId, DeliveryMode: amqp.Persistent, ContentType: d.ContentType, Headers: h, Body: d.Body})
		e.must(d.Ack(false), "ack")
	}
	e.waitDepth(dlq, n)

	top, raw := e.topology()
	if got := top.mains(); !slices.Equal(got, []string{queue}) {
		t.Errorf("ladders of %v, want exactly one, of %s:\n%s", got, queue, raw)
	}
	if l, ok := top.ladderOf(t, queue, raw); ok {
		if l.DLQ == nil || l.DLQ.Name != dlq || !strings.HasPrefix(l.DLQFrom, "Spring") {
			t.Errorf("ladder %s: dlq %+v from %q, want %s by Spring's {queue}.dlq naming:\n%s", queue, l.DLQ, l.DLQFrom, dlq, raw)
		}
		if len(l.Tiers) != 0 || len(l.Delays) != 0 || !l.RetriesInConsumer {
			t.Errorf("ladder %s: tiers %v, delays %v, retries_in_consumer %v; want no tier, retries in the consumer:\n%s", queue, l.tierNames(), l.Delays, l.RetriesInConsumer, raw)
		}
	}
	for _, f := range top.findingsOn(queue, dlq) {
		if strings.HasPrefix(f, "no-dlq ") || strings.HasPrefix(f, "unroutable-dead-letter ") {
			t.Errorf("false finding: %s", f)
		}
	}

	// RepublishMessageRecoverer writes no count and no time.
	msgs := e.peek(dlq, n)
	for _, id := range ids {
		m := msgs[id]
		if m.Retry.Count != 0 || m.Retry.LastError != text || !m.Retry.LastErrorTime.IsZero() {
			t.Errorf("%s: count %d (%s), error %q at %v; want 0, %q, no time", id, m.Retry.Count, m.Retry.Source, m.Retry.LastError, m.Retry.LastErrorTime, text)
		}
		if m.Origin == nil || m.Origin.Exchange != queue || m.Origin.RoutingKey != queue || m.Origin.By != "x-original-exchange" {
			t.Errorf("%s: origin %+v, want exchange %s key %s by x-original-exchange", id, m.Origin, queue, queue)
		}
	}
	e.moveToOrigin(dlq, gcHomes(queue, ids))
	e.checkBackIn(gcHomes(queue, ids))
}

// TestSpringCloudStreamDLQTTLParkingLot: the binder's republishToDlq with a
// dlqTtl loop back to the group's queue, and a parking lot after N cycles,
// is one ladder whose tier is the DLQ and whose dead end is the parking
// lot; peek reads Spring's record; move --to origin returns every parked
// message to the group's queue alone.
//
// The application gives up after N cycles counted by x-death, as the
// binder's docs do. That holds on RabbitMQ 3.x; from 4.0 the broker no
// longer counts on an x-death a client published (republishToDlq
// publishes the message again each cycle), which the test records; there
// the application counts with retry-count, as rabbit_dlq.adoc now does.
func TestSpringCloudStreamDLQTTLParkingLot(t *testing.T) {
	e := gcStart(t)
	const (
		n           = 3
		cycles      = 3 // give up after this many
		destination = "so8400in"
		queue       = destination + ".so8400"
		dlq         = queue + ".dlq"
		parkingLot  = queue + ".parkingLot"
		dlqTTL      = 300 // ms: dlqTtl, short for the test
		text        = "Dispatch failed: courier API answered 503"
	)
	ids := gcIDs("spring-cloud-stream", n)
	e.must(e.ch.ExchangeDeclare(destination, amqp.ExchangeTopic, true, false, false, false, nil), "declare exchange "+destination)
	e.must(e.ch.ExchangeDeclare("DLX", amqp.ExchangeDirect, true, false, false, false, nil), "declare exchange DLX")
	_, err := e.ch.QueueDeclare(queue, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "DLX", "x-dead-letter-routing-key": queue})
	e.must(err, "declare queue "+queue)
	e.must(e.ch.QueueBind(queue, "#", destination, false, nil), "bind "+queue)
	_, err = e.ch.QueueDeclare(dlq, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-message-ttl": int32(dlqTTL)})
	e.must(err, "declare queue "+dlq)
	e.must(e.ch.QueueBind(dlq, queue, "DLX", false, nil), "bind "+dlq)
	_, err = e.ch.QueueDeclare(parkingLot, true, false, false, false, nil)
	e.must(err, "declare queue "+parkingLot)

	// A producer binding publishes with the destination as routing key.
	for _, id := range ids {
		e.publish(destination, destination, false, amqp.Publishing{MessageId: id, DeliveryMode: amqp.Persistent, ContentType: "application/json", Body: []byte(`{"parcel":7}`)})
	}
	// The consumer fails every time; republishToDlq, the TTL brings the
	// message back; after N cycles the application parks it.
	deathCounts := map[string]int64{}
	parked := 0
	for round := 0; parked < n; round++ {
		if round > cycles+1 {
			t.Fatalf("after %d rounds %d of %d messages are parked; x-death counts %v", round, parked, n, deathCounts)
		}
		for range n - parked {
			d := e.take(queue)
			x := retry.DecodeXDeath(retry.Headers(d.Headers))
			var expired int64
			for _, dd := range x.Deaths {
				if dd.Queue == dlq && dd.Reason == "expired" {
					expired = dd.Count
				}
			}
			deathCounts[d.MessageId] = expired
			retries, _ := d.Headers["retry-count"].(int64)
			giveUp := expired >= cycles
			if e.is4() {
				giveUp = retries >= cycles
			}
			if giveUp {
				e.publish("", parkingLot, false, amqp.Publishing{
					MessageId: d.MessageId, DeliveryMode: d.DeliveryMode, ContentType: d.ContentType, Headers: d.Headers, Body: d.Body})
				e.must(d.Ack(false), "ack")
				parked++
				continue
			}
			h := gcCopy(d.Headers)
			h["x-exception-stacktrace"] = "org.springframework.messaging.MessageHandlingException: " + text + "\n\tat …"
			h["x-exception-message"] = text
			h["x-original-exchange"] = d.Exchange
			h["x-original-routingKey"] = d.RoutingKey
			h["retry-count"] = retries + 1
			e.publish("DLX", queue, false, amqp.Publishing{
				MessageId: d.MessageId, DeliveryMode: amqp.Persistent, ContentType: d.ContentType, Headers: h, Body: d.Body})
			e.must(d.Ack(false), "ack")
		}
	}
	e.waitDepth(parkingLot, n)
	for _, id := range ids {
		if !e.is4() && deathCounts[id] != cycles {
			t.Errorf("3.x: %s parked with x-death count %d, want %d", id, deathCounts[id], cycles)
		}
	}
	t.Logf("RabbitMQ %s: x-death count of %s (expired) on the parked messages: %v (retry-count %d)", e.version, dlq, deathCounts, cycles)

	top, raw := e.topology()
	if got := top.mains(); !slices.Equal(got, []string{queue}) {
		t.Errorf("ladders of %v, want exactly one, of %s:\n%s", got, queue, raw)
	}
	if l, ok := top.ladderOf(t, queue, raw); ok {
		if len(l.Tiers) != 1 || l.Tiers[0].Name != dlq || l.Tiers[0].TTLMS != dlqTTL {
			t.Errorf("ladder %s: tiers %v, want %s (%d ms: its expired messages come back):\n%s", queue, l.tierNames(), dlq, dlqTTL, raw)
		}
		// Nothing dead-letters into the parking lot: only Spring's naming
		// makes it the ladder's dead end.
		if l.DLQ == nil || l.DLQ.Name != parkingLot || !strings.HasPrefix(l.DLQFrom, "Spring") || !strings.Contains(l.DLQFrom, ".parkingLot") {
			t.Errorf("ladder %s: dlq %+v (from %q), error queues %v; want %s by Spring's {queue}.parkingLot naming:\n%s", queue, l.DLQ, l.DLQFrom, l.errorQueues(), parkingLot, raw)
		}
		if l.RetriesInConsumer {
			t.Errorf("ladder %s: retries_in_consumer, but its retries wait in the tier %s:\n%s", queue, dlq, raw)
		}
	}
	for _, f := range top.findingsOn(queue, dlq, parkingLot) {
		if strings.HasPrefix(f, "no-dlq ") || strings.HasPrefix(f, "unroutable-dead-letter ") {
			t.Errorf("false finding: %s", f)
		}
	}

	// The retries are the binder's retry-count (on 3.x x-death says as
	// many, on 4.x it stays at 1); the error its x-exception-message; it
	// failed in the group's queue.
	msgs := e.peek(parkingLot, n)
	for _, id := range ids {
		m := msgs[id]
		if m.Retry.Count != cycles {
			t.Errorf("%s: count %d (from %s), want %d (the binder's retry-count; x-death says as many only on 3.x)", id, m.Retry.Count, m.Retry.Source, cycles)
		}
		if m.Retry.LastError != text {
			t.Errorf("%s: error %q, want %q", id, m.Retry.LastError, text)
		}
		if m.Origin == nil || m.Origin.RoutingKey != queue {
			t.Errorf("%s: origin %+v, want %s", id, m.Origin, queue)
		}
	}
	e.moveToOrigin(parkingLot, gcHomes(queue, ids))
	e.checkBackIn(gcHomes(queue, ids))
}
