package rabbit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
)

// uncounted checks that q holds n messages prefix-00000… in order, none
// with a delivery counted: read by a browse of a client of its own.
func uncounted(t *testing.T, f *fixture, q, prefix string, n int) {
	t.Helper()
	f.waitDepth(q, n)
	res, err := f.live(true).Peek(context.Background(), q, broker.PeekOptions{Limit: n, BodyPreview: 1})
	if err != nil {
		t.Fatal(err)
	}
	inOrder(t, peekIDs(res), prefix, n)
	for _, m := range res.Messages {
		if c, ok := m.Headers["x-delivery-count"]; ok {
			t.Fatalf("%s: x-delivery-count %v: the stopped browse counted a delivery", m.Properties.MessageID, c)
		}
	}
}

// An AMQP 1.0 browse stopped mid-read (its context cancelled, or its
// deadline) drains the link's credit before it releases what it holds:
// released messages, which a quorum queue hands out first, never come back
// on the link to be detached unsettled (which counts a delivery each). It
// then puts the order back as a whole browse does (from the second browse
// on, its messages had been returned before, and a release would move them
// behind the other returned ones). Three browses each way: the queue keeps
// its order, and no message has a delivery counted.
func TestAMQP1BrowseStoppedMidReadCountsNothing(t *testing.T) {
	f := on43(t)
	const n = 600 // more than one round of credit
	for _, how := range []string{"cancelled", "deadline"} {
		t.Run(how, func(t *testing.T) {
			q := f.queue("qq-"+how, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3)})
			f.seedSmall(q, n, "m")
			f.waitDepth(q, n)
			for i := 0; i < 3; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				opt := broker.PeekOptions{Limit: n, BodyPreview: 1}
				read := 0
				opt.Each = func(*broker.Message) error {
					read++
					switch {
					case how == "cancelled" && read == 10+20*i:
						cancel()
					case how == "deadline":
						time.Sleep(5 * time.Millisecond) // 600 take 3 s: the deadline comes first
					}
					return nil
				}
				if how == "deadline" {
					opt.Deadline = time.Second
				}
				res, err := f.live(true).Peek(ctx, q, opt)
				cancel()
				switch how {
				case "cancelled":
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("browse %d: %v", i, err)
					}
				default:
					if err != nil || !strings.Contains(res.Incomplete, "deadline") || read == 0 || read == n {
						t.Fatalf("browse %d: %v, read %d, incomplete %q", i, err, read, res.Incomplete)
					}
				}
				uncounted(t, f, q, "m", n)
			}
		})
	}
}

// While an AMQP 1.0 browse waits for a delivery its progress still comes
// (the elapsed time), as the 0-9-1 browse's does: here a single active
// consumer holds the queue, so the browse waits its full first wait for
// messages that never come.
func TestAMQP1BrowseReportsProgressWhileItWaits(t *testing.T) {
	f := on43(t)
	q := f.queue("sac", amqp.Table{"x-queue-type": "quorum", "x-single-active-consumer": true})
	f.seedSmall(q, 5, "m")
	ch := f.channel()
	defer ch.Close()
	if err := ch.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Consume(q, "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	f.waitDepth(q, 4)
	var waiting []broker.PeekProgress
	res, err := f.live(true).Peek(context.Background(), q, broker.PeekOptions{Limit: 10, Progress: func(p broker.PeekProgress) {
		if !p.Done {
			waiting = append(waiting, p)
		}
	}})
	if err != nil || len(res.Messages) != 0 {
		t.Fatalf("%v, %d messages", err, len(res.Messages))
	}
	if len(waiting) < 3 || waiting[len(waiting)-1].Elapsed <= waiting[0].Elapsed {
		t.Fatalf("progress while waiting: %+v", waiting)
	}
}
