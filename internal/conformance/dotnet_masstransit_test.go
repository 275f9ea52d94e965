package conformance

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// MassTransit's RabbitMQ transport, reproduced from its source
// (MassTransit/MassTransit, src/Transports/MassTransit.RabbitMqTransport):
//
//   - RabbitMqTransport/Configuration/RabbitMqReceiveEndpointBuilder.cs
//     BuildTopology: a receive endpoint declares an exchange named as its
//     queue (fanout, durable), the queue (durable, no arguments by default)
//     and binds them; RabbitMqConsumeTopology binds the message type's
//     fanout exchange ("Namespace:Type") to the endpoint's exchange.
//   - RabbitMqTransport/Topology/RabbitMqSendTopology.cs GetErrorSettings and
//     RabbitMqErrorSettings.cs: the error queue is the endpoint's name +
//     "_error" (DefaultErrorQueueNameFormatter), a fanout exchange and a
//     queue of that name, bound, declared when the first fault is moved
//     (ConfigureRabbitMqTopologyFilter) with the receive queue's arguments.
//   - RabbitMqTransport/RabbitMqErrorTransport.cs and
//     RabbitMqMoveTransport.cs Move: the faulted message is published,
//     mandatory, to the error exchange with the routing key it was delivered
//     with, its properties and headers kept, host headers (MT-Host-*) and
//     the exception headers added, its expiration cleared; then acked.
//   - RabbitMqTransport/RabbitMqDeadLetterTransport.cs and
//     src/MassTransit/Middleware/DeadLetterTransportFilter.cs: a message no
//     consumer of the endpoint takes is moved the same way (host headers,
//     MT-Reason "dead-letter", no fault headers) to "<queue>_skipped"
//     (DefaultDeadLetterQueueNameFormatter, RabbitMqDeadLetterSettings).
//   - src/MassTransit.Abstractions/Contexts/SendContextExtensions.cs
//     SetExceptionHeaders and MessageHeaders.cs: MT-Reason "fault",
//     MT-Fault-ExceptionType, MT-Fault-InputAddress (the endpoint's
//     address), MT-Fault-Message, MT-Fault-Timestamp (ToString("O")),
//     MT-Fault-StackTrace, MT-Fault-ConsumerType, MT-Fault-MessageType, and
//     MT-Fault-RetryCount (the immediate retries, when more than 0);
//     ApplyRedeliveryOptions: a delayed redelivery carries
//     MT-Redelivery-Count (previous + 1).
//
// Delayed redelivery goes through the endpoint's "<queue>_delay"
// x-delayed-message exchange (RabbitMqEndpointAddress.GetDelaySettings),
// bound to the endpoint's exchange. The test brokers have no
// delayed-message plugin: the redelivered copy is published to the
// endpoint's exchange directly, as the delay exchange would forward it once
// its delay is over, with the headers the redelivery writes.
const (
	mtQueue       = "submit-order"
	mtMessageType = "Contracts:SubmitOrder"
	mtImmediate   = 2 // UseMessageRetry(r => r.Immediate(2))
	mtRedelivered = 1 // UseDelayedRedelivery(r => r.Intervals(…)) once, then the fault
	mtFaultText   = "Order 42 could not be submitted: the warehouse is closed"
)

// mtHostHeaders are SetHostHeaders' headers, on every message MassTransit
// moves to _error or _skipped.
var mtHostHeaders = map[string]any{
	"MT-Host-MachineName": "build-agent-7", "MT-Host-ProcessName": "Sales.Service", "MT-Host-ProcessId": "4242",
	"MT-Host-Assembly": "Sales.Service", "MT-Host-AssemblyVersion": "1.0.0.0", "MT-Host-MassTransitVersion": "8.3.0.0",
	"MT-Host-FrameworkVersion": "8.0.0", "MT-Host-OperatingSystemVersion": "Unix 6.8.0",
}

// mtDeclareEndpoint declares the receive endpoint submit-order and its
// message type's exchange, bound to it.
func mtDeclareEndpoint(e *gcEnv) {
	e.must(e.ch.ExchangeDeclare(mtQueue, amqp.ExchangeFanout, true, false, false, false, nil), "declare exchange "+mtQueue)
	_, err := e.ch.QueueDeclare(mtQueue, true, false, false, false, nil)
	e.must(err, "declare queue "+mtQueue)
	e.must(e.ch.QueueBind(mtQueue, "", mtQueue, false, nil), "bind "+mtQueue)
	e.must(e.ch.ExchangeDeclare(mtMessageType, amqp.ExchangeFanout, true, false, false, false, nil), "declare exchange "+mtMessageType)
	e.must(e.ch.ExchangeBind(mtQueue, "", mtMessageType, false, nil), "bind "+mtMessageType+" to "+mtQueue)
}

// mtDeclareMoveQueue declares _error's or _skipped's exchange and queue,
// bound, as the move transport's topology filter does on its first use.
func mtDeclareMoveQueue(e *gcEnv, name string) {
	e.must(e.ch.ExchangeDeclare(name, amqp.ExchangeFanout, true, false, false, false, nil), "declare exchange "+name)
	_, err := e.ch.QueueDeclare(name, true, false, false, false, nil)
	e.must(err, "declare queue "+name)
	e.must(e.ch.QueueBind(name, "", name, false, nil), "bind "+name)
}

