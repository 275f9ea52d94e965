package rabbit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/retry/topology"
)

// onEachBroker runs fn on the test broker (LADDER_TEST_AMQP_URL: 3.10 or
// 4.3 under make test) and on RabbitMQ 4.0, whose quorum queues count every
// return: peeking behaves differently on each.
func onEachBroker(t *testing.T, fn func(t *testing.T, f *fixture, version string)) {
	for _, name := range []string{"test broker", "4.0"} {
		t.Run(name, func(t *testing.T) {
			r := brokertest.Require(t)
			if name != "test broker" {
				r = brokertest.RequireVersion(t, name)
			}
			f := fixtureOn(t, r)
			version, err := f.live(true).BrokerVersion(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			fn(t, f, version)
		})
	}
}

// limitedQuorum declares the queue: quorum, x-delivery-limit 3,
// dead-lettering to its own DLQ; it holds m-0 … m-(n-1).
func limitedQuorum(f *fixture, n int) (q, dlq string) {
	dlq = f.queue("dlq", nil)
	q = f.queue("qq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
	f.publishN(q, n, "m")
	return q, dlq
}

func costless(version string) bool { return topology.VersionAtLeast(version, 4, 3) }

// Issue 20's case: ten peeks (and ten more read-only) of a quorum queue
// with x-delivery-limit 3 used to dead-letter all of it by the fourth. Now
// 4.3 browses it over AMQP 1.0 and counts nothing; 3.10 and 4.0 have no
// costless browse and refuse before touching the queue. Either way nothing
// is dead-lettered and the order stays.
func TestTenPeeksOfALimitedQuorumQueueLoseNothing(t *testing.T) {
	onEachBroker(t, func(t *testing.T, f *fixture, version string) {
		q, dlq := limitedQuorum(f, 5)
		ctx := context.Background()
		peeks := 0
		for _, readOnly := range []bool{true, false} {
			l := f.live(readOnly)
			for i := 0; i < 10; i++ {
				limit := 5 - 3*(i%2) // 5, 2, 5, 2 …: a partial peek must not reorder either
				res, err := l.Peek(ctx, q, broker.PeekOptions{Limit: limit})
				if !costless(version) {
					var refused *broker.PeekRefused
					want := broker.ErrPeekCostsDelivery
					if readOnly {
						want = broker.ErrReadOnly
					}
					if !errors.As(err, &refused) || !errors.Is(err, want) {
						t.Fatalf("RabbitMQ %s, read-only %v, peek %d: %v, want a refusal (%v)", version, readOnly, i, err, want)
					}
					if msg := err.Error(); !strings.Contains(msg, q) || !strings.Contains(msg, "delivery limit of 3") || strings.Contains(msg, "\n") {
						t.Fatalf("refusal is not one line naming the queue and the cost: %q", msg)
					}
					continue
				}
				if err != nil {
					t.Fatalf("RabbitMQ %s, read-only %v, peek %d: %v", version, readOnly, i, err)
				}
				want := []string{"m-0", "m-1", "m-2", "m-3", "m-4"}[:limit]
				if got := peekIDs(res); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("peek %d: %v, want %v", peeks, got, want)
				}
				for _, m := range res.Messages {
					if _, ok := m.Headers["x-delivery-count"]; ok {
						t.Fatalf("peek %d: %s carries x-delivery-count %v: a peek counted a delivery", peeks, m.Properties.MessageID, m.Headers["x-delivery-count"])
					}
				}
				// Only x-acquired-count rises: once a peek, and once more when
				// a peek puts the queue's order back (see restoreOrder).
				if got, _ := res.Messages[0].Headers["x-acquired-count"].(int64); got < int64(peeks) {
					t.Errorf("peek %d: x-acquired-count %v, want at least %d", peeks, res.Messages[0].Headers["x-acquired-count"], peeks)
				}
				if text := strings.Join(res.SideEffects, " "); !strings.Contains(text, "AMQP 1.0") || !strings.Contains(text, "x-delivery-count and the delivery limit are untouched") {
					t.Errorf("side effects %q", text)
				}
				if res.Released != 0 {
					t.Errorf("peek %d: released %d", peeks, res.Released)
				}
				peeks++
			}
		}
		f.waitDepth(q, 5)
		if d := f.depth(dlq); d != 0 {
			t.Fatalf("RabbitMQ %s: %d dead-lettered", version, d)
		}
		// What a consumer gets now: every message, in order, never counted.
		got := f.drain(q, 500*time.Millisecond)
		var ids []string
		for _, d := range got {
			ids = append(ids, d.MessageId)
			if n, ok := d.Headers["x-delivery-count"]; ok {
				t.Errorf("%s: x-delivery-count %v after the peeks", d.MessageId, n)
			}
		}
		if fmt.Sprint(ids) != "[m-0 m-1 m-2 m-3 m-4]" {
			t.Fatalf("RabbitMQ %s: the queue holds %v", version, ids)
		}
		t.Logf("RabbitMQ %s: %d peeks browsed, the rest refused", version, peeks)
	})
}

// Where a peek counts a delivery, --force peeks anyway, and what its
// returns dead-letter is reported, per message, where it went.
func TestForcedPeekReportsWhatItDeadLettered(t *testing.T) {
	onEachBroker(t, func(t *testing.T, f *fixture, version string) {
		if costless(version) {
			t.Skipf("RabbitMQ %s browses quorum queues without counting (see TestTenPeeksOfALimitedQuorumQueueLoseNothing)", version)
		}
		q, dlq := limitedQuorum(f, 3)
		l := f.live(false)
		ctx := context.Background()
		for i := 0; i < 3; i++ {
			res, err := l.Peek(ctx, q, broker.PeekOptions{Limit: 3, Force: true})
			if err != nil {
				t.Fatalf("forced peek %d: %v", i, err)
			}
			if n, _ := res.Messages[0].Headers["x-delivery-count"].(int64); n != int64(i) || res.Released != 0 {
				t.Fatalf("forced peek %d: x-delivery-count %v, released %d", i, res.Messages[0].Headers["x-delivery-count"], res.Released)
			}
			if text := strings.Join(res.SideEffects, " "); !strings.Contains(text, "increments x-delivery-count") {
				t.Errorf("side effects %q", text)
			}
			f.waitDepth(q, 3)
		}
		// Delivered 3 times: this return passes the limit of 3.
		res, err := l.Peek(ctx, q, broker.PeekOptions{Limit: 3, Force: true})
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(res.SideEffects, " ")
		if res.Released != 3 || res.ReleasedTo != "queue "+dlq || !strings.Contains(text, "3 messages were dead-lettered to queue "+dlq+" by this peek (position 0, 1, 2)") {
			t.Fatalf("released %d to %q, side effects %q", res.Released, res.ReleasedTo, text)
		}
		f.waitDepth(dlq, 3)
		f.waitDepth(q, 0)
	})
}

// The reading the terminal UI refuses a re-peek by: after three forced
// peeks the shown counts say the next one dead-letters every message.
func TestRepeekDeadLettersReadsTheLastPeek(t *testing.T) {
	onEachBroker(t, func(t *testing.T, f *fixture, version string) {
		if costless(version) {
			t.Skipf("RabbitMQ %s: no re-peek counts", version)
		}
		q, _ := limitedQuorum(f, 2)
		l := f.live(false)
		info := topology.Queue{Name: q, Type: topology.QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int64(3)}}
		var res *broker.PeekResult
		var err error
		for i := 0; i < 3; i++ {
			if n := broker.RepeekDeadLetters(res, info, version); n != 0 {
				t.Fatalf("before peek %d: %d would be dead-lettered", i, n)
			}
			if res, err = l.Peek(context.Background(), q, broker.PeekOptions{Limit: 2, Force: true}); err != nil {
				t.Fatal(err)
			}
			f.waitDepth(q, 2)
		}
		if n := broker.RepeekDeadLetters(res, info, version); n != 2 {
			t.Fatalf("after three peeks: %d would be dead-lettered, want 2", n)
		}
	})
}
