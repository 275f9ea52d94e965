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

// foo-foo-mq (testdata/foofoomq/handler.js, on the npm package pinned in
// package-lock.json): its JSON topology gives the work queue a dead-letter
// exchange (deadLetter); what its handler rejects and what its serializer
// cannot read (rejected before any handler) both end in the DLQ, with no
// header of foo-foo-mq's, only x-death. ladder must see the work queue as
// a ladder whose DLQ is on its dead-letter route, read both kinds as one
// rejection each, and move every message back to the work queue, the
// broken JSON byte for byte.
func TestFooFooMQDeadLetter(t *testing.T) {
	t.Parallel()
	dir := testdata(t, "foofoomq")
	node := requireLibrary(t, "foo-foo-mq for Node.js (npm ci in internal/conformance/testdata/foofoomq)", func(bin string) *exec.Cmd {
		cmd := exec.Command(bin, "-e", "require('foo-foo-mq'); require('amqplib')")
		cmd.Dir = dir
		return cmd
	}, "node")
	r := brokertest.OwnVhost(t)
	// The names in handler.js.
	const (
		queue = "orders.fulfil"
		dlq   = "orders.fulfil.dead"
		n     = 3
	)
	runScript(t, dir, []string{"CONFORMANCE_URL=" + scriptURL(t, r), fmt.Sprint("CONFORMANCE_COUNT=", n)}, node, "handler.js")
	ch := brokertest.Channel(t, r, "conformance test")
	waitDepth(t, ch, dlq, 2*n, 30*time.Second)

	rep := topology(t, r)
	if l := rep.ladderOf(t, queue); l != nil {
		if l.DLQ == nil || l.DLQ.Name != dlq || !l.has("dlq_from") || l.DLQFrom != "" {
			t.Errorf("dlq %+v from %q, want %s on the dead-letter route", l.DLQ, l.DLQFrom, dlq)
		}
		if len(l.Tiers) != 0 || !l.RetriesInConsumer {
			t.Errorf("tiers %+v, retries in consumer %v; want none, true", l.Tiers, l.RetriesInConsumer)
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

	ids := append(seq("order", n), seq("garbled", n)...)
	for _, m := range peek(t, r, dlq, 2*n).Messages {
		id := m.Properties.MessageID
		if !slices.Contains(ids, id) {
			t.Errorf("unexpected message %q in %s", id, dlq)
			continue
		}
		if len(m.Deaths) != 1 || m.Deaths[0].Queue != queue || m.Deaths[0].Reason != "rejected" || m.Deaths[0].Count != 1 {
			t.Errorf("%s: deaths %+v, want one: rejected from %s", id, m.Deaths, queue)
		}
		if m.Retry.Count != 1 || m.Retry.Source != "x-death" || m.Retry.Framework != "" || len(m.Retry.Guessed) != 0 {
			t.Errorf("%s: count %d from %q, framework %q, guessed %v; want 1 from x-death, no framework, nothing guessed",
				id, m.Retry.Count, m.Retry.Source, m.Retry.Framework, m.Retry.Guessed)
		}
	}

	// foo-foo-mq stamps Date.now() (milliseconds) where AMQP means
	// seconds: the JSON faces keep it as timestamp_raw rather than fail.
	var plan struct {
		Planned []struct {
			MessageID string `json:"message_id"`
		} `json:"planned"`
	}
	ladderJSON(t, r, &plan, "move", "--from", dlq, "--to", "origin", "--dry-run")
	if len(plan.Planned) != 2*n {
		t.Errorf("move --dry-run -o json plans %d messages, want %d", len(plan.Planned), 2*n)
	}
	var pk struct {
		Messages []struct {
			Properties struct {
				Timestamp    *string `json:"timestamp"`
				TimestampRaw int64   `json:"timestamp_raw"`
			} `json:"properties"`
		} `json:"messages"`
	}
	ladderJSON(t, r, &pk, "peek", dlq, "-n", fmt.Sprint(n))
	for _, m := range pk.Messages {
		if p := m.Properties; p.Timestamp != nil || p.TimestampRaw < 1e12 {
			t.Errorf("properties timestamp %v, raw %d; want foo-foo-mq's Date.now() kept raw", p.Timestamp, p.TimestampRaw)
		}
	}

	out := moveToOrigin(t, r, dlq, 2*n)
	t.Logf("move: %s", strings.TrimSpace(out))
	waitDepth(t, ch, queue, 2*n, 30*time.Second)
	bodies := map[string]string{}
	assertAllIn(t, idsByQueue(t, r, ch, func(d amqp.Delivery) string {
		bodies[d.MessageId] = string(d.Body)
		return d.MessageId
	}), queue, ids)
	for i := range n {
		if id, want := fmt.Sprint("garbled-", i), fmt.Sprintf(`{"order": %d, "sku": `, i); bodies[id] != want {
			t.Errorf("%s came back with body %q, want %q as sent", id, bodies[id], want)
		}
	}
}