// mtMove is RabbitMqMoveTransport.Move: d published to the exchange name
// with its routing key and properties, its headers with the host headers
// and extra added (the expiration cleared), then acked.
func mtMove(e *gcEnv, d amqp.Delivery, name string, extra map[string]any) {
	e.t.Helper()
	h := gcCopy(d.Headers)
	for k, v := range mtHostHeaders {
		h[k] = v
	}
	for k, v := range extra {
		h[k] = v
	}
	e.publish(name, d.RoutingKey, true, amqp.Publishing{
		MessageId: d.MessageId, DeliveryMode: d.DeliveryMode, ContentType: d.ContentType, Headers: h, Body: d.Body})
	e.must(d.Ack(false), "ack")
}

// TestMassTransitErrorQueue: a MassTransit endpoint's faults in
// submit-order_error are one ladder of submit-order (retries in the
// consumer, the DLQ found by MassTransit's naming), peek reads the fault
// headers as MassTransit means them, and move --to origin returns every
// message to submit-order and nowhere else.
func TestMassTransitErrorQueue(t *testing.T) {
	e := gcStart(t)
	const n = 4
	ids := gcIDs("mt", n)
	errQ := mtQueue + "_error"
	inputAddress := "rabbitmq://" + e.r.AMQP.Hostname() + "/" + e.r.Vhost + "/" + mtQueue

	mtDeclareEndpoint(e)

	// Publish: properties as MassTransit's RabbitMQ send sets them.
	for _, id := range ids {
		e.publish(mtMessageType, "", false, amqp.Publishing{
			MessageId: id, DeliveryMode: amqp.Persistent, ContentType: "application/vnd.masstransit+json",
			Headers: amqp.Table{"Content-Type": "application/vnd.masstransit+json"},
			Body:    []byte(fmt.Sprintf(`{"messageId":%q,"messageType":["urn:message:Contracts:SubmitOrder"],"message":{"orderId":42}}`, id)),
		})
	}
	e.waitDepth(mtQueue, n)

	// First delivery: the immediate retries fail in the consumer, then the
	// delayed redelivery sends a copy with MT-Redelivery-Count 1.
	for range n {
		d := e.take(mtQueue)
		h := gcCopy(d.Headers)
		h["MT-Redelivery-Count"] = int32(mtRedelivered)
		e.publish(mtQueue, d.RoutingKey, true, amqp.Publishing{
			MessageId: d.MessageId, DeliveryMode: d.DeliveryMode, ContentType: d.ContentType, Headers: h, Body: d.Body})
		e.must(d.Ack(false), "ack")
	}
	e.waitDepth(mtQueue, n)

	// The redelivery faults again: the error transport declares its
	// topology and moves the message there.
	mtDeclareMoveQueue(e, errQ)
	faultAt := map[string]time.Time{}
	for range n {
		d := e.take(mtQueue)
		at := time.Now().UTC()
		faultAt[d.MessageId] = at.Truncate(100 * time.Nanosecond)
		mtMove(e, d, errQ, map[string]any{
			"MT-Reason":              "fault",
			"MT-Fault-ExceptionType": "System.InvalidOperationException",
			"MT-Fault-InputAddress":  inputAddress,
			"MT-Fault-Message":       mtFaultText,
			"MT-Fault-Timestamp":     at.Format("2006-01-02T15:04:05.0000000Z07:00"),
			"MT-Fault-StackTrace":    "   at Sales.SubmitOrderConsumer.Consume(ConsumeContext`1 context) in SubmitOrderConsumer.cs:line 17",
			"MT-Fault-ConsumerType":  "Sales.SubmitOrderConsumer",
			"MT-Fault-MessageType":   "Contracts.SubmitOrder",
			"MT-Fault-RetryCount":    int32(mtImmediate),
		})
	}
	e.waitDepth(errQ, n)
	if e.depth(mtQueue) != 0 {
		t.Fatalf("setup left %d messages in %s", e.depth(mtQueue), mtQueue)
	}

	// topology: one ladder, submit-order → submit-order_error, retried in
	// the consumer; no finding says it has no DLQ.
	top, raw := e.topology()
	if got := top.mains(); !slices.Equal(got, []string{mtQueue}) {
		t.Errorf("ladders of %v, want exactly one, of %s:\n%s", got, mtQueue, raw)
	}
	if l, ok := top.ladderOf(t, mtQueue, raw); ok {
		if l.DLQ == nil || l.DLQ.Name != errQ {
			t.Errorf("ladder %s: dlq %+v, want %s:\n%s", mtQueue, l.DLQ, errQ, raw)
		}
		if !strings.HasPrefix(l.DLQFrom, "MassTransit") || !strings.Contains(l.DLQFrom, "_error") {
			t.Errorf("ladder %s: dlq_from %q, want MassTransit's {queue}_error naming:\n%s", mtQueue, l.DLQFrom, raw)
		}
		if got := l.errorQueues(); len(got) != 0 {
			t.Errorf("ladder %s: error queues %v, want none (no _skipped here, and _error is the DLQ):\n%s", mtQueue, got, raw)
		}
		if len(l.Tiers) != 0 || len(l.Delays) != 0 || !l.RetriesInConsumer {
			t.Errorf("ladder %s: tiers %v, delays %v, retries_in_consumer %v; want no tier or delay, retries in the consumer:\n%s",
				mtQueue, l.tierNames(), l.Delays, l.RetriesInConsumer, raw)
		}
	}
	for _, f := range top.findingsOn(mtQueue, errQ) {
		if strings.HasPrefix(f, "no-dlq ") || strings.HasPrefix(f, "unroutable-dead-letter ") {
			t.Errorf("false finding: %s", f)
		}
	}

	// peek: the count is the redeliveries (MT-Redelivery-Count), the error
	// MT-Fault-Message at MT-Fault-Timestamp, the origin the endpoint's queue.
	msgs := e.peek(errQ, n)
	for _, id := range ids {
		m := msgs[id]
		if m.Retry.Count != mtRedelivered || m.Retry.Source != "MT-Redelivery-Count" {
			t.Errorf("%s: retry count %d from %q, want %d from MT-Redelivery-Count", id, m.Retry.Count, m.Retry.Source, mtRedelivered)
		}
		if m.Retry.Framework != "MassTransit" || m.Retry.LastError != mtFaultText || m.Retry.ErrorType != "System.InvalidOperationException" {
			t.Errorf("%s: framework %q, error %q (%q), want MassTransit, %q (System.InvalidOperationException)", id, m.Retry.Framework, m.Retry.LastError, m.Retry.ErrorType, mtFaultText)
		}
		if !m.Retry.LastErrorTime.Equal(faultAt[id]) {
			t.Errorf("%s: error time %v, want MT-Fault-Timestamp %v", id, m.Retry.LastErrorTime, faultAt[id])
		}
		if m.Retry.FailedQueue != mtQueue || m.Origin == nil || m.Origin.RoutingKey != mtQueue || m.Origin.Exchange != "" {
			t.Errorf("%s: failed in %q, origin %+v; want %s (from MT-Fault-InputAddress %s)", id, m.Retry.FailedQueue, m.Origin, mtQueue, inputAddress)
		}
	}

	// move --to origin: every message back in submit-order, nowhere else.
	e.moveToOrigin(errQ, gcHomes(mtQueue, ids))
	e.checkBackIn(gcHomes(mtQueue, ids))
}

