package broker_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

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
