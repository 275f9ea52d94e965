package conformance

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// amqplib-retry (testdata/amqplibretry: npm's amqplib-retry 1.1.7, pinned
// in package-lock.json, on the amqplib it depends on) retries the failures
// of two work queues through one shared wait queue: amqplib-retry.delayed
// (no TTL: per-message expirations, a _targetQueue header naming the work
// queue) dead-letters into amqplib-retry.ready, whose consumer in the
// library sends each message back by that header. The graph alone makes
// the ready queue a main waited for by the delayed one, and nothing ties
// them to orders or billing. Reading its header (the conventions table's
// amqplib-retry entry), topology --sample
// reads the messages waiting in the ready queue while the router is down
// (x-death: they expired in the delayed queue; the header: where they
// return): then orders and billing are two
// ladders, each with the shared wait and ready queues as its delay, no
// main of their own, and the only finding is the wait queue's real
// head-of-line risk.
func TestAmqplibRetrySharedWaitQueue(t *testing.T) {
	t.Parallel()
	dir := testdata(t, "amqplibretry")
	node := requireLibrary(t, "amqplib-retry for Node.js (npm ci in internal/conformance/testdata/amqplibretry)", func(bin string) *exec.Cmd {
		cmd := exec.Command(bin, "-e", "require('amqplib-retry'); require('amqplib')")
		cmd.Dir = dir
		return cmd
	}, "node")
	r := brokertest.OwnVhost(t)
	const (
		delayed, ready = "amqplib-retry.delayed", "amqplib-retry.ready"
		n              = 2
	)
	queues := []string{"billing", "orders"}
	runScript(t, dir, []string{
		"CONFORMANCE_URL=" + scriptURL(t, r), "CONFORMANCE_QUEUES=" + strings.Join(queues, ","),
		fmt.Sprint("CONFORMANCE_COUNT=", n), "CONFORMANCE_PARK_MS=3000",
	}, node, "retry.js")
	ch := brokertest.Channel(t, r, "conformance test")
	// The router is down: the messages wait in the ready queue.
	waitDepth(t, ch, ready, n*len(queues), 30*time.Second)

	// Nothing read: the graph says only that the delayed queue waits
	// for the ready one.
	before := topology(t, r)
	if l := before.ladderOf(t, ready); l != nil && !l.has("inferred_from") {
		t.Errorf("without evidence, %s's ladder says nothing of what it rested on", ready)
	}

	var rep struct {
		topologyReport
		Sampled struct {
			Queues []struct {
				Queue    string   `json:"queue"`
				Read     int      `json:"read"`
				FailedIn []string `json:"failed_in"`
			} `json:"queues"`
		} `json:"sampled"`
	}
	ladderJSON(t, r, &rep, "topology", "--sample", "10")
	if i := slices.IndexFunc(rep.Sampled.Queues, func(s struct {
		Queue    string   `json:"queue"`
		Read     int      `json:"read"`
		FailedIn []string `json:"failed_in"`
	}) bool {
		return s.Queue == ready
	}); i < 0 || rep.Sampled.Queues[i].Read != n*len(queues) || !slices.Equal(rep.Sampled.Queues[i].FailedIn, queues) {
		t.Errorf("sampled %+v, want %s read %d, returning to %q", rep.Sampled.Queues, ready, n*len(queues), queues)
	}
	if got := rep.mains(t); !slices.Equal(got, queues) {
		t.Errorf("mains %q, want %q: the shared wait and ready queues are no mains", got, queues)
	}
	for _, q := range queues {
		l := rep.ladderOf(t, q)
		if l == nil {
			continue
		}
		if l.DLQ == nil || l.DLQ.Name != q+".failure" {
			t.Errorf("%s: dlq %+v, want %s.failure", q, l.DLQ, q)
		}
		if l.RetriesInConsumer {
			t.Errorf("%s: retries_in_consumer, but its messages wait in %s", q, delayed)
		}
		if len(l.Delays) != 1 || !slices.Equal(names(t, l.Delays[0].Queues), []string{delayed, ready}) ||
			!l.Delays[0].PerMessageTTL || !strings.Contains(l.Delays[0].From, "return to "+q) {
			t.Errorf("%s: delays %+v, want [%s %s] shared, per-message, tied by the messages seen", q, l.Delays, delayed, ready)
		}
	}
	for _, f := range rep.Findings {
		if f.Queue == delayed && f.Code == "hol-risk" {
			continue // real: 200 ms and 3 s expirations in one queue
		}
		t.Errorf("finding %s on %s: %s", f.Code, f.Queue, f.Message)
	}
}
