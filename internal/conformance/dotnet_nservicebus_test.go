package conformance

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// NServiceBus on its RabbitMQ transport, reproduced from the sources:
//
//   - Particular/NServiceBus.RabbitMQ,
//     src/NServiceBus.Transport.RabbitMQ/DelayedDelivery/DelayInfrastructure.cs
//     Build: 28 levels nsb.v2.delay-level-27 … -00, each a durable topic
//     exchange and a quorum queue of that name (x-dead-letter-strategy
//     at-least-once, x-overflow reject-publish, x-message-ttl 2^level s,
//     dead-lettering to the next level's exchange, level 00 to the topic
//     exchange nsb.v2.delay-delivery), the queue bound with a key whose bit
//     of its level is 1 ("*.…*.1.#"), the next level's exchange bound with
//     the same bit 0 ("*.…*.0.#"); CalculateRoutingKey: a delay of d seconds
//     is published to the level of d's highest set bit with the key
//     "b27.b26.….b0.<address>", and reaches the endpoint's exchange through
//     nsb.v2.delay-delivery's binding "#.<address>" (BindingKey).
//   - src/NServiceBus.Transport.RabbitMQ/Routing/ConventionalRoutingTopology.cs
//     Initialize: every receiving and sending address (the endpoint, the
//     error queue) is a durable queue (x-queue-type quorum for
//     QueueType.Quorum) and a fanout exchange of its name bound to it;
//     BindToDelayInfrastructure binds the endpoint's exchange to
//     nsb.v2.delay-delivery; Send publishes to the address's exchange,
//     mandatory (RabbitMQTransportInfrastructure.SetupInfrastructure,
//     Connection/ConfirmsAwareChannel.cs SendMessage for delayed sends).
//   - src/NServiceBus.Transport.RabbitMQ/Receiving/MessageConverter.cs
//     RetrieveHeaders: the delay header, x-death and x-first-death-* are
//     removed from what the endpoint sees and forwards; every header value
//     becomes a string. Sending/BasicPropertiesExtensions.cs Fill: the
//     headers go out as they are, the delay in
//     NServiceBus.Transport.RabbitMQ.DelayInSeconds.
//   - Particular/NServiceBus, src/NServiceBus.Core/Recoverability/DelayedRetry.cs
//     (NServiceBus.Retries = attempt, NServiceBus.Retries.Timestamp, sent to
//     the endpoint's own address with the delay), MoveToError.cs (the
//     message goes to the error queue with NServiceBus.Retries and
//     NServiceBus.FLRetries removed, the fault metadata added),
//     Recoverability/Faults/FaultMetadataExtractor.cs and FaultsHeaderKeys.cs
//     (NServiceBus.FailedQ, NServiceBus.ExceptionInfo.*,
//     NServiceBus.TimeOfFailure in DateTimeOffsetHelper's wire format
//     "yyyy-MM-dd HH:mm:ss:ffffff Z"; AddExceptionHeadersBehavior.cs wrote
//     the same headers before NServiceBus 6), RecoverabilityComponent.cs
//     (NServiceBus.ProcessingEndpoint, ProcessingMachine, host id).
//
// Delayed retries here wait 1 s then 2 s (levels 00 and 01) so the test is
// fast; NServiceBus's default is 10 s more each time.
const (
	nsbEndpoint  = "Sales"
	nsbError     = "error"
	nsbDelivery  = "nsb.v2.delay-delivery"
	nsbMaxLevel  = 27
	nsbDelayed   = 2 // delayed retries before the message goes to error
	nsbFaultText = "Order 42 cannot be billed: card declined"
)

// nsbWireTime is DateTimeOffsetHelper.ToWireFormattedString: UTC,
// "yyyy-MM-dd HH:mm:ss:ffffff Z" (microseconds after a ':', which a Go
// layout cannot write).
func nsbWireTime(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("%s:%06d Z", t.Format(time.DateTime), t.Nanosecond()/1000)
}

func nsbLevel(level int) string { return fmt.Sprintf("nsb.v2.delay-level-%02d", level) }

// nsbRoutingKey is DelayInfrastructure.CalculateRoutingKey: the delay's 28
// bits, highest first, then the address; and the level to publish to.
func nsbRoutingKey(delaySeconds int, address string) (key string, startLevel int) {
	var b strings.Builder
	for level := nsbMaxLevel; level >= 0; level-- {
		bit := delaySeconds>>level&1 != 0
		if bit && startLevel == 0 {
			startLevel = level
		}
		if bit {
			b.WriteString("1.")
		} else {
			b.WriteString("0.")
		}
	}
	return b.String() + address, startLevel
}

