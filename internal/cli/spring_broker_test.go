package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry"

	amqp "github.com/rabbitmq/amqp091-go"
)

// springConsumerGroups declares, in the test's own vhost, what Spring Cloud
// Stream's RabbitMQ binder declares for destination "orders" with consumer
// groups billing and audit (binder defaults, autoBindDlq=true; see
// spring-cloud-stream-binder-rabbit-core's RabbitExchangeQueueProvisioner:
// provisionConsumerDestination, autoBindDLQ, queueArgs): the topic
// exchange "orders"; durable queues "orders.<group>" bound to it with "#",
// each with x-dead-letter-exchange "DLX" and x-dead-letter-routing-key its
// own name; the direct exchange "DLX"; durable DLQs "orders.<group>.dlq"
// bound to DLX with the group queue's name.
func springConsumerGroups(t *testing.T, ch *amqp.Channel) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ch.ExchangeDeclare("orders", "topic", true, false, false, false, nil))
	must(ch.ExchangeDeclare("DLX", "direct", true, false, false, false, nil))
	for _, g := range []string{"billing", "audit"} {
		q := "orders." + g
		_, err := ch.QueueDeclare(q, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "DLX", "x-dead-letter-routing-key": q})
		must(err)
		must(ch.QueueBind(q, "#", "orders", false, nil))
		_, err = ch.QueueDeclare(q+".dlq", true, false, false, false, nil)
		must(err)
		must(ch.QueueBind(q+".dlq", q, "DLX", false, nil))
	}
}

// failInAudit publishes n messages to orders as a Spring producer does
// (routing key = destination): both groups get each one. The billing group
// processes its copies; the audit group fails all of them, the first half
// by rejecting (the broker dead-letters: x-death), the rest the way
// republishToDlq does (RabbitMessageChannelBinder: publish to DLX with the
// queue's name as key, x-original-exchange, x-original-routingKey and
// x-exception-message set, then ack: no x-death).
func failInAudit(t *testing.T, ch *amqp.Channel, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "orders", "orders", false, false, amqp.Publishing{
			MessageId: fmt.Sprintf("%s-%d", prefix, i), DeliveryMode: amqp.Persistent, ContentType: "application/json", Body: []byte(`{"order":1}`)})
		if err != nil || !dc.Wait() {
			t.Fatalf("publish: %v", err)
		}
	}
	take := func(q string) amqp.Delivery {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			d, ok, err := ch.Get(q, false)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				return d
			}
		}
		t.Fatalf("nothing in %s", q)
		return amqp.Delivery{}
	}
	for range n {
		d := take("orders.billing")
		_ = d.Ack(false)
	}
	for i := range n {
		d := take("orders.audit")
		if i < n/2 {
			if err := d.Nack(false, false); err != nil {
				t.Fatal(err)
			}
			continue
		}
		h := amqp.Table{}
		for k, v := range d.Headers {
			h[k] = v
		}
		h["x-original-exchange"], h["x-original-routingKey"] = d.Exchange, d.RoutingKey
		h["x-exception-message"] = "Listener threw exception"
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "DLX", "orders.audit", false, false, amqp.Publishing{
			MessageId: d.MessageId, DeliveryMode: d.DeliveryMode, ContentType: d.ContentType, Headers: h, Body: d.Body})
		if err != nil || !dc.Wait() {
			t.Fatalf("republish: %v", err)
		}
		_ = d.Ack(false)
	}
}

