package rabbit_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// The topologies people run, declared on the real broker, with the names
// people give them and with neutral ones that tell nothing: a snapshot gives
// the same ladders and findings with no consumer, one on the main, one on
// the wait queue and both. No wait queue is reported as having no
// consumers; a consumed one is reported as such. Messages peeked before
// (Vhost.Observe) change how sure discovery is, not what it found.
func TestDiscoveryOnRealShapesWithAndWithoutAConsumer(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	type shape struct {
		name       string
		declare    func(f *fixture)
		main, wait string
		dlq        string
		waitMsgs   int64    // messages (ready and unacked) in the wait queue
		findings   []string // topology findings: no-consumers and wait-queue-consumers left out
		// peeked are the findings of the client that peeked both queues
		// (its look at the wait queue weighed); nil: findings.
		peeked []string
		// consumersConfirm: only consumers tell the sides apart, so a
		// consumer on the wait side makes it a work queue and its target
		// its DLQ (no ladder).
		consumersConfirm bool
	}
	sorted := func(codes ...string) []string { slices.Sort(codes); return codes }
	delayShape := func(name, main, wait string) shape {
		return shape{
			name: name,
			declare: func(f *fixture) {
				f.declareQueue(main, nil)
				f.declareQueue(wait, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": main})
				f.publish("", wait, amqp.Publishing{Expiration: "600000", Body: []byte("later")})
			},
			main: main, wait: wait, waitMsgs: 1,
			findings: sorted("warning no-dlq "+main, "warning hol-risk "+wait),
		}
	}
	cycleShape := func(name, main, wait string, rejected int) shape {
		// Unlooked, the dead-letter route into wait is a risk; the peek
		// that saw the stripped messages in it makes it an error.
		peeked := sorted("warning no-dlq "+main, "warning stuck "+wait)
		if rejected > 0 {
			peeked = sorted("warning no-dlq "+main, "error stuck "+wait)
		}
		return shape{
			name: name,
			declare: func(f *fixture) {
				f.declareQueue(main, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": wait})
				f.declareQueue(wait, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": main})
				if rejected == 0 {
					return
				}
				// Messages with a per-message TTL a worker rejects: they die
				// in main and sit in wait with x-death rejected@main, their
				// expiration stripped.
				for range rejected {
					f.publish("", main, amqp.Publishing{Expiration: "60000", Body: []byte("job")})
				}
				ch := f.channel()
				defer ch.Close()
				for range rejected {
					d, ok, err := ch.Get(main, false)
					if err != nil || !ok {
						t.Fatalf("get %s: %v %v", main, ok, err)
					}
					if err := d.Reject(false); err != nil {
						t.Fatal(err)
					}
				}
				f.waitDepth(wait, rejected)
			},
			main: main, wait: wait, waitMsgs: int64(rejected),
			findings: sorted("warning no-dlq "+main, "warning stuck "+wait),
			peeked:   peeked,
		}
	}
	shapes := []shape{
		delayShape("standalone delay queue", "jobs", "jobs.delay"),
		func() shape {
			sh := delayShape("standalone delay queue, neutral names", "orders.process", "orders.incoming")
			sh.consumersConfirm = true
			return sh
		}(),
		cycleShape("cycle with a TTL-less retry queue", "billing", "billing.retry", 0),
		cycleShape("cycle with a TTL-less queue, neutral names, rejected messages in it", "billing", "billing.second", 2),
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel() // each in a vhost of its own
			f := newVhostFixture(t)
			sh.declare(f)
			live := f.live(true)
			lookWith := func(c *rabbit.Live, onMain, onWait int) *broker.Snapshot {
				t.Helper()
				deadline := time.Now().Add(30 * time.Second)
				for {
					snap, err := c.Snapshot(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					// Consumer counts and depths reach the management API
					// with its stats.
					m, okm := snap.Queue(sh.main)
					w, okw := snap.Queue(sh.wait)
					if okm && okw && m.Consumers == onMain && w.Consumers == onWait && w.Messages == sh.waitMsgs {
						return snap
					}
					if time.Now().After(deadline) {
						t.Fatalf("never saw %d consumers on %s, %d and %d messages on %s", onMain, sh.main, onWait, sh.waitMsgs, sh.wait)
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
			look := func(onMain, onWait int) *broker.Snapshot { t.Helper(); return lookWith(live, onMain, onWait) }
			check := func(onMain, onWait int, ls []retry.Ladder, fs []topology.Finding, want []string) {
				t.Helper()
				when := fmt.Sprintf("consumers on main %d, on wait queue %d", onMain, onWait)
				if len(ls) != 1 || ls[0].Main != sh.main || !reflect.DeepEqual(ls[0].WaitQueues, []string{sh.wait}) || ls[0].DLQ != sh.dlq || len(ls[0].InferredFrom) == 0 {
					t.Fatalf("%s: ladders %+v, want main %s, wait %s, dlq %q, saying how it was inferred", when, ls, sh.main, sh.wait, sh.dlq)
				}
				var codes []string
				reported := false
				for _, fd := range fs {
					switch {
					case fd.Code == topology.CodeNoConsumers && fd.Queue != sh.main:
						t.Errorf("%s: no-consumers on %s, not a main: %s", when, fd.Queue, fd.Message)
					case fd.Code == topology.CodeWaitQueueConsumers:
						reported = fd.Queue == sh.wait
					case fd.Code != topology.CodeNoConsumers:
						codes = append(codes, string(fd.Severity)+" "+fd.Code+" "+fd.Queue)
					}
				}
				if slices.Sort(codes); !reflect.DeepEqual(codes, want) {
					t.Errorf("%s: findings %q, want %q", when, codes, want)
				}
				if reported != (onWait > 0) {
					t.Errorf("%s: wait-queue-consumers reported: %v", when, reported)
				}
			}
			snap := look(0, 0)
			check(0, 0, snap.Ladders, snap.Findings, sh.findings)
			inferred := snap.Ladders[0].InferredFrom

			// What a peek of both queues shows feeds discovery: the same
			// ladder and findings, by hand and in the snapshot of the
			// client that peeked (it remembers). Another client peeks:
			// live stays without evidence, for the consumers below.
			peeker := f.live(true)
			v := snap.Topology
			v.Queues = slices.Clone(v.Queues)
			for _, q := range []string{sh.main, sh.wait} {
				res, err := peeker.Peek(context.Background(), q, broker.PeekOptions{Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range res.Messages {
					v.Observe(q, m.Properties.Expiration != "", m.Deaths)
				}
			}
			ls := topology.Discover(&v)
			check(0, 0, ls, topology.Findings(&v, ls), sh.findings)
			t.Logf("inferred from %q; after a peek %q", inferred, ls[0].InferredFrom)
			peeked := lookWith(peeker, 0, 0)
			want := sh.peeked
			if want == nil {
				want = sh.findings
			}
			check(0, 0, peeked.Ladders, peeked.Findings, want)
			if !reflect.DeepEqual(peeked.Ladders[0].InferredFrom, ls[0].InferredFrom) {
				t.Errorf("the peeking client's snapshot inferred from %q; what its peek showed gives %q", peeked.Ladders[0].InferredFrom, ls[0].InferredFrom)
			}

			consume := func(q string) *amqp.Channel {
				ch := f.channel()
				if _, err := ch.Consume(q, "", false, false, false, false, nil); err != nil {
					t.Fatal(err)
				}
				return ch
			}
			onMain := consume(sh.main)
			snap = look(1, 0)
			check(1, 0, snap.Ladders, snap.Findings, sh.findings)
			onWait := consume(sh.wait)
			defer onWait.Close()
			if sh.consumersConfirm {
				snap = look(1, 1)
				for _, l := range snap.Ladders {
					if slices.Contains(l.WaitQueues, sh.wait) {
						t.Errorf("consumed %s with nothing else to tell is still a wait queue: %+v", sh.wait, l)
					}
				}
				for _, fd := range snap.Findings {
					if fd.Code == topology.CodeHoLRisk {
						t.Errorf("hol-risk on a worked queue: %+v", fd)
					}
				}
				return
			}
			snap = look(1, 1)
			check(1, 1, snap.Ladders, snap.Findings, sh.findings)
			onMain.Close()
			snap = look(0, 1)
			check(0, 1, snap.Ladders, snap.Findings, sh.findings)
			if !reflect.DeepEqual(snap.Ladders[0].InferredFrom, inferred) {
				t.Errorf("consumers changed inferred_from: %q, was %q", snap.Ladders[0].InferredFrom, inferred)
			}
		})
	}
}

// A peek that takes a HoL-blocked queue's head uncovers the overdue
// messages behind it: the broker dead-letters them at once. The peek
// reports how many left, where they went and when.
func TestPeekNamesWhereReleasedMessagesWent(t *testing.T) {
	t.Parallel() // slow, and on names of its own
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
	res, err := live.Peek(context.Background(), "work.delay", broker.PeekOptions{Limit: 10, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Released != 5 || res.ReleasedTo != "queue work" || res.ReleasedAt == nil || res.ReleasedAt.Before(before) {
		t.Fatalf("released %d to %q at %v; side effects %q", res.Released, res.ReleasedTo, res.ReleasedAt, res.SideEffects)
	}
	f.waitDepth("work", 5)
}
