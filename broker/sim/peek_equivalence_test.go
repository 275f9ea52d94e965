package sim

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// A peek of the quorum queue (x-delivery-limit 3, dead-lettering to
// its DLQ) says and does the same in the simulation as on the broker of the
// same version, peek after peek: refusals (read-only, unforced), what is
// shown, the side effects in words, the counters each message carries,
// what was dead-lettered, and where every message is at the end. On the
// test broker (3.10 or 4.3 under make test) and on 4.0.
func TestPeekSimulationAndLiveBrokerAgree(t *testing.T) {
	for _, name := range []string{"test broker", "4.0"} {
		t.Run(name, func(t *testing.T) {
			r := brokertest.Require(t)
			if name != "test broker" {
				r = brokertest.RequireVersion(t, name)
			}
			r = brokertest.OwnVhostOn(t, r)
			for _, readOnly := range []bool{true, false} {
				t.Run(fmt.Sprintf("read-only %v", readOnly), func(t *testing.T) {
					peekBothAlike(t, r, readOnly)
				})
			}
		})
	}
}

func peekBothAlike(t *testing.T, r *rabbit.Resolved, readOnly bool) {
	ctx := context.Background()
	lr := *r
	lr.ReadOnly = readOnly
	live, err := rabbit.NewLive(&lr, "test peek equivalence")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	version, err := live.BrokerVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dlq, q := brokertest.Name(t, "dlq"), brokertest.Name(t, "qq")
	args := map[string]any{"x-queue-type": "quorum", "x-delivery-limit": int64(3), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}

	ch := brokertest.Channel(t, r, "test peek equivalence")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		name string
		args amqp.Table
	}{{dlq, nil}, {q, amqp.Table(args)}} {
		if _, err := ch.QueueDeclare(d.name, true, false, false, false, d.args); err != nil {
			t.Fatal(err)
		}
	}
	s := New(Options{Seed: 1, Now: fixedClock, Quiet: true, BrokerVersion: version, ReadOnly: readOnly})
	t.Cleanup(func() { s.Close() })
	s.testDeclare(t, dlq, nil)
	s.testDeclare(t, q, args)
	for i := 0; i < 3; i++ {
		id := fmt.Sprintf("m-%d", i)
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", q, false, false, amqp.Publishing{MessageId: id, DeliveryMode: amqp.Persistent})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish %s: %v", id, err)
		}
		s.testPublish(t, "", q, id, "", nil)
	}

	steps := []broker.PeekOptions{{Limit: 3}, {Limit: 2}, {Limit: 1}, {Limit: 3}}
	for range 5 {
		steps = append(steps, broker.PeekOptions{Limit: 3, Force: true})
	}
	for i, opt := range steps {
		lres, lerr := live.Peek(ctx, q, opt)
		sres, serr := s.Peek(ctx, q, opt)
		if (lerr == nil) != (serr == nil) || lerr != nil && lerr.Error() != serr.Error() {
			t.Fatalf("RabbitMQ %s, peek %d %+v:\n live %v\n sim  %v", version, i, opt, lerr, serr)
		}
		if lerr != nil {
			var refused *broker.PeekRefused
			if !errors.As(lerr, &refused) || !errors.As(serr, &refused) {
				t.Fatalf("peek %d: not a refusal: %v / %v", i, lerr, serr)
			}
			continue
		}
		if got, want := seen(sres), seen(lres); !reflect.DeepEqual(got, want) {
			t.Fatalf("RabbitMQ %s, peek %d %+v:\n live %v\n sim  %v", version, i, opt, want, got)
		}
		if !reflect.DeepEqual(lres.SideEffects, sres.SideEffects) || lres.Released != sres.Released || lres.ReleasedTo != sres.ReleasedTo {
			t.Fatalf("RabbitMQ %s, peek %d: side effects\n live %q (released %d to %q)\n sim  %q (released %d to %q)",
				version, i, lres.SideEffects, lres.Released, lres.ReleasedTo, sres.SideEffects, sres.Released, sres.ReleasedTo)
		}
		waitReady(t, ch, q, depth(t, s, q))
	}
	waitReady(t, ch, dlq, depth(t, s, dlq))
	t.Logf("RabbitMQ %s, read-only %v: %d left, %d dead-lettered, alike", version, readOnly, depth(t, s, q), depth(t, s, dlq))
}

// seen is what a peek showed of each message: its id and the quorum
// counters it carried.
func seen(res *broker.PeekResult) []string {
	var out []string
	for _, m := range res.Messages {
		out = append(out, fmt.Sprintf("%s dlv=%v acq=%v", m.Properties.MessageID, m.Headers["x-delivery-count"], m.Headers["x-acquired-count"]))
	}
	return out
}

// waitReady waits (bounded) until the live queue holds n ready messages:
// quorum queues apply returns and dead-lettering asynchronously.
func waitReady(t *testing.T, ch *amqp.Channel, queue string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if q.Messages == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: live holds %d, the simulation %d", queue, q.Messages, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