// TestMassTransitSkippedQueue: messages MassTransit's dead-letter transport
// moved to submit-order_skipped (no consumer of the endpoint took them) are
// an error queue of submit-order's ladder, and move --to origin returns
// them to submit-order: they carry no fault headers, only MassTransit's
// naming says where they were skipped.
func TestMassTransitSkippedQueue(t *testing.T) {
	e := gcStart(t)
	const n = 3
	ids := gcIDs("mt-skipped", n)
	skipQ := mtQueue + "_skipped"
	mtDeclareEndpoint(e)
	// Sent to the endpoint (its exchange), of a type none of its consumers
	// takes.
	for _, id := range ids {
		e.publish(mtQueue, "", true, amqp.Publishing{
			MessageId: id, DeliveryMode: amqp.Persistent, ContentType: "application/vnd.masstransit+json",
			Headers: amqp.Table{"Content-Type": "application/vnd.masstransit+json"},
			Body:    []byte(fmt.Sprintf(`{"messageId":%q,"messageType":["urn:message:Contracts:CancelOrder"],"message":{"orderId":42}}`, id)),
		})
	}
	mtDeclareMoveQueue(e, skipQ)
	for range n {
		mtMove(e, e.take(mtQueue), skipQ, map[string]any{"MT-Reason": "dead-letter"})
	}
	e.waitDepth(skipQ, n)

	top, raw := e.topology()
	if got := top.mains(); !slices.Equal(got, []string{mtQueue}) {
		t.Errorf("ladders of %v, want exactly one, of %s:\n%s", got, mtQueue, raw)
	}
	if l, ok := top.ladderOf(t, mtQueue, raw); ok {
		if !slices.Contains(l.errorQueues(), skipQ) && (l.DLQ == nil || l.DLQ.Name != skipQ) {
			t.Errorf("ladder %s: dlq %+v, error queues %v; want %s among them:\n%s", mtQueue, l.DLQ, l.errorQueues(), skipQ, raw)
		}
	}
	for id, m := range e.peek(skipQ, n) {
		if m.Origin == nil || m.Origin.RoutingKey != mtQueue {
			t.Errorf("%s in %s: origin %+v, want %s (MassTransit's {queue}_skipped naming)", id, skipQ, m.Origin, mtQueue)
		}
	}
	e.moveToOrigin(skipQ, gcHomes(mtQueue, ids))
	e.checkBackIn(gcHomes(mtQueue, ids))
}
