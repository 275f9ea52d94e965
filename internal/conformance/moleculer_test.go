package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/retry"
)

// Moleculer Channels (testdata/moleculer/channels.js, the AMQP adapter of
// @moleculer/channels 0.1.8 pinned in package-lock.json): the channel
// handler fails every message; the adapter republishes it straight to
// billing.order.created with x-redelivered-count until maxRetries, then
// publishes its body to the DEAD_LETTER fanout exchange, into
// FAILED_MESSAGES, with only x-original-channel and x-original-group
// (src/adapters/amqp.js moveToDeadLetter). ladder must see no ladder before
// it has read a message (the dead-letter queue is every channel's, fed by
// publishing: the topology fixture in retry/topology/frameworks_more_test.go)
// and no finding; with topology --sample, the group's ladder ending in
// FAILED_MESSAGES; read the origin <group>.<channel> from those headers,
// and move every message back to billing.order.created.
func TestMoleculerChannelsDeadLettering(t *testing.T) {
	t.Parallel()
	dir := testdata(t, "moleculer")
	node := requireLibrary(t, "Moleculer Channels for Node.js (npm ci in internal/conformance/testdata/moleculer)", func(bin string) *exec.Cmd {
		cmd := exec.Command(bin, "-e", "require('moleculer'); require('@moleculer/channels'); require('amqplib')")
		cmd.Dir = dir
		return cmd
	}, "node")
	r := brokertest.OwnVhost(t)
	// The names in channels.js and the adapter's defaults.
	const (
		channel = "order.created"
		group   = "billing"
		queue   = group + "." + channel
		dlq     = "FAILED_MESSAGES"
		n       = 4
	)
	runScript(t, dir, []string{"CONFORMANCE_URL=" + scriptURL(t, r), fmt.Sprint("CONFORMANCE_COUNT=", n)}, node, "channels.js")
	ch := brokertest.Channel(t, r, "conformance test")
	waitDepth(t, ch, dlq, n, 30*time.Second)

	rep := topology(t, r)
	if m := rep.mains(t); len(m) != 0 {
		t.Errorf("ladders with main queues %q, want none: retries are republished to the queue itself and %s is every channel's", m, dlq)
	}
	for _, f := range rep.Findings {
		t.Errorf("finding on %q: %s: %s", f.Queue, f.Code, f.Message)
	}
	var other []string
	for _, q := range rep.Other {
		other = append(other, q.Name)
	}
	if want := []string{dlq, queue}; !slices.Equal(slices.Sorted(slices.Values(other)), want) {
		t.Errorf("other queues %q, want %q", other, want)
	}

	// Only the messages tie FAILED_MESSAGES to the group's queue:
	// sampled, they do.
	assertSampledLadder(t, r, queue, dlq, n, true)

	ids := seq("order", n)
	var pk struct {
		Messages []struct {
			Headers     map[string]any   `json:"headers"`
			BodyPreview string           `json:"body_preview"`
			Retry       retry.RetryState `json:"retry"`
		} `json:"messages"`
	}
	ladderJSON(t, r, &pk, "peek", dlq, "-n", fmt.Sprint(n))
	if len(pk.Messages) != n {
		t.Fatalf("peek %s shows %d messages, want %d", dlq, len(pk.Messages), n)
	}
	for _, m := range pk.Messages {
		id := mcBodyID(t, []byte(m.BodyPreview))
		if !slices.Contains(ids, id) {
			t.Errorf("unexpected message %q in %s", id, dlq)
			continue
		}
		st := m.Retry
		if st.Framework != "Moleculer Channels" {
			t.Errorf("%s: framework %q, want Moleculer Channels (x-original-channel marks it)", id, st.Framework)
		}
		if st.FailedQueue != queue || !strings.Contains(st.FailedQueueSource, "x-original-group") || !strings.Contains(st.FailedQueueSource, "x-original-channel") {
			t.Errorf("%s: failed in %q (from %q), want %s from x-original-group and x-original-channel", id, st.FailedQueue, st.FailedQueueSource, queue)
		}
		// 0.1.8's dead-letter copy carries no x-redelivered-count and no
		// error (x-error-* arrived in 0.3.0, which the registry does not
		// serve): nothing says how often it was retried or why it failed,
		// and ladder must not make it up.
		if st.Count != 0 || st.Source != retry.SourceNone {
			t.Errorf("%s: count %d from %q, want 0 from %q: the dead-letter copy has only %v", id, st.Count, st.Source, retry.SourceNone, slices.Sorted(maps.Keys(m.Headers)))
		}
		if st.LastError != "" || st.ErrorType != "" || !st.LastErrorTime.IsZero() || st.StackTrace != "" {
			t.Errorf("%s: error %q type %q at %v stack %q, want none: the dead-letter copy has only %v",
				id, st.LastError, st.ErrorType, st.LastErrorTime, st.StackTrace, slices.Sorted(maps.Keys(m.Headers)))
		}
	}

	out := moveToOrigin(t, r, dlq, n)
	t.Logf("move: %s", out)
	waitDepth(t, ch, queue, n, 30*time.Second)
	assertAllIn(t, idsByQueue(t, r, ch, func(d amqp.Delivery) string { return mcBodyID(t, d.Body) }), queue, ids)
}

// mcBodyID is the id channels.js put in a message's JSON body: the
// dead-letter copy keeps the body and nothing else of the message.
func mcBodyID(t *testing.T, body []byte) string {
	t.Helper()
	var b struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Errorf("body %q: %v", body, err)
	}
	return b.ID
}
