package broker_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// The topologies people run, declared on the real broker: a snapshot gives
// the same ladders and findings with the worker down and with it running.
func TestDiscoveryOnRealShapesWithAndWithoutAConsumer(t *testing.T) {
	type shape struct {
		name     string
		declare  func(f *fixture)
		worker   string // the queue a consumer attaches to
		main     string
		wait     []string
		dlq      string
		findings []string
	}
	shapes := []shape{
		{
			name: "standalone delay queue",
			declare: func(f *fixture) {
				f.declareQueue("jobs", nil)
				f.declareQueue("jobs.delay", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs"})
				f.publish("", "jobs.delay", amqp.Publishing{Expiration: "600000", Body: []byte("later")})
			},
			worker: "jobs", main: "jobs", wait: []string{"jobs.delay"},
			findings: []string{"warning no-dlq jobs", "warning hol-risk jobs.delay"},
		},
		{
			name: "cycle with a TTL-less retry queue",
			declare: func(f *fixture) {
				f.declareQueue("billing", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "billing.retry"})
				f.declareQueue("billing.retry", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "billing"})
			},
			worker: "billing", main: "billing", wait: []string{"billing.retry"},
			findings: []string{"warning no-dlq billing", "warning stuck billing.retry"},
		},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			f := newVhostFixture(t)
			sh.declare(f)
			live := f.live(true)
			look := func(consumers int) ([]retry.Ladder, []string) {
				t.Helper()
				deadline := time.Now().Add(30 * time.Second)
				for {
					snap, err := live.Snapshot(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					// Consumer counts reach the management API with its stats.
					if q, ok := snap.Queue(sh.worker); ok && q.Consumers == consumers {
						var codes []string
						for _, fd := range snap.Findings {
							if fd.Code != retry.CodeNoConsumers {
								codes = append(codes, string(fd.Severity)+" "+fd.Code+" "+fd.Queue)
							}
						}
						return snap.Ladders, codes
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s never showed %d consumers", sh.worker, consumers)
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
			check := func(when string, ls []retry.Ladder, codes []string) {
				t.Helper()
				if len(ls) != 1 || ls[0].Main != sh.main || !reflect.DeepEqual(ls[0].WaitQueues, sh.wait) || ls[0].DLQ != sh.dlq {
					t.Fatalf("%s: ladders %+v, want main %s, wait %v, dlq %q", when, ls, sh.main, sh.wait, sh.dlq)
				}
				if !reflect.DeepEqual(codes, sh.findings) {
					t.Errorf("%s: findings %q, want %q", when, codes, sh.findings)
				}
			}
			ls, codes := look(0)
			check("worker down", ls, codes)

			ch := f.channel()
			defer ch.Close()
			if _, err := ch.Consume(sh.worker, "", false, false, false, false, nil); err != nil {
				t.Fatal(err)
			}
			ls, codes = look(1)
			check("worker running", ls, codes)
		})
	}
}

// A peek that takes a HoL-blocked queue's head uncovers the overdue
// messages behind it: the broker dead-letters them at once. The peek
// reports how many left, where they went and when.
func TestPeekNamesWhereReleasedMessagesWent(t *testing.T) {
	f := newVhostFixture(t)
	f.declareQueue("work", nil)
	f.declareQueue("work.delay", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"})
	f.publish("", "work.delay", amqp.Publishing{MessageId: "head", Expiration: "600000", Body: []byte("h")})
	for i := 0; i < 5; i++ {
		f.publish("", "work.delay", amqp.Publishing{Expiration: "1", Body: []byte("s")})
	}
	live := f.live(false)
	// The management API's depth lags: wait until it shows all six.
	deadline := time.Now().Add(30 * time.Second)
	for {
		snap, err := live.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if q, ok := snap.Queue("work.delay"); ok && q.Ready == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("work.delay never showed 6 ready")
		}
		time.Sleep(200 * time.Millisecond)
	}
	before := time.Now()
	res, err := live.Peek(context.Background(), "work.delay", broker.PeekOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Released != 5 || res.ReleasedTo != "queue work" || res.ReleasedAt == nil || res.ReleasedAt.Before(before) {
		t.Fatalf("released %d to %q at %v; side effects %q", res.Released, res.ReleasedTo, res.ReleasedAt, res.SideEffects)
	}
	f.waitDepth("work", 5)
}
