package conformance

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// Dramatiq's RabbitmqBroker (testdata/dramatiq/broker.py, on Debian's
// python3-pika): default and default.DQ dead-letter through the default
// exchange to default.XQ; a failed message is enqueued again to
// default.DQ with an eta in its JSON body, which the worker holds until
// due and then publishes to default; once its retries are spent the
// worker nacks it without requeue and the broker dead-letters it into
// default.XQ. While a worker runs, ladder must see one ladder, default,
// with default.XQ as its DLQ and default.DQ as a delay its workers hold;
// it must read where each message failed from x-death, and move every
// message back to default.
func TestDramatiqRabbitmqBroker(t *testing.T) {
	t.Parallel()
	python := requireLibrary(t, "pika for Python 3 (Debian's python3-pika)", func(bin string) *exec.Cmd {
		return exec.Command(bin, "-c", "import pika")
	}, "/usr/bin/python3", "python3")
	r := brokertest.OwnVhost(t)
	const (
		queue   = "default" // an actor's queue_name unless it says otherwise
		dq      = queue + ".DQ"
		xq      = queue + ".XQ"
		n       = 4
		retries = 2
	)
	runScript(t, testdata(t, "dramatiq"), []string{
		"CONFORMANCE_URL=" + scriptURL(t, r), "CONFORMANCE_QUEUE=" + queue, fmt.Sprint("CONFORMANCE_COUNT=", n),
		fmt.Sprint("CONFORMANCE_RETRIES=", retries), "CONFORMANCE_MIN_BACKOFF_MS=50",
	}, python, "broker.py")
	ch := brokertest.Channel(t, r, "conformance test")
	waitDepth(t, ch, xq, n, 30*time.Second)

	// checkTopology checks one reading of the topology (when says which).
	checkTopology := func(when string, rep topologyReport) {
		t.Helper()
		if l := rep.ladderOf(t, queue); l != nil {
			if l.DLQ == nil || l.DLQ.Name != xq || l.DLQFrom != "" {
				t.Errorf("%s: dlq %+v from %q, want %s by the queue's dead-letter route", when, l.DLQ, l.DLQFrom, xq)
			}
			if len(l.Tiers) != 0 {
				t.Errorf("%s: tiers %+v, want none: %s has no TTL, the workers hold its messages", when, l.Tiers, dq)
			}
			var delays []struct {
				Name            string   `json:"name"`
				Queues          []string `json:"queues"`
				HeldByConsumers bool     `json:"held_by_consumers"`
			}
			if err := json.Unmarshal(l.raw["delays"], &delays); err != nil {
				t.Fatalf("%s: delays: %v: %s", when, err, l.raw["delays"])
			}
			if len(delays) != 1 || delays[0].Name != dq || !slices.Equal(delays[0].Queues, []string{dq}) || !delays[0].HeldByConsumers {
				t.Errorf("%s: delays %+v, want one, %s, held by consumers", when, delays, dq)
			}
			if l.RetriesInConsumer {
				t.Errorf("%s: retries_in_consumer is true: Dramatiq's retries wait in %s", when, dq)
			}
		}
		for _, q := range []string{queue, dq, xq} {
			if f := rep.findingsOn(q); len(f) != 0 {
				t.Errorf("%s: findings on %s: %q, want none", when, q, f)
			}
		}
		if mains := rep.mains(t); !slices.Equal(mains, []string{queue}) {
			t.Errorf("%s: ladders of %q, want exactly one, of %s", when, mains, queue)
		}
	}

	// Expected (issue 23): the queues' names and dead-letter routes say
	// which is which (Dramatiq's {queue}.XQ, {queue}.DQ) with no worker
	// running too, as when one inspects a DLQ after the workers stopped.
	checkTopology("no worker running", topology(t, r))

	// A Dramatiq worker keeps a consumer on the queue and on its delay
	// queue while it runs (dramatiq/worker.py: a consumer thread for
	// each); these stand in for an idle one while ladder reads the
	// topology. Discovery tells default from default.XQ by them: with no
	// worker running it takes default.XQ for the main queue (issue 23).
	worker := brokertest.Channel(t, r, "conformance test")
	for _, q := range []string{queue, dq} {
		if _, err := worker.Consume(q, "", false, false, false, false, nil); err != nil {
			t.Fatalf("consume %s: %v", q, err)
		}
	}
	dramatiqWaitConsumers(t, r, 30*time.Second, queue, dq)
	checkTopology("worker running", topology(t, r))
	// The worker stops: nothing takes what the move brings back.
	if err := worker.Close(); err != nil {
		t.Fatalf("close the worker's channel: %v", err)
	}

	// Dramatiq writes no headers: the retries and the traceback are in
	// the body's options, which ladder reads by their names (issue 34),
	// saying so: a guess, from the body. x-death alone would say one
	// rejection in default (each retry was a new publish through
	// default.DQ, which dead-letters nothing).
	var pk struct {
		Messages []struct {
			peekMessage
			Origin *struct {
				Exchange   string `json:"exchange"`
				RoutingKey string `json:"routing_key"`
			} `json:"origin"`
		} `json:"messages"`
	}
	ladderJSON(t, r, &pk, "peek", xq, "-n", fmt.Sprint(n))
	if len(pk.Messages) != n {
		t.Fatalf("peek %s shows %d messages, want %d", xq, len(pk.Messages), n)
	}
	ids := seq(queue, n)
	for _, m := range pk.Messages {
		id, opts := dramatiqBody(t, m.BodyPreview)
		if !slices.Contains(ids, id) {
			t.Errorf("unexpected message %q in %s", id, xq)
			continue
		}
		if opts.Retries != retries {
			t.Errorf("%s: the body's options.retries is %d, want %d: the script did not retry as Dramatiq does", id, opts.Retries, retries)
		}
		if m.Retry.Source != "body options.retries" || m.Retry.Count != int64(opts.Retries) || m.Retry.Framework != "" ||
			m.Retry.CountSource != "body options.retries (guessed)" || !slices.Contains(m.Retry.Guessed, "count") {
			t.Errorf("%s: count %d from %q (%q, guessed %v, framework %q), want %d from the body's options.retries, guessed",
				id, m.Retry.Count, m.Retry.Source, m.Retry.CountSource, m.Retry.Guessed, m.Retry.Framework, opts.Retries)
		}
		if !strings.Contains(m.Retry.StackTrace, "Traceback") || !slices.Contains(m.Retry.Guessed, "stack_trace") {
			t.Errorf("%s: stack trace %.80q (guessed %v), want the body's options.traceback", id, m.Retry.StackTrace, m.Retry.Guessed)
		}
		if m.Retry.LastError != "" {
			t.Errorf("%s: last error %q: Dramatiq records a traceback only", id, m.Retry.LastError)
		}
		if len(m.Deaths) != 1 || m.Deaths[0].Queue != queue || m.Deaths[0].Reason != "rejected" {
			t.Errorf("%s: deaths %+v, want one, rejected in %s", id, m.Deaths, queue)
		}
		if m.Origin == nil || m.Origin.Exchange != "" || m.Origin.RoutingKey != queue {
			t.Errorf("%s: origin %+v, want the default exchange with key %s (x-death)", id, m.Origin, queue)
		}
	}

	out := moveToOrigin(t, r, xq, n)
	t.Logf("move: %s", strings.TrimSpace(out))
	waitDepth(t, ch, queue, n, 30*time.Second)
	assertAllIn(t, idsByQueue(t, r, ch, func(d amqp.Delivery) string {
		id, _ := dramatiqBody(t, string(d.Body))
		return id
	}), queue, ids)
}