// nsbDeclareDelayInfrastructure is DelayInfrastructure.Build.
func nsbDeclareDelayInfrastructure(e *gcEnv) {
	key := "1.#"
	for level := nsbMaxLevel; level >= 0; level-- {
		name := nsbLevel(level)
		next := nsbDelivery
		if level > 0 {
			next = nsbLevel(level - 1)
		}
		e.must(e.ch.ExchangeDeclare(name, amqp.ExchangeTopic, true, false, false, false, nil), "declare exchange "+name)
		_, err := e.ch.QueueDeclare(name, true, false, false, false, amqp.Table{
			"x-queue-type": "quorum", "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish",
			"x-message-ttl": int64(1<<level) * 1000, "x-dead-letter-exchange": next,
		})
		e.must(err, "declare queue "+name)
		e.must(e.ch.QueueBind(name, key, name, false, nil), "bind "+name)
		key = "*." + key
	}
	key = "0.#"
	for level := nsbMaxLevel; level >= 1; level-- {
		e.must(e.ch.ExchangeBind(nsbLevel(level-1), key, nsbLevel(level), false, nil), "bind "+nsbLevel(level-1)+" to "+nsbLevel(level))
		key = "*." + key
	}
	e.must(e.ch.ExchangeDeclare(nsbDelivery, amqp.ExchangeTopic, true, false, false, false, nil), "declare exchange "+nsbDelivery)
	e.must(e.ch.ExchangeBind(nsbDelivery, key, nsbLevel(0), false, nil), "bind "+nsbDelivery+" to "+nsbLevel(0))
}

// nsbRetrieveHeaders is MessageConverter.RetrieveHeaders: what the endpoint
// sees of a delivery's headers, and forwards.
func nsbRetrieveHeaders(d amqp.Delivery) map[string]string {
	out := map[string]string{}
	for k, v := range d.Headers {
		switch k {
		case "NServiceBus.Transport.RabbitMQ.DelayInSeconds", "x-death", "x-first-death-exchange", "x-first-death-queue",
			"x-first-death-reason", "NServiceBus.Transport.RabbitMQ.ConfirmationId", "x-delivery-count":
			continue
		}
		switch s := v.(type) {
		case string:
			out[k] = s
		case []byte:
			out[k] = string(s)
		default:
			out[k] = fmt.Sprint(s)
		}
	}
	if d.ReplyTo != "" {
		out["NServiceBus.ReplyToAddress"] = d.ReplyTo
	}
	if d.CorrelationId != "" {
		out["NServiceBus.CorrelationId"] = d.CorrelationId
	}
	if d.ContentType != "" {
		out["NServiceBus.ContentType"] = d.ContentType
	}
	return out
}

// nsbPublishing is BasicPropertiesExtensions.Fill for an outgoing message.
func nsbPublishing(id string, headers map[string]string, body []byte, delaySeconds int) amqp.Publishing {
	h := amqp.Table{}
	for k, v := range headers {
		h[k] = v
	}
	if delaySeconds > 0 {
		h["NServiceBus.Transport.RabbitMQ.DelayInSeconds"] = int32(delaySeconds)
	}
	p := amqp.Publishing{MessageId: id, DeliveryMode: amqp.Persistent, Headers: h, Body: body,
		ContentType: "application/octet-stream", CorrelationId: headers["NServiceBus.CorrelationId"], ReplyTo: headers["NServiceBus.ReplyToAddress"]}
	if ct := headers["NServiceBus.ContentType"]; ct != "" {
		p.ContentType = ct
	}
	if types := headers["NServiceBus.EnclosedMessageTypes"]; types != "" {
		p.Type, _, _ = strings.Cut(types, ",")
	}
	return p
}

