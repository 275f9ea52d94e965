package conformance

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// Sneakers' Maxretry handler (testdata/sneakers/maxretry.rb, on Bunny):
// mailer dead-letters to its mailer-retry tier (a TTL queue returning
// through mailer-retry-requeue); after retry_max_times retries the handler
// publishes the message to mailer-error with a retry_info header. ladder
// must see mailer as a ladder with that tier and mailer-error as its dead
// end (by Sneakers' naming: no dead-letter route leads there), decode
// retry_info, and move every message back to mailer.
func TestSneakersMaxretry(t *testing.T) {
	t.Parallel()
	ruby := requireLibrary(t, "Ruby with Bunny (Debian's ruby-bunny)", func(bin string) *exec.Cmd {
		return exec.Command(bin, "-e", "require 'bunny'")
	}, "ruby")
	r := brokertest.OwnVhost(t)
	const (
		queue     = "mailer"
		n         = 4
		retries   = 2
		timeoutMS = 200
	)
	runScript(t, testdata(t, "sneakers"), []string{
		"CONFORMANCE_URL=" + scriptURL(t, r), "CONFORMANCE_QUEUE=" + queue, fmt.Sprint("CONFORMANCE_COUNT=", n),
		fmt.Sprint("CONFORMANCE_RETRIES=", retries), fmt.Sprint("CONFORMANCE_RETRY_TIMEOUT_MS=", timeoutMS),
	}, ruby, "maxretry.rb")
	ch := brokertest.Channel(t, r, "conformance test")
	waitDepth(t, ch, queue+"-error", n, 30*time.Second)

	rep := topology(t, r)
	if l := rep.ladderOf(t, queue); l != nil {
		if len(l.Tiers) != 1 || l.Tiers[0].Name != queue+"-retry" || l.Tiers[0].TTLMS != timeoutMS {
			t.Errorf("tiers %+v, want mailer-retry with TTL %d ms", l.Tiers, timeoutMS)
		}
		if l.DLQ == nil || l.DLQ.Name != queue+"-error" {
			t.Errorf("dlq %+v, want %s-error", l.DLQ, queue)
		}
		if !l.has("dlq_from") || !strings.HasPrefix(l.DLQFrom, "Sneakers") || !strings.Contains(l.DLQFrom, "{queue}-error") {
			t.Errorf("dlq_from %q (present: %v), want Sneakers' naming {queue}-error", l.DLQFrom, l.has("dlq_from"))
		}
		if eq := names(t, l.ErrorQueues); !l.has("error_queues") || len(eq) != 0 {
			t.Errorf("error_queues %q (present: %v), want none besides the DLQ", eq, l.has("error_queues"))
		}
		if l.RetriesInConsumer {
			t.Error("retries_in_consumer is true: Sneakers retries through its retry queue")
		}
	}
	for _, f := range rep.findingsOn(queue) {
		if strings.HasPrefix(f, "no-dlq") {
			t.Errorf("false finding on %s: %s", queue, f)
		}
	}
	for _, q := range []string{queue + "-retry", queue + "-error"} {
		if slices.Contains(rep.mains(t), q) {
			t.Errorf("%s is reported as a ladder's main queue", q)
		}
	}

	// Maxretry counts attempts (num_attempts = failures + 1): the message
	// failed retries+1 times, so it was retried `retries` times.
	ids := seq(queue, n)
	for _, m := range peek(t, r, queue+"-error", n).Messages {
		id := m.BodyPreview // Maxretry keeps the body only (message_id is in retry_info.properties)
		if !slices.Contains(ids, id) {
			t.Errorf("unexpected message %q in %s-error", id, queue)
			continue
		}
		if m.Retry.Framework != "Sneakers" || m.Retry.Count != retries {
			t.Errorf("%s: framework %q, count %d from %q; want Sneakers, %d", id, m.Retry.Framework, m.Retry.Count, m.Retry.Source, retries)
		}
		if want := "could not send mail " + id; m.Retry.LastError != want || m.Retry.ErrorType != "RuntimeError" {
			t.Errorf("%s: error %q of type %q, want %q of type RuntimeError", id, m.Retry.LastError, m.Retry.ErrorType, want)
		}
		if m.RoutingKey != queue {
			t.Errorf("%s: routing key %q, want %s (Maxretry publishes with the delivery's key)", id, m.RoutingKey, queue)
		}
	}

	out := moveToOrigin(t, r, queue+"-error", n)
	t.Logf("move: %s", strings.TrimSpace(out))
	waitDepth(t, ch, queue, n, 30*time.Second)
	assertAllIn(t, idsByQueue(t, r, ch, func(d amqp.Delivery) string { return string(d.Body) }), queue, ids)
}
