package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/retry"
)

// wmUUIDHeader is where watermill-amqp's DefaultMarshaler puts a message's
// UUID (pkg/amqp/marshaler.go DefaultMessageUUIDHeaderKey); it sets no AMQP
// message id.
const wmUUIDHeader = "_watermill_message_uuid"

// Watermill (testdata/watermill: a module of its own, watermill and
// watermill-amqp pinned in its go.mod, run with `go run`): the handler
// fails every message, middleware.Retry tries it twice more inside the
// handler, then middleware.PoisonQueue publishes it to poison_queue with
// reason_poisoned and topic_poisoned. ladder must see no ladder before it
// has read a message (nothing dead-letters and nothing waits: the topology
// fixture in retry/topology/frameworks_more_test.go) and no finding; with
// topology --sample, orders's ladder ending in poison_queue; read the
// error and the origin from PoisonQueue's metadata, and move every message
// back to orders.
func TestWatermillRetryThenPoisonQueue(t *testing.T) {
	t.Parallel()
	dir := testdata(t, "watermill")
	// `go mod download` fetches the pinned modules (scripts/clients.sh has
	// already, and built the program); without them nothing can run.
	goBin := requireLibrary(t, "Watermill and watermill-amqp (go mod download in internal/conformance/testdata/watermill)", func(bin string) *exec.Cmd {
		cmd := exec.Command(bin, "mod", "download")
		cmd.Dir = dir
		return cmd
	}, "go")
	r := brokertest.OwnVhost(t)
	// The names in main.go.
	const (
		queue  = "orders"
		poison = "poison_queue"
		n      = 4
	)
	runScript(t, dir, []string{"CONFORMANCE_URL=" + scriptURL(t, r), fmt.Sprint("CONFORMANCE_COUNT=", n)}, watermillProgram(t, goBin, dir))
	ch := brokertest.Channel(t, r, "conformance test")
	waitDepth(t, ch, poison, n, 30*time.Second)

	rep := topology(t, r)
	if m := rep.mains(t); len(m) != 0 {
		t.Errorf("ladders with main queues %q, want none: Retry retries inside the handler and %s is fed by publishing", m, poison)
	}
	for _, f := range rep.Findings {
		t.Errorf("finding on %q: %s: %s", f.Queue, f.Code, f.Message)
	}
	var other []string
	for _, q := range rep.Other {
		other = append(other, q.Name)
	}
	if want := []string{queue, poison}; !slices.Equal(slices.Sorted(slices.Values(other)), want) {
		t.Errorf("other queues %q, want %q", other, want)
	}

	// Only the messages tie poison_queue to orders: sampled, they do.
	assertSampledLadder(t, r, queue, poison, n, true)

	ids := seq("order", n)
	var pk struct {
		Messages []struct {
			Headers map[string]any   `json:"headers"`
			Retry   retry.RetryState `json:"retry"`
		} `json:"messages"`
	}
	ladderJSON(t, r, &pk, "peek", poison, "-n", fmt.Sprint(n))
	if len(pk.Messages) != n {
		t.Fatalf("peek %s shows %d messages, want %d", poison, len(pk.Messages), n)
	}
	for _, m := range pk.Messages {
		id, _ := m.Headers[wmUUIDHeader].(string)
		if !slices.Contains(ids, id) {
			t.Errorf("unexpected message %q in %s", id, poison)
			continue
		}
		st := m.Retry
		if st.Framework != "Watermill" {
			t.Errorf("%s: framework %q, want Watermill", id, st.Framework)
		}
		if want := "payment service unavailable for " + id; st.LastError != want || st.ErrorSource != "reason_poisoned" {
			t.Errorf("%s: error %q from %q, want %q from reason_poisoned", id, st.LastError, st.ErrorSource, want)
		}
		if st.FailedQueue != queue || st.FailedQueueSource != "topic_poisoned" {
			t.Errorf("%s: failed in %q from %q, want %s from topic_poisoned", id, st.FailedQueue, st.FailedQueueSource, queue)
		}
		// Retry counts nothing on the message, and PoisonQueue writes no
		// type and no time: ladder must not make them up.
		if st.Count != 0 || st.Source != retry.SourceNone || st.ErrorType != "" || !st.LastErrorTime.IsZero() {
			t.Errorf("%s: count %d from %q, type %q at %v; want 0 from %q, no type, no time",
				id, st.Count, st.Source, st.ErrorType, st.LastErrorTime, retry.SourceNone)
		}
	}

	out := moveToOrigin(t, r, poison, n)
	t.Logf("move: %s", out)
	waitDepth(t, ch, queue, n, 30*time.Second)
	assertAllIn(t, idsByQueue(t, r, ch, func(d amqp.Delivery) string {
		id, _ := d.Headers[wmUUIDHeader].(string)
		return id
	}), queue, ids)
}