// idsIn takes every message out of q and counts them by id.
func idsIn(t *testing.T, ch *amqp.Channel, q string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for {
		d, ok, err := ch.Get(q, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out[d.MessageId]++
	}
}

func waitDepthCLI(t *testing.T, r *rabbit.Resolved, q string, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for depthOf(t, r, q) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d, want %d", q, depthOf(t, r, q), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Issue 20's Spring case: --to origin returns every message that failed in
// the audit group to orders.audit, by id, and leaves orders.billing as it
// was, whether the broker dead-lettered it (x-death) or Spring republished
// it (no x-death); now and after a delay (a quorum wait queue on 3.10+).
// The text dry run names every queue the route reaches, and why it does
// not take the recorded route.
func TestMoveToOriginReturnsSpringFailuresToTheirGroupOnly(t *testing.T) {
	r := vhostEnv(t)
	conn, err := r.DialAMQP(context.Background(), "test spring")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	springConsumerGroups(t, ch)
	for _, run := range []struct {
		prefix string
		delay  []string
	}{{"now", nil}, {"later", []string{"--delay", "2s"}}} {
		const n = 6
		failInAudit(t, ch, run.prefix, n)
		waitDepthCLI(t, r, "orders.audit.dlq", n, 30*time.Second)
		if depthOf(t, r, "orders.audit") != 0 || depthOf(t, r, "orders.billing") != 0 {
			t.Fatal("setup left messages in the group queues")
		}

		args := append([]string{"move", "--from", "orders.audit.dlq", "--to", "origin"}, run.delay...)
		code, out, errOut := runLadder(t, append(args, "--dry-run")...)
		if code != exitOK {
			t.Fatalf("%s dry run: exit %d %s", run.prefix, code, errOut)
		}
		for _, want := range []string{"REACHES", "queues reached: orders.audit\n", `exchange "orders" key "orders" routes to orders.billing too`} {
			if !strings.Contains(out, want) {
				t.Errorf("%s dry run lacks %q:\n%s", run.prefix, want, out)
			}
		}
		if strings.Contains(out, "orders.audit, orders.billing") {
			t.Errorf("%s dry run plans to reach orders.billing:\n%s", run.prefix, out)
		}
		code, out, errOut = runLadder(t, append(args, "--yes")...)
		if code != exitOK || !strings.Contains(out, fmt.Sprintf("moved %d of %d", n, n)) {
			t.Fatalf("%s move: exit %d %s %s", run.prefix, code, out, errOut)
		}
		waitDepthCLI(t, r, "orders.audit", n, 30*time.Second)
		got := idsIn(t, ch, "orders.audit")
		for i := range n {
			if id := fmt.Sprintf("%s-%d", run.prefix, i); got[id] != 1 {
				t.Errorf("%s: orders.audit holds %s %d times", run.prefix, id, got[id])
			}
		}
		if len(got) != n || depthOf(t, r, "orders.billing") != 0 || depthOf(t, r, "orders.audit.dlq") != 0 {
			t.Errorf("%s: audit %v, billing %d, dlq %d", run.prefix, got, depthOf(t, r, "orders.billing"), depthOf(t, r, "orders.audit.dlq"))
		}
		t.Logf("%s: orders.audit got %d of %d by id; orders.billing holds %d", run.prefix, len(got), n, depthOf(t, r, "orders.billing"))
	}
}

// Issue 32: a Spring AMQP application's failures, given up on after its
// retry queue expired them twice and republished by
// RepublishMessageRecoverer to a queue only their headers tie to the work
// queue (brokertest.SpringRetry). The first peek of that queue, by a
// fresh client, counts the 2 retries a second peek counts, says the count
// rests on what the messages showed, and which queue's x-death counts:
// in -o json and in text.
func TestFirstPeekOfSpringFailuresCountsTheRetries(t *testing.T) {
	r := vhostEnv(t)
	ch := brokertest.Channel(t, r, "test spring retry")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	s := brokertest.NewSpringRetry("orders")
	if err := s.Declare(ch); err != nil {
		t.Fatal(err)
	}
	const n = 3
	if err := s.Fail(context.Background(), ch, "spring", n, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, look := range []string{"first", "second"} {
		code, out, errOut := runLadder(t, "peek", s.Failed, "-o", "json")
		var res broker.PeekResult
		if code != exitOK || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("%s peek: exit %d %s", look, code, errOut)
		}
		if len(res.Messages) != n {
			t.Fatalf("%s peek: %d messages, want %d", look, len(res.Messages), n)
		}
		for _, m := range res.Messages {
			rs := m.Retry
			if rs.Count != s.Expiries || rs.Source != retry.SourceXDeath || !slices.Equal(rs.CountedIn, []string{s.Retry}) || rs.CountFrom != retry.CountFromMessages {
				t.Errorf("%s peek, %s: count %d from %q in %v (%q); want %d from x-death in %s, learned from the messages",
					look, m.Properties.MessageID, rs.Count, rs.Source, rs.CountedIn, rs.CountFrom, s.Expiries, s.Retry)
			}
		}
	}
	// A streamed read chooses by the same count: a fresh dump's
	// --where retries>=2 writes every message.
	code, out, errOut := runLadder(t, "dump", s.Failed, "--out", "-", "--where", "retries>=2")
	if lines := strings.Count(out, "\n"); code != exitOK || lines != n+1 {
		t.Errorf("dump --where retries>=2: exit %d, %d lines (want a header and %d messages) %s", code, lines, n, errOut)
	}
	code, out, errOut = runLadder(t, "peek", s.Failed)
	if code != exitOK {
		t.Fatalf("text peek: exit %d %s", code, errOut)
	}
	for _, want := range []string{"~2 (x-death)", "~ retries from x-death in orders.retry: its ladder's retry queues as the messages read showed them"} {
		if !strings.Contains(out, want) {
			t.Errorf("text peek lacks %q:\n%s", want, out)
		}
	}
	t.Logf("text peek:\n%s", out)
	if strings.Contains(out, "no retry") || regexp.MustCompile(`(?m)^\d+\s+spring-\d\s+\S+\s+0\b`).MatchString(out) {
		t.Errorf("text peek shows no retries:\n%s", out)
	}
}
