package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// EasyNetQ, reproduced from the sources (no .NET here):
//
//   - EasyNetQ/EasyNetQ, Source/EasyNetQ/Conventions.cs: a message type's
//     exchange is its type name ("Namespace.Type, Assembly", topic); a
//     subscription's queue is "<type name>_<subscription id>"; the error
//     queue is EasyNetQ_Default_Error_Queue, the error exchange
//     "ErrorExchange_" + the routing key the message was received with
//     (direct), bound to the error queue by that key.
//   - Source/EasyNetQ/Consumer/DefaultConsumerErrorStrategy.cs
//     HandleConsumerError: when a handler throws, the error exchange and
//     queue are declared and bound (DeclareAndBindErrorExchangeWithErrorQueue),
//     a new message is published there with the received routing key,
//     persistent, typed "EasyNetQ.SystemMessages.Error, EasyNetQ" and no
//     headers: its body the Error record (CreateErrorMessage;
//     Source/EasyNetQ/SystemMessages/Error.cs: RoutingKey, Exchange,
//     Queue, Exception (the exception's ToString), Message (the original
//     body as text, DefaultErrorMessageSerializer), DateTime (UTC),
//     BasicProperties (the original's, headers as text)), serialized as
//     JSON. The original delivery is acked. No retries: one failure ends
//     there.
//   - Pub/sub publishes to the type's exchange with the topic as routing
//     key ("" by default: the subscription queues are bound with "#");
//     send/receive publishes to the default exchange with the queue's name
//     (Source/EasyNetQ/DefaultSendReceive.cs; DefaultPubSub.cs for pub/sub).
const (
	enqErrorQueue = "EasyNetQ_Default_Error_Queue"
	enqErrorType  = "EasyNetQ.SystemMessages.Error, EasyNetQ"
	enqOrderType  = "Shop.Messages.OrderPlaced, Shop.Messages"
)

// enqError is SystemMessages.Error as Newtonsoft.Json writes it.
type enqError struct {
	RoutingKey      string
	Exchange        string
	Queue           string
	Exception       string
	Message         string
	DateTime        string
	BasicProperties map[string]any
}

