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

// Celery (testdata/celery/app.py, a solo worker of Debian's python3-celery):
// the task retries in the consumer (self.retry publishes it again with
// retries+1 and an eta; no queue waits), then Reject(requeue=False) makes
// the broker dead-letter it from tasks into tasks.dlq. ladder must see
// tasks → tasks.dlq as a ladder whose retries happen in the consumer, read
// Celery's retries and eta, and move every task back to tasks.
func TestCeleryRetryThenReject(t *testing.T) {
	t.Parallel()
	python := requireLibrary(t, "Celery and kombu for Python 3 (Debian's python3-celery, python3-kombu)", func(bin string) *exec.Cmd {
		return exec.Command(bin, "-c", "import celery, kombu")
	}, "/usr/bin/python3", "python3")
	r := brokertest.OwnVhost(t)
	const (
		queue   = "tasks"
		dlq     = queue + ".dlq"
		n       = 4
		retries = 2
	)
	runScript(t, testdata(t, "celery"), []string{
		"CONFORMANCE_URL=" + scriptURL(t, r), "CONFORMANCE_QUEUE=" + queue, fmt.Sprint("CONFORMANCE_COUNT=", n),
		fmt.Sprint("CONFORMANCE_RETRIES=", retries), "CONFORMANCE_COUNTDOWN_S=0.1",
	}, python, "app.py")
	ch := brokertest.Channel(t, r, "conformance test")
	waitDepth(t, ch, dlq, n, 30*time.Second)

	rep := topology(t, r)
	if l := rep.ladderOf(t, queue); l != nil {
		if len(l.Tiers) != 0 {
			t.Errorf("tiers %+v, want none: Celery retries in the worker", l.Tiers)
		}
		if l.DLQ == nil || l.DLQ.Name != dlq {
			t.Errorf("dlq %+v, want %s", l.DLQ, dlq)
		}
		if !l.has("dlq_from") || l.DLQFrom != "" {
			t.Errorf("dlq_from %q (present: %v), want \"\": the DLQ is the queue's dead-letter route", l.DLQFrom, l.has("dlq_from"))
		}
		if eq := names(t, l.ErrorQueues); !l.has("error_queues") || len(eq) != 0 {
			t.Errorf("error_queues %q (present: %v), want none besides the DLQ", eq, l.has("error_queues"))
		}
		if !l.has("retries_in_consumer") || !l.RetriesInConsumer {
			t.Errorf("retries_in_consumer %v (present: %v), want true", l.RetriesInConsumer, l.has("retries_in_consumer"))
		}
	}
	for _, f := range rep.findingsOn(queue) {
		if strings.HasPrefix(f, "no-dlq") {
			t.Errorf("false finding on %s: %s", queue, f)
		}
	}
	if slices.Contains(rep.mains(t), dlq) {
		t.Errorf("%s is reported as a ladder's main queue", dlq)
	}

	ids := seq(queue, n)
	for _, m := range peek(t, r, dlq, n).Messages {
		id, _ := m.Headers["id"].(string)
		if !slices.Contains(ids, id) {
			t.Errorf("unexpected task %q in %s", id, dlq)
			continue
		}
		if m.Retry.Framework != "Celery" || m.Retry.Count != retries || m.Retry.Source != "retries" {
			t.Errorf("%s: framework %q, count %d from %q; want Celery, %d from retries", id, m.Retry.Framework, m.Retry.Count, m.Retry.Source, retries)
		}
		// The due time is the eta Celery wrote on its last retry.
		eta, _ := m.Headers["eta"].(string)
		want, err := time.Parse(time.RFC3339Nano, eta)
		if err != nil {
			t.Errorf("%s: eta header %q: %v", id, eta, err)
		}
		got, err := time.Parse(time.RFC3339Nano, m.Retry.DueTime)
		if err != nil || !got.Equal(want) || m.Retry.DueSource != "eta" {
			t.Errorf("%s: due %q from %q, want the eta %s", id, m.Retry.DueTime, m.Retry.DueSource, eta)
		}
		// Celery keeps its error in the result backend: no text to show.
		if m.Retry.LastError != "" {
			t.Errorf("%s: last error %q, but Celery writes none in headers", id, m.Retry.LastError)
		}
		if !slices.ContainsFunc(m.Deaths, func(d death) bool { return d.Queue == queue && d.Reason == "rejected" }) {
			t.Errorf("%s: deaths %+v, want one rejected from %s", id, m.Deaths, queue)
		}
	}

	out := moveToOrigin(t, r, dlq, n)
	t.Logf("move: %s", strings.TrimSpace(out))
	waitDepth(t, ch, queue, n, 30*time.Second)
	assertAllIn(t, idsByQueue(t, r, ch, func(d amqp.Delivery) string {
		id, _ := d.Headers["id"].(string) // Celery's task id (protocol 2)
		return id
	}), queue, ids)
}
