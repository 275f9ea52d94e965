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

// aio-pika's Master/Worker pattern (testdata/aiopika/master.py, Debian's
// python3-aio-pika, its own code): with reject_on_redelivered a failing
// task is requeued once, straight back to its queue, and dead-lettered
// when it fails redelivered, through the dead-letter exchange the
// application declared the worker's queue with. No header of its own: the
// broker's x-death is all the message says. ladder must see the task
// queue as a ladder whose DLQ is on its dead-letter route and whose retry
// happens in the consumer (no wait queue), read the rejection from
// x-death, and move every task back to its queue.
func TestAioPikaMasterWorkerRejectOnRedelivered(t *testing.T) {
	t.Parallel()
	python := requireLibrary(t, "aio-pika for Python 3 (Debian's python3-aio-pika)", func(bin string) *exec.Cmd {
		return exec.Command(bin, "-c", "import aio_pika.patterns")
	}, "/usr/bin/python3", "python3")
	r := brokertest.OwnVhost(t)
	const (
		queue = "resize_image"
		dlq   = queue + ".dead"
		n     = 4
	)
	runScript(t, testdata(t, "aiopika"), []string{
		"CONFORMANCE_URL=" + scriptURL(t, r), "CONFORMANCE_QUEUE=" + queue, fmt.Sprint("CONFORMANCE_COUNT=", n),
	}, python, "master.py")
	ch := brokertest.Channel(t, r, "conformance test")
	waitDepth(t, ch, dlq, n, 30*time.Second)

	rep := topology(t, r)
	if l := rep.ladderOf(t, queue); l != nil {
		if l.DLQ == nil || l.DLQ.Name != dlq || !l.has("dlq_from") || l.DLQFrom != "" {
			t.Errorf("dlq %+v from %q, want %s on the dead-letter route", l.DLQ, l.DLQFrom, dlq)
		}
		if len(l.Tiers) != 0 || !l.RetriesInConsumer {
			t.Errorf("tiers %+v, retries in consumer %v; want none, true: the retry is a requeue", l.Tiers, l.RetriesInConsumer)
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

	ids := seq("thumb", n)
	for _, m := range peek(t, r, dlq, n).Messages {
		id := m.Properties.MessageID
		if !slices.Contains(ids, id) {
			t.Errorf("unexpected message %q in %s", id, dlq)
			continue
		}
		// One dead-lettering (the requeue leaves no trace but the
		// redelivered flag, gone with the delivery): x-death's count.
		if len(m.Deaths) != 1 || m.Deaths[0].Queue != queue || m.Deaths[0].Reason != "rejected" || m.Deaths[0].Count != 1 {
			t.Errorf("%s: deaths %+v, want one: rejected from %s", id, m.Deaths, queue)
		}
		if m.Retry.Count != 1 || m.Retry.Source != "x-death" || m.Retry.Framework != "" || len(m.Retry.Guessed) != 0 {
			t.Errorf("%s: count %d from %q, framework %q, guessed %v; want 1 from x-death, no framework, nothing guessed",
				id, m.Retry.Count, m.Retry.Source, m.Retry.Framework, m.Retry.Guessed)
		}
		if want := `{"image_id": "img-`; !strings.HasPrefix(m.BodyPreview, want) {
			t.Errorf("%s: body %q, want JsonMaster's kwargs %s…}", id, m.BodyPreview, want)
		}
	}

	out := moveToOrigin(t, r, dlq, n)
	t.Logf("move: %s", strings.TrimSpace(out))
	waitDepth(t, ch, queue, n, 30*time.Second)
	assertAllIn(t, idsByQueue(t, r, ch, func(d amqp.Delivery) string { return d.MessageId }), queue, ids)
}