// TestEasyNetQErrorQueue: a pub/sub subscriber and a send/receive queue
// fail every message once, EasyNetQ's way: an Error record in the JSON
// body of a new message in the shared error queue, no header at all.
// ladder reads the record's Exception as the error by its field's name,
// labelled guessed (no convention entry: nothing but properties.type says
// EasyNetQ, which conventions do not read, and an entry on body fields
// alone would claim any body with an Exception field); it names no
// framework and no origin. move --to origin leaves every record where it
// is, saying why: republishing the wrapper would put a record, not the
// order, in the work queue.
func TestEasyNetQErrorQueue(t *testing.T) {
	t.Parallel()
	e := gcStart(t)
	const n = 3 // per consumer
	subQueue := enqOrderType + "_billing"
	const sendQueue = "shop.invoices"

	// Bus.PubSub.Subscribe<OrderPlaced>("billing"); SendReceive.Receive("shop.invoices").
	e.must(e.ch.ExchangeDeclare(enqOrderType, amqp.ExchangeTopic, true, false, false, false, nil), "declare exchange")
	for _, q := range []string{subQueue, sendQueue} {
		_, err := e.ch.QueueDeclare(q, true, false, false, false, nil)
		e.must(err, "declare queue "+q)
	}
	e.must(e.ch.QueueBind(subQueue, "#", enqOrderType, false, nil), "bind "+subQueue)

	bodies := map[string]string{} // correlation id -> original body
	homes := map[string]string{}
	for i := range n {
		for _, to := range []struct{ queue, exchange, key string }{{subQueue, enqOrderType, ""}, {sendQueue, "", sendQueue}} {
			id := fmt.Sprintf("enq-%s-%d", strings.SplitN(to.queue, ".", 2)[0], i)
			body := fmt.Sprintf(`{"OrderId":%d,"Sku":"A-1"}`, i)
			bodies[id], homes[id] = body, to.queue
			e.publish(to.exchange, to.key, false, amqp.Publishing{CorrelationId: id, DeliveryMode: amqp.Persistent,
				ContentType: "application/json", Type: enqOrderType, Body: []byte(body)})
		}
	}

	// The handlers throw: HandleConsumerError.
	for _, q := range []string{subQueue, sendQueue} {
		for range n {
			d := e.take(q)
			errEx := "ErrorExchange_" + d.RoutingKey
			_, err := e.ch.QueueDeclare(enqErrorQueue, true, false, false, false, nil)
			e.must(err, "declare "+enqErrorQueue)
			e.must(e.ch.ExchangeDeclare(errEx, amqp.ExchangeDirect, true, false, false, false, nil), "declare "+errEx)
			e.must(e.ch.QueueBind(enqErrorQueue, d.RoutingKey, errEx, false, nil), "bind "+enqErrorQueue)
			rec, err := json.Marshal(enqError{
				RoutingKey: d.RoutingKey, Exchange: d.Exchange, Queue: q,
				Exception: "System.InvalidOperationException: Order " + d.CorrelationId + " cannot be billed\r\n   at Shop.Billing.OrderPlacedHandler.Handle(OrderPlaced message)",
				Message:   string(d.Body), DateTime: time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z"),
				BasicProperties: map[string]any{"ContentType": d.ContentType, "DeliveryMode": 2, "CorrelationId": d.CorrelationId,
					"Type": d.Type, "Headers": map[string]any{}, "ContentTypePresent": true, "DeliveryModePresent": true,
					"CorrelationIdPresent": true, "TypePresent": true},
			})
			e.must(err, "error record")
			e.publish(errEx, d.RoutingKey, false, amqp.Publishing{DeliveryMode: amqp.Persistent, Type: enqErrorType, Body: rec})
			e.must(d.Ack(false), "ack")
		}
	}
	e.waitDepth(enqErrorQueue, 2*n)

	// topology: the work queues have no dead-letter route, the error queue
	// no name after either, and its messages no header saying where they
	// failed: nothing ties them, so no ladder (the error queue is no main).
	top, raw := e.topology()
	for _, l := range top.Ladders {
		if l.Main.Name == enqErrorQueue || l.DLQ != nil && l.DLQ.Name == enqErrorQueue {
			t.Errorf("ladder %s with dlq %+v: nothing ties %s to a work queue:\n%s", l.Main.Name, l.DLQ, enqErrorQueue, raw)
		}
	}

	// peek: the Error record's Exception read as the error, by its name
	// (guessed: no header says EasyNetQ, so no convention applies and the
	// framework is not named); the record's routing key is the received one.
	var pk struct {
		Messages []struct {
			Exchange   string `json:"exchange"`
			RoutingKey string `json:"routing_key"`
			Retry      struct {
				Count       int64    `json:"count"`
				Source      string   `json:"source"`
				Framework   string   `json:"framework"`
				LastError   string   `json:"last_error"`
				ErrorSource string   `json:"error_source"`
				Guessed     []string `json:"guessed"`
				FailedQueue string   `json:"failed_queue"`
			} `json:"retry"`
			BodyPreview string `json:"body_preview"`
		} `json:"messages"`
	}
	out := e.ladderJSON(&pk, "peek", enqErrorQueue, "-n", fmt.Sprint(2*n))
	if len(pk.Messages) != 2*n {
		t.Fatalf("peek shows %d messages, want %d:\n%s", len(pk.Messages), 2*n, out)
	}
	seen := map[string]bool{}
	for _, m := range pk.Messages {
		var rec enqError
		if err := json.Unmarshal([]byte(m.BodyPreview), &rec); err != nil {
			t.Fatalf("body preview is not the whole Error record: %v\n%s", err, m.BodyPreview)
		}
		id, _ := rec.BasicProperties["CorrelationId"].(string)
		seen[id] = true
		if home, ok := homes[id]; !ok || rec.Queue != home || rec.Message != bodies[id] {
			t.Errorf("record %s: queue %q, message %q; want %s, %q", id, rec.Queue, rec.Message, home, bodies[id])
		}
		rs := m.Retry
		if rs.LastError != rec.Exception || rs.ErrorSource != "body Exception" || !slices.Contains(rs.Guessed, "error") || rs.Framework != "" {
			t.Errorf("%s: error %q from %q, guessed %v, framework %q; want the record's Exception, guessed from body Exception, no framework",
				id, rs.LastError, rs.ErrorSource, rs.Guessed, rs.Framework)
		}
		if rs.Count != 0 || rs.Source != "none" || rs.FailedQueue != "" {
			t.Errorf("%s: count %d from %q, failed in %q; EasyNetQ records no count, and the failed queue only in the body", id, rs.Count, rs.Source, rs.FailedQueue)
		}
		if m.Exchange != "ErrorExchange_"+rec.RoutingKey || m.RoutingKey != rec.RoutingKey {
			t.Errorf("%s: published to %q with %q, want ErrorExchange_%s with %q", id, m.Exchange, m.RoutingKey, rec.RoutingKey, rec.RoutingKey)
		}
	}
	if len(seen) != 2*n {
		t.Errorf("peek showed %d distinct records, want %d", len(seen), 2*n)
	}

	// move --to origin: the origin is only in the body, and the message is
	// a wrapper (EasyNetQ.Hosepipe republishes its Message field, not it):
	// every message is skipped, saying why, and nothing reaches a work
	// queue.
	var plan gcMove
	out = e.ladderJSON(&plan, "move", "--from", enqErrorQueue, "--to", "origin", "--dry-run")
	if len(plan.Planned) != 2*n || plan.Skipped != 2*n {
		t.Errorf("dry run plans %d, skips %d; want all %d skipped:\n%s", len(plan.Planned), plan.Skipped, 2*n, out)
	}
	for _, p := range plan.Planned {
		if !strings.Contains(p.Skip, "nothing says where it failed") || len(p.Reaches) != 0 {
			t.Errorf("planned: skip %q, reaches %v; want skipped, nothing says where it failed", p.Skip, p.Reaches)
		}
	}
	e.ladder("move", "--from", enqErrorQueue, "--to", "origin", "--yes")
	if d := e.depth(enqErrorQueue); d != 2*n {
		t.Errorf("%s holds %d after the move, want all %d left there", enqErrorQueue, d, 2*n)
	}
	for _, q := range []string{subQueue, sendQueue} {
		if d := e.depth(q); d != 0 {
			t.Errorf("%s holds %d: an Error record reached a work queue", q, d)
		}
	}
}