// TestNServiceBusErrorQueue: two endpoints, Sales and Billing, with
// NServiceBus's delay infrastructure, are one ladder each, both with the
// shared error queue as DLQ and the 28 delay levels as their one delay
// (one shared mechanism, not 28 ladders or tiers, and no finding on it);
// peek reads the fault headers as NServiceBus writes them; move --to origin
// returns every message to the endpoint it failed in, and only there.
func TestNServiceBusErrorQueue(t *testing.T) {
	e := gcStart(t)
	const n = 3 // per endpoint
	endpoints := []string{nsbEndpoint, "Billing"}
	homes := map[string]string{}
	for _, ep := range endpoints {
		for id := range gcHomes(ep, gcIDs("nsb-"+ep, n)) {
			homes[id] = ep
		}
	}

	nsbDeclareDelayInfrastructure(e)
	for _, q := range append([]string{nsbError}, endpoints...) {
		_, err := e.ch.QueueDeclare(q, true, false, false, false, amqp.Table{"x-queue-type": "quorum"})
		e.must(err, "declare queue "+q)
		e.must(e.ch.ExchangeDeclare(q, amqp.ExchangeFanout, true, false, false, false, nil), "declare exchange "+q)
		e.must(e.ch.QueueBind(q, "", q, false, nil), "bind "+q)
	}
	for _, ep := range endpoints {
		e.must(e.ch.ExchangeBind(ep, "#."+ep, nsbDelivery, false, nil), "bind "+ep+" to "+nsbDelivery)
	}

	// A sender (ClientUI) sends a command to each endpoint.
	for id, ep := range homes {
		e.publish(ep, "", true, nsbPublishing(id, map[string]string{
			"NServiceBus.MessageId": id, "NServiceBus.MessageIntent": "Send", "NServiceBus.ContentType": "application/json",
			"NServiceBus.EnclosedMessageTypes": "Messages.PlaceOrder, Messages, Version=1.0.0.0",
			"NServiceBus.ConversationId":       id, "NServiceBus.CorrelationId": id,
			"NServiceBus.OriginatingEndpoint": "ClientUI", "NServiceBus.OriginatingMachine": "build-agent-7",
			"NServiceBus.TimeSent": nsbWireTime(time.Now()), "NServiceBus.Version": "9.2.3",
		}, []byte(`{"OrderId":"42"}`), 0))
	}

	// Each delayed retry: the handler fails (immediate retries in memory),
	// DelayedRetry sends the message to its own endpoint with attempt k's
	// delay (k s) through the delay levels.
	for attempt := 1; attempt <= nsbDelayed; attempt++ {
		for _, ep := range endpoints {
			for range n {
				d := e.take(ep)
				h := nsbRetrieveHeaders(d)
				h["NServiceBus.Retries"] = fmt.Sprint(attempt)
				h["NServiceBus.Retries.Timestamp"] = nsbWireTime(time.Now())
				key, level := nsbRoutingKey(attempt, ep)
				e.publish(nsbLevel(level), key, true, nsbPublishing(d.MessageId, h, d.Body, attempt))
				e.must(d.Ack(false), "ack")
			}
		}
	}

	// The last attempt fails too: MoveToError.
	failedAt := map[string]time.Time{}
	for _, ep := range endpoints {
		for range n {
			d := e.take(ep)
			if homes[d.MessageId] != ep || d.Headers["NServiceBus.Retries"] != fmt.Sprint(nsbDelayed) {
				t.Fatalf("%s came back to %s with NServiceBus.Retries %v; want it in %s with %d", d.MessageId, ep, d.Headers["NServiceBus.Retries"], homes[d.MessageId], nsbDelayed)
			}
			h := nsbRetrieveHeaders(d)
			delete(h, "NServiceBus.Retries")
			delete(h, "NServiceBus.FLRetries")
			at := time.Now().UTC().Truncate(time.Microsecond)
			failedAt[d.MessageId] = at
			for k, v := range map[string]string{
				"NServiceBus.ProcessingMachine": "build-agent-7", "NServiceBus.ProcessingEndpoint": ep,
				"$.diagnostics.hostid": "2f1d0c5e9b7a4c1e8d3f6a0b9c8d7e6f", "$.diagnostics.hostdisplayname": "build-agent-7",
				"NServiceBus.FailedQ":                     ep,
				"NServiceBus.ExceptionInfo.ExceptionType": "System.InvalidOperationException",
				"NServiceBus.ExceptionInfo.Message":       nsbFaultText,
				"NServiceBus.ExceptionInfo.Source":        ep,
				"NServiceBus.ExceptionInfo.StackTrace":    "System.InvalidOperationException: " + nsbFaultText + "\n   at " + ep + ".PlaceOrderHandler.Handle(PlaceOrder message, IMessageHandlerContext context)",
				"NServiceBus.TimeOfFailure":               nsbWireTime(at),
			} {
				h[k] = v
			}
			e.publish(nsbError, "", true, nsbPublishing(d.MessageId, h, d.Body, 0))
			e.must(d.Ack(false), "ack")
		}
	}
	e.waitDepth(nsbError, len(homes))

	// topology: one ladder per endpoint, whose DLQ is error and whose delay
	// is the levels; the levels are neither ladders nor tiers, and nothing
	// is found against them.
	levels := make([]string, 0, nsbMaxLevel+1)
	for level := 0; level <= nsbMaxLevel; level++ {
		levels = append(levels, nsbLevel(level))
	}
	top, raw := e.topology()
	if got, want := top.mains(), slices.Sorted(slices.Values(endpoints)); !slices.Equal(got, want) {
		t.Errorf("ladders of %v, want exactly one of each of %v:\n%s", got, want, raw)
	}
	for _, ep := range endpoints {
		l, ok := top.ladderOf(t, ep, raw)
		if !ok {
			continue
		}
		if l.DLQ == nil || l.DLQ.Name != nsbError || !strings.HasPrefix(l.DLQFrom, "NServiceBus") {
			t.Errorf("ladder %s: dlq %+v from %q, want %s by NServiceBus's naming:\n%s", ep, l.DLQ, l.DLQFrom, nsbError, raw)
		}
		if len(l.Tiers) != 0 || len(l.WaitQueues) != 0 || l.RetriesInConsumer {
			t.Errorf("ladder %s: tiers %v, wait queues %v, retries_in_consumer %v; the delay levels are no tiers, and the delayed retries wait in them, not in the consumer:\n%s",
				ep, l.tierNames(), l.WaitQueues, l.RetriesInConsumer, raw)
		}
		if len(l.Delays) != 1 {
			t.Errorf("ladder %s: %d delays, want one (the delay levels):\n%s", ep, len(l.Delays), raw)
			continue
		}
		got := slices.Sorted(slices.Values(l.Delays[0].queues()))
		if d := l.Delays[0]; !slices.Equal(got, levels) || d.MinTTLMS != 1000 || d.MaxTTLMS != int64(1<<nsbMaxLevel)*1000 {
			t.Errorf("ladder %s: delay %s of %d queues, %d–%d ms; want the 28 levels, 1000–%d ms:\n%s",
				ep, d.Name, len(got), d.MinTTLMS, d.MaxTTLMS, int64(1<<nsbMaxLevel)*1000, raw)
		}
		// Every level delivers to each endpoint, down the chain: level N
		// waits 2^N s.
		lv := l.Delays[0].Levels
		match := len(lv) == len(levels)
		for i := 0; match && i < len(lv); i++ {
			match = lv[i].Queue == nsbLevel(i) && lv[i].TTLMS == int64(1<<i)*1000
		}
		if !match {
			t.Errorf("ladder %s: levels %+v, want each of the 28, level N with 2^N s", ep, lv)
		}
	}
	if f := top.findingsOn(levels...); len(f) != 0 {
		t.Errorf("findings against the delay levels: %v", f)
	}
	for _, f := range top.findingsOn(append([]string{nsbError}, endpoints...)...) {
		if strings.HasPrefix(f, "no-dlq ") || strings.HasPrefix(f, "unroutable-dead-letter ") {
			t.Errorf("false finding: %s", f)
		}
	}

	// peek: MoveToError removed NServiceBus.Retries, so the message says no
	// count; the error is ExceptionInfo.Message at TimeOfFailure, the origin
	// NServiceBus.FailedQ.
	msgs := e.peek(nsbError, len(homes))
	for id, ep := range homes {
		m := msgs[id]
		if m.Retry.Count != 0 {
			t.Errorf("%s: retry count %d from %q; NServiceBus's error message carries none (MoveToError removes NServiceBus.Retries)", id, m.Retry.Count, m.Retry.Source)
		}
		if m.Retry.Framework != "NServiceBus" || m.Retry.LastError != nsbFaultText || m.Retry.ErrorType != "System.InvalidOperationException" {
			t.Errorf("%s: framework %q, error %q (%q); want NServiceBus, %q (System.InvalidOperationException)", id, m.Retry.Framework, m.Retry.LastError, m.Retry.ErrorType, nsbFaultText)
		}
		if !m.Retry.LastErrorTime.Equal(failedAt[id]) {
			t.Errorf("%s: error time %v, want NServiceBus.TimeOfFailure %v", id, m.Retry.LastErrorTime, failedAt[id])
		}
		if m.Retry.FailedQueue != ep || m.Origin == nil || m.Origin.Exchange != "" || m.Origin.RoutingKey != ep {
			t.Errorf("%s: failed in %q, origin %+v; want %s (NServiceBus.FailedQ)", id, m.Retry.FailedQueue, m.Origin, ep)
		}
	}

	e.moveToOrigin(nsbError, homes)
	e.checkBackIn(homes)
}