// dramatiqOptions is the part of a Dramatiq message's options the test
// reads (dramatiq/middleware/retries.py).
type dramatiqOptions struct {
	Retries int `json:"retries"`
}

// dramatiqBody reads a Dramatiq message's id and options from its JSON
// body (dramatiq/message.py): the id is nowhere else.
func dramatiqBody(t *testing.T, body string) (string, dramatiqOptions) {
	t.Helper()
	var m struct {
		MessageID string          `json:"message_id"`
		Options   dramatiqOptions `json:"options"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Errorf("not a Dramatiq message: %v: %.200s", err, body)
	}
	return m.MessageID, m.Options
}

// dramatiqWaitConsumers polls the management API until each of queues has
// a consumer: discovery reads consumers from its (lagging) statistics.
func dramatiqWaitConsumers(t *testing.T, r *rabbit.Resolved, within time.Duration, queues ...string) {
	t.Helper()
	api, err := r.API()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(within)
	for {
		qs, err := api.ListQueuesIn(r.Vhost)
		if err != nil {
			t.Fatalf("queues of vhost %s: %v", r.Vhost, err)
		}
		missing := slices.Clone(queues)
		for _, q := range qs {
			if q.Consumers > 0 {
				missing = slices.DeleteFunc(missing, func(m string) bool { return m == q.Name })
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the management API shows no consumer on %q after %s", missing, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