// Issue 34: the same on watermill-amqp's pub/sub configs
// (NewDurablePubSubConfig, queues named <topic>_billing): topic "orders" is
// a fanout exchange whose one queue is orders_billing, and PoisonQueue's
// topic_poisoned names the exchange. Sampled, the messages tie
// poison_queue_billing to orders_billing's ladder; --to origin sends every
// message back to orders_billing, the one queue that exchange routes to,
// and nowhere else; before, nothing moved ("failed in queue orders, which
// does not exist").
func TestWatermillPubSubPoisonGoesBackToTheTopicsQueue(t *testing.T) {
	t.Parallel()
	dir := testdata(t, "watermill")
	goBin := requireLibrary(t, "Watermill and watermill-amqp (go mod download in internal/conformance/testdata/watermill)", func(bin string) *exec.Cmd {
		cmd := exec.Command(bin, "mod", "download")
		cmd.Dir = dir
		return cmd
	}, "go")
	r := brokertest.OwnVhost(t)
	// The names main.go's pub/sub configs give.
	const (
		queue  = "orders_billing"
		poison = "poison_queue_billing"
		n      = 3
	)
	runScript(t, dir, []string{"CONFORMANCE_URL=" + scriptURL(t, r), fmt.Sprint("CONFORMANCE_COUNT=", n), "CONFORMANCE_CONFIG=pubsub"}, watermillProgram(t, goBin, dir))
	ch := brokertest.Channel(t, r, "conformance test")
	waitDepth(t, ch, poison, n, 30*time.Second)

	// What the messages say ties the poison queue to the topic's queue, as
	// --to origin reads it (moveplan.FailedIn is the one answer).
	assertSampledLadder(t, r, queue, poison, n, true)

	out := moveToOrigin(t, r, poison, n)
	t.Logf("move: %s", out)
	waitDepth(t, ch, queue, n, 30*time.Second)
	assertAllIn(t, idsByQueue(t, r, ch, func(d amqp.Delivery) string {
		id, _ := d.Headers[wmUUIDHeader].(string)
		return id
	}), queue, seq("order", n))
}

// watermillBuild is the Watermill program, built once for the tests that
// run it: a `go run` each compiled and linked it within the script's bound,
// which a busy machine did not keep.
var watermillBuild struct {
	once sync.Once
	path string
	err  error
}

// watermillProgram builds testdata/watermill once (generous bound: a
// build, not a timing claim) and returns the binary's path.
func watermillProgram(t *testing.T, goBin, dir string) string {
	t.Helper()
	watermillBuild.once.Do(func() {
		out, err := os.MkdirTemp("", "ladder-watermill-")
		if err != nil {
			watermillBuild.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		bin := filepath.Join(out, "watermill")
		cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			watermillBuild.err = fmt.Errorf("go build testdata/watermill: %v: %s", err, b)
			return
		}
		watermillBuild.path = bin
	})
	if watermillBuild.err != nil {
		t.Fatal(watermillBuild.err)
	}
	return watermillBuild.path
}
