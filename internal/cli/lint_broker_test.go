package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/retry/topology"

	amqp "github.com/rabbitmq/amqp091-go"
)

// springRetryLoop declares, in the test's own vhost, Spring Cloud Stream's
// binder loop for destination orders, group audit, with autoBindDlq=true,
// dlqTtl and dlqDeadLetterExchange= (spring-cloud-stream:
// RabbitExchangeQueueProvisioner autoBindDLQ and queueArgs; the binder
// docs' "Putting it All Together"): orders.audit dead-letters to DLX with
// its own name, orders.audit.dlq (TTL ttlMS) expires back through the
// default exchange by the key it kept.
func springRetryLoop(t *testing.T, ch *amqp.Channel, ttlMS int32) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ch.ExchangeDeclare("orders", "topic", true, false, false, false, nil))
	must(ch.ExchangeDeclare("DLX", "direct", true, false, false, false, nil))
	_, err := ch.QueueDeclare("orders.audit", true, false, false, false, amqp.Table{"x-dead-letter-exchange": "DLX", "x-dead-letter-routing-key": "orders.audit"})
	must(err)
	must(ch.QueueBind("orders.audit", "#", "orders", false, nil))
	_, err = ch.QueueDeclare("orders.audit.dlq", true, false, false, false, amqp.Table{"x-message-ttl": ttlMS, "x-dead-letter-exchange": ""})
	must(err)
	must(ch.QueueBind("orders.audit.dlq", "orders.audit", "DLX", false, nil))
}

// lapCount takes the next message off orders.audit (waiting for it to come
// back from the DLQ) and returns it with its x-death count for
// {orders.audit.dlq, expired} (0 when there is none).
func lapCount(t *testing.T, ch *amqp.Channel) (amqp.Delivery, int64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		d, ok, err := ch.Get("orders.audit", false)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		deaths, _ := d.Headers["x-death"].([]any)
		for _, e := range deaths {
			if e, ok := e.(amqp.Table); ok && e["queue"] == "orders.audit.dlq" && e["reason"] == "expired" {
				n, _ := e["count"].(int64)
				return d, n
			}
		}
		return d, 0
	}
	t.Fatal("nothing came back to orders.audit")
	return amqp.Delivery{}, 0
}

// On the broker: what lint's finding says happens, happens — the binder's
// republish (headers copied, x-original-* and x-exception-message added,
// published to DLX, acked) keeps x-death's count at 1 on 4.x, while a
// reject (republishToDlq=false, the fix the finding names) lets the
// broker count on every version; and ladder lint --for 4.3 names the loop
// once its queue has a consumer, exit 1.
func TestLintSpringRetryLoopOnTheBroker(t *testing.T) {
	r := vhostEnv(t)
	version := liveVersion(t, r)
	ch := brokertest.Channel(t, r, "test lint spring")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	springRetryLoop(t, ch, 200)
	publish := func(exchange, key string, p amqp.Publishing) {
		t.Helper()
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), exchange, key, false, false, p)
		if err != nil || !dc.Wait() {
			t.Fatalf("publish to %q: %v", exchange, err)
		}
	}
	republish := func(d amqp.Delivery) {
		t.Helper()
		h := amqp.Table{}
		for k, v := range d.Headers {
			h[k] = v
		}
		h["x-original-exchange"], h["x-original-routingKey"] = d.Exchange, d.RoutingKey
		h["x-exception-message"] = "Listener threw exception"
		publish("DLX", "orders.audit", amqp.Publishing{MessageId: d.MessageId, DeliveryMode: amqp.Persistent, Headers: h, Body: d.Body})
		if err := d.Ack(false); err != nil {
			t.Fatal(err)
		}
	}
	// Two laps each way; the count after the second lap tells.
	publish("orders", "orders", amqp.Publishing{MessageId: "republished", Body: []byte("{}")})
	d, _ := lapCount(t, ch)
	republish(d)
	d, _ = lapCount(t, ch)
	republish(d)
	d, republished := lapCount(t, ch)
	_ = d.Ack(false)
	publish("orders", "orders", amqp.Publishing{MessageId: "rejected", Body: []byte("{}")})
	for range 2 {
		d, _ = lapCount(t, ch)
		if err := d.Nack(false, false); err != nil {
			t.Fatal(err)
		}
	}
	d, rejected := lapCount(t, ch)
	_ = d.Ack(false)
	wantRepublished := int64(2)
	if topology.CarriesDeaths(version) {
		wantRepublished = 1
	}
	if republished != wantRepublished || rejected != 2 {
		t.Fatalf("RabbitMQ %s: x-death count after two laps: republished %d (want %d), rejected %d (want 2)", version, republished, wantRepublished, rejected)
	}

	// No consumer yet: no loop to flag.
	if code, out, errOut := runLadder(t, "lint", "--for", "4.3"); code != exitOK || !strings.HasSuffix(out, ": 0 findings\n") {
		t.Fatalf("unconsumed: exit %d %q %q", code, out, errOut)
	}
	cons := brokertest.Channel(t, r, "test lint spring consumer")
	if _, err := cons.Consume("orders.audit", "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	var rep lintReport
	var code int
	var errOut string
	// The management API reports the consumer within its stats interval.
	ok := brokertest.WaitFor(30*time.Second, func() bool {
		var out string
		code, out, errOut = runLadder(t, "lint", "--for", "4.3", "-o", "json")
		rep.Findings = nil
		return json.Unmarshal([]byte(out), &rep) == nil && len(rep.Findings) > 0
	})
	if !ok || len(rep.Findings) != 1 || rep.Findings[0].Code != topology.CodeClientXDeath || rep.Findings[0].Queue != "orders.audit" {
		t.Fatalf("findings %+v", rep.Findings)
	}
	if code != exitError || !strings.Contains(errOut, "lint: 1 thing breaks on RabbitMQ 4.3") {
		t.Errorf("exit %d %q", code, errOut)
	}
}
