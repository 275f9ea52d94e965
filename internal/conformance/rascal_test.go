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

// rascal (testdata/rascal: its README's delayed retry loop, on the npm
// package pinned in package-lock.json): the subscriber republishes a
// failed message once, forwards it twice through the delay exchange to
// delay:1s (whose TTL dead-letters it to the retry exchange, which routes
// it back by the CC key rascal adds), then nacks it into
// dead_letters:billing. ladder must see the work queue as a ladder with
// that 1 s delay and its dead letter queue, read rascal's recovery headers,
// and move every message back to the work queue.
func TestRascalDelayedRetryLoop(t *testing.T) {
	t.Parallel()
	dir := testdata(t, "rascal")
	node := requireLibrary(t, "rascal for Node.js (npm ci in internal/conformance/testdata/rascal)", func(bin string) *exec.Cmd {
		cmd := exec.Command(bin, "-e", "require('rascal'); require('amqplib')")
		cmd.Dir = dir
		return cmd
	}, "node")
	r := brokertest.OwnVhost(t)
	// The names in testdata/rascal/config.json.
	const (
		queue = "billing:invoice:save"
		delay = "delay:1s"
		dlq   = "dead_letters:billing"
		n     = 4
		// republish once, then forward twice (config.json's recovery).
		republished, forwarded = 1, 2
	)
	runScript(t, dir, []string{
		"CONFORMANCE_URL=" + scriptURL(t, r), "CONFORMANCE_VHOST=" + r.Vhost, fmt.Sprint("CONFORMANCE_COUNT=", n),
	}, node, "recover.js")
	ch := brokertest.Channel(t, r, "conformance test")
	waitDepth(t, ch, dlq, n, 30*time.Second)

	rep := topology(t, r)
	if l := rep.ladderOf(t, queue); l != nil {
		if l.DLQ == nil || l.DLQ.Name != dlq {
			t.Errorf("dlq %+v, want %s", l.DLQ, dlq)
		}
		if !l.has("dlq_from") || l.DLQFrom != "" {
			t.Errorf("dlq_from %q (present: %v), want \"\": the DLQ is the queue's dead-letter route", l.DLQFrom, l.has("dlq_from"))
		}
		if eq := names(t, l.ErrorQueues); !l.has("error_queues") || len(eq) != 0 {
			t.Errorf("error_queues %q (present: %v), want none besides the DLQ", eq, l.has("error_queues"))
		}
		if l.RetriesInConsumer {
			t.Error("retries_in_consumer is true: rascal waits in delay:1s")
		}
		// delay:1s returns to whichever queue the CC key rascal adds names
		// (retry[<queue>.#] -> <queue>): a delay shared by every queue so
		// bound, here only this one. Either as this ladder's tier or as a
		// shared delay, its 1 s must be found.
		asTier := slices.ContainsFunc(l.Tiers, func(tr tier) bool { return tr.Name == delay && tr.TTLMS == 1000 })
		shared := slices.ContainsFunc(l.Delays, func(d delayReport) bool {
			return slices.Contains(names(t, d.Queues), delay) && d.MinTTLMS == 1000 && d.MaxTTLMS == 1000
		})
		if !asTier && !shared {
			t.Errorf("%s (TTL 1000 ms) is neither a tier (%+v) nor a delay (%+v)", delay, l.Tiers, l.Delays)
		}
	}
	for _, f := range rep.findingsOn(queue) {
		if strings.HasPrefix(f, "no-dlq") {
			t.Errorf("false finding on %s: %s", queue, f)
		}
	}
	for _, q := range []string{delay, dlq} {
		if slices.Contains(rep.mains(t), q) {
			t.Errorf("%s is reported as a ladder's main queue", q)
		}
	}

	ids := seq("invoice", n)
	for _, m := range peek(t, r, dlq, n).Messages {
		id := m.Properties.MessageID
		if !slices.Contains(ids, id) {
			t.Errorf("unexpected message %q in %s", id, dlq)
			continue
		}
		// rascal counts each strategy's attempts on its own
		// (recovery.<queue>.republished, .forwarded): the message was
		// retried as many times as both together.
		if m.Retry.Framework != "rascal" || m.Retry.Count != republished+forwarded {
			t.Errorf("%s: framework %q, count %d from %q; want rascal, %d (republished %d + forwarded %d)",
				id, m.Retry.Framework, m.Retry.Count, m.Retry.Source, republished+forwarded, republished, forwarded)
		}
		if want := "payment service unavailable for " + id; m.Retry.LastError != want || m.Retry.ErrorType != "ECONNREFUSED" {
			t.Errorf("%s: error %q of type %q, want %q of type ECONNREFUSED", id, m.Retry.LastError, m.Retry.ErrorType, want)
		}
		if m.Retry.FailedQueue != queue || m.Retry.OriginalExchange != "service" || m.Retry.OriginalRoutingKey != "billing.invoice.created" {
			t.Errorf("%s: failed in %q, first published to %q key %q; want %s, service key billing.invoice.created",
				id, m.Retry.FailedQueue, m.Retry.OriginalExchange, m.Retry.OriginalRoutingKey, queue)
		}
	}

	out := moveToOrigin(t, r, dlq, n)
	t.Logf("move: %s", strings.TrimSpace(out))
	waitDepth(t, ch, queue, n, 30*time.Second)
	assertAllIn(t, idsByQueue(t, r, ch, func(d amqp.Delivery) string { return d.MessageId }), queue, ids)
}
