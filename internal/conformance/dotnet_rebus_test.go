package conformance

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Rebus on its RabbitMQ transport, reproduced from the sources (no .NET
// here):
//
//   - rebus-org/Rebus.RabbitMq, Rebus.RabbitMq/RabbitMq/RabbitMqTransport.cs
//     CreateQueueAsync: the durable direct exchange RebusDirect and topic
//     exchange RebusTopics (DeclareExchanges), the queue (DeclareQueue:
//     durable, no arguments by default), bound to RebusDirect by its own
//     name (BindInputQueue); the error queue is created the same way
//     (DeadletterQueueErrorHandler.Initialize calls CreateQueue). A send
//     to an address publishes to RebusDirect with the address as routing
//     key, Rebus's headers as AMQP headers (text) and rbs2-msg-id as the
//     message id.
//   - rebus-org/Rebus, Rebus/Retry/Simple/DefaultRetryStep.cs and
//     Rebus/Retry/ErrorTracking/InMemErrorTracker.cs: a failed delivery is
//     rolled back (the transport nacks it back to its queue) and its
//     failures are counted in memory by message id; after
//     RetryStrategySettings' 5 delivery attempts,
//     Rebus/Retry/PoisonQueues/DeadletterQueueErrorHandler.cs
//     HandlePoisonMessage sends a copy to the error queue ("error") with
//     rbs2-error-details ("<message>: <details>") and rbs2-source-queue
//     (the input queue) added, and the original is acked.
const (
	rebusDirect   = "RebusDirect"
	rebusTopics   = "RebusTopics"
	rebusError    = "error"
	rebusAttempts = 5 // RetryStrategySettings.DefaultNumberOfDeliveryAttempts
)

// rebusFault is what GetErrorDetails writes for the handler's exception:
// its message, then its ToString.
func rebusFault(queue, id string) (message, details string) {
	message = "Payment declined for " + id
	details = "System.InvalidOperationException: " + message + "\n   at Shop." + queue + ".Handler.Handle(PlaceOrder message) in /src/Handler.cs:line 17"
	return message, message + ": " + details
}

// TestRebusErrorQueue: two Rebus endpoints fail every message 5 times
// (nacked back to their queue each time), then send it to the shared error
// queue, shared and tied to no endpoint by any route. ladder finds no
// ladder until it samples error, then each endpoint's ending in it; reads
// the error details and the source queue as Rebus's (the conventions
// table: without its entry the guess would read both, unnamed); and moves
// every message back to the endpoint it failed in.
func TestRebusErrorQueue(t *testing.T) {
	t.Parallel()
	e := gcStart(t)
	const n = 3 // per endpoint
	endpoints := []string{"orders", "billing"}
	homes := map[string]string{}
	for _, ep := range endpoints {
		for id := range gcHomes(ep, gcIDs("rebus-"+ep, n)) {
			homes[id] = ep
		}
	}

	e.must(e.ch.ExchangeDeclare(rebusDirect, amqp.ExchangeDirect, true, false, false, false, nil), "declare "+rebusDirect)
	e.must(e.ch.ExchangeDeclare(rebusTopics, amqp.ExchangeTopic, true, false, false, false, nil), "declare "+rebusTopics)
	for _, q := range append([]string{rebusError}, endpoints...) {
		_, err := e.ch.QueueDeclare(q, true, false, false, false, nil)
		e.must(err, "declare queue "+q)
		e.must(e.ch.QueueBind(q, q, rebusDirect, false, nil), "bind "+q)
	}

	// A client sends one command per message to its endpoint.
	for id, ep := range homes {
		e.publish(rebusDirect, ep, true, amqp.Publishing{
			MessageId: id, DeliveryMode: amqp.Persistent, ContentType: "application/json;charset=utf-8",
			Type: "Shop.Messages.PlaceOrder, Shop.Messages",
			Headers: amqp.Table{
				"rbs2-msg-id": id, "rbs2-intent": "p2p", "rbs2-content-type": "application/json;charset=utf-8",
				"rbs2-msg-type": "Shop.Messages.PlaceOrder, Shop.Messages", "rbs2-return-address": "client",
				"rbs2-senttime": "2024-03-01T10:20:30.0000000+00:00", "rbs2-sender-address": "client",
			},
			Body: []byte(`{"OrderId":"` + id + `"}`),
		})
	}

	// Each endpoint's worker: every delivery fails; the first 4 are nacked
	// back (requeued), the 5th goes to the error queue.
	failures := map[string]int{}
	for _, ep := range endpoints {
		for sent := 0; sent < n; {
			d := e.take(ep)
			failures[d.MessageId]++
			if failures[d.MessageId] < rebusAttempts {
				e.must(d.Nack(false, true), "nack")
				continue
			}
			_, details := rebusFault(ep, d.MessageId)
			h := gcCopy(d.Headers)
			h["rbs2-error-details"] = details
			h["rbs2-source-queue"] = ep
			e.publish(rebusDirect, rebusError, true, amqp.Publishing{
				MessageId: d.MessageId, DeliveryMode: amqp.Persistent, ContentType: d.ContentType, Type: d.Type,
				Headers: h, Body: d.Body,
			})
			e.must(d.Ack(false), "ack")
			sent++
		}
	}
	e.waitDepth(rebusError, len(homes))

	// topology: error is shared and named by configuration, and nothing
	// routes to it; only its messages say whose failures it holds (rule 9).
	// Without a sample there is nothing to tie it to; with one, each
	// endpoint is a ladder ending in error, from the messages seen, its
	// retries in the consumer (Rebus retries in memory).
	top, raw := e.topology()
	if len(top.Ladders) != 0 {
		t.Errorf("topology without a sample found ladders %v; nothing but the messages ties error to an endpoint:\n%s", top.mains(), raw)
	}
	var sampled struct {
		gcTopology
		Sampled struct {
			Queues []struct {
				Queue    string   `json:"queue"`
				Read     int      `json:"read"`
				FailedIn []string `json:"failed_in"`
			} `json:"queues"`
		} `json:"sampled"`
	}
	raw = e.ladderJSON(&sampled, "topology", "--sample", fmt.Sprint(len(homes)))
	for _, s := range sampled.Sampled.Queues {
		if s.Queue == rebusError && (s.Read != len(homes) || !slices.Equal(slices.Sorted(slices.Values(s.FailedIn)), slices.Sorted(slices.Values(endpoints)))) {
			t.Errorf("sampled %s: read %d, failed in %v; want %d, %v", rebusError, s.Read, s.FailedIn, len(homes), endpoints)
		}
	}
	if got, want := sampled.mains(), slices.Sorted(slices.Values(endpoints)); !slices.Equal(got, want) {
		t.Errorf("ladders of %v, want %v:\n%s", got, want, raw)
	}
	for _, ep := range endpoints {
		l, ok := sampled.ladderOf(t, ep, raw)
		if !ok {
			continue
		}
		if l.DLQ == nil || l.DLQ.Name != rebusError || !strings.Contains(l.DLQFrom, "messages seen") || !l.RetriesInConsumer {
			t.Errorf("ladder %s: dlq %+v from %q, retries in consumer %v; want %s from the messages seen, in the consumer:\n%s",
				ep, l.DLQ, l.DLQFrom, l.RetriesInConsumer, rebusError, raw)
		}
	}
	for _, f := range sampled.Findings {
		t.Errorf("after sampling: finding on %q: %s: %s", f.Queue, f.Code, f.Message)
	}

	// peek: Rebus's, the error details as written, the failed queue from
	// rbs2-source-queue; no count (the 5 attempts were counted in memory).
	msgs := e.peek(rebusError, len(homes))
	for id, ep := range homes {
		m := msgs[id]
		_, details := rebusFault(ep, id)
		if m.Retry.Framework != "Rebus" || m.Retry.LastError != details || m.Retry.ErrorSource != "rbs2-error-details" {
			t.Errorf("%s: framework %q, error %q from %q; want Rebus, %q from rbs2-error-details", id, m.Retry.Framework, m.Retry.LastError, m.Retry.ErrorSource, details)
		}
		if m.Retry.Count != 0 {
			t.Errorf("%s: count %d from %q; Rebus writes none", id, m.Retry.Count, m.Retry.Source)
		}
		if m.Retry.FailedQueue != ep || m.Origin == nil || m.Origin.RoutingKey != ep {
			t.Errorf("%s: failed in %q, origin %+v; want %s (rbs2-source-queue)", id, m.Retry.FailedQueue, m.Origin, ep)
		}
	}

	e.moveToOrigin(rebusError, homes)
	e.checkBackIn(homes)
	if t.Failed() {
		t.Log(fmt.Sprint("failures counted: ", failures))
	}
}
