package rabbit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// fixture is a test's own AMQP connection for declaring and publishing.
type fixture struct {
	t    testing.TB
	r    *rabbit.Resolved
	conn *amqp.Connection
	ch   *amqp.Channel
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return fixtureOn(t, brokertest.Require(t))
}

// newVhostFixture works in a vhost of the test's own: for tests that read a
// whole vhost (snapshots, discovery, findings) or leave ladder's own wait
// queues behind (delayed moves).
func newVhostFixture(t testing.TB) *fixture {
	t.Helper()
	return fixtureOn(t, brokertest.OwnVhost(t))
}

func fixtureOn(t testing.TB, r *rabbit.Resolved) *fixture {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test fixture")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, r: r, conn: conn, ch: ch}
}

// channel returns a fresh channel (a failed declare closes the one it used).
func (f *fixture) channel() *amqp.Channel {
	f.t.Helper()
	ch, err := f.conn.Channel()
	if err != nil {
		f.t.Fatal(err)
	}
	return ch
}

// queue declares a uniquely named queue, deleted when the test ends.
func (f *fixture) queue(suffix string, args amqp.Table) string {
	f.t.Helper()
	name := brokertest.Name(f.t, suffix)
	f.declareQueue(name, args)
	return name
}

func (f *fixture) declareQueue(name string, args amqp.Table) {
	f.t.Helper()
	ch := f.channel()
	defer ch.Close()
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		f.t.Fatalf("declare %s: %v", name, err)
	}
	f.t.Cleanup(func() { f.deleteQueue(name) })
}

func (f *fixture) deleteQueue(name string) {
	conn, err := f.r.DialAMQP(context.Background(), "test cleanup")
	if err != nil {
		f.t.Errorf("cleanup %s: %v", name, err)
		return
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err == nil {
		_, err = ch.QueueDelete(name, false, false, false)
	}
	if err != nil {
		f.t.Errorf("delete queue %s: %v", name, err)
	}
}

// exchange declares a uniquely named exchange, deleted when the test ends.
func (f *fixture) exchange(suffix, kind string, args amqp.Table) string {
	f.t.Helper()
	name := brokertest.Name(f.t, suffix)
	ch := f.channel()
	defer ch.Close()
	if err := ch.ExchangeDeclare(name, kind, true, false, false, false, args); err != nil {
		f.t.Fatalf("declare exchange %s: %v", name, err)
	}
	f.t.Cleanup(func() {
		conn, err := f.r.DialAMQP(context.Background(), "test cleanup")
		if err != nil {
			return
		}
		defer conn.Close()
		if ch, err := conn.Channel(); err == nil {
			_ = ch.ExchangeDelete(name, false, false)
		}
	})
	return name
}

func (f *fixture) bind(queue, key, exchange string) {
	f.t.Helper()
	ch := f.channel()
	defer ch.Close()
	if err := ch.QueueBind(queue, key, exchange, false, nil); err != nil {
		f.t.Fatalf("bind %s to %s: %v", queue, exchange, err)
	}
}

// publish sends messages and waits for every confirm.
func (f *fixture) publish(exchange, key string, msgs ...amqp.Publishing) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var confs []*amqp.DeferredConfirmation
	for _, m := range msgs {
		if m.DeliveryMode == 0 {
			m.DeliveryMode = amqp.Persistent
		}
		dc, err := f.ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, false, false, m)
		if err != nil {
			f.t.Fatal(err)
		}
		confs = append(confs, dc)
	}
	for _, dc := range confs {
		if ok, err := dc.WaitContext(ctx); err != nil || !ok {
			f.t.Fatalf("publish not confirmed: %v", err)
		}
	}
}

// publishN sends n messages with ids "<prefix>-<i>".
func (f *fixture) publishN(queue string, n int, prefix string) {
	f.t.Helper()
	const batch = 1000
	for i := 0; i < n; i += batch {
		var msgs []amqp.Publishing
		for j := i; j < min(n, i+batch); j++ {
			msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprintf("%s-%d", prefix, j), Body: []byte(fmt.Sprintf(`{"n":%d}`, j)), ContentType: "application/json"})
		}
		f.publish("", queue, msgs...)
	}
}

// depth is the exact ready count.
func (f *fixture) depth(queue string) int {
	f.t.Helper()
	ch := f.channel()
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		f.t.Fatalf("depth %s: %v", queue, err)
	}
	return q.Messages
}

// drain consumes every message of a queue (auto-ack): until none arrives
// for idle and the queue has none ready (a busy machine pauses longer than
// idle mid-queue), then it cancels and takes what the broker sent before
// the cancel's answer (all that was in flight). At most 2 minutes.
func (f *fixture) drain(queue string, idle time.Duration) []amqp.Delivery {
	f.t.Helper()
	ch := f.channel()
	defer ch.Close()
	if err := ch.Qos(1000, 0, false); err != nil {
		f.t.Fatal(err)
	}
	const tag = "test-drain"
	ds, err := ch.Consume(queue, tag, true, false, false, false, nil)
	if err != nil {
		f.t.Fatalf("drain %s: %v", queue, err)
	}
	var out []amqp.Delivery
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case d := <-ds:
			out = append(out, d)
			continue
		case <-time.After(idle):
		}
		if f.depth(queue) > 0 && time.Now().Before(deadline) {
			continue
		}
		if err := ch.Cancel(tag, false); err != nil {
			f.t.Fatalf("drain %s: %v", queue, err)
		}
		for d := range ds {
			out = append(out, d)
		}
		return out
	}
}

// live returns a Live client for the test broker.
func (f *fixture) live(readOnly bool) *rabbit.Live {
	f.t.Helper()
	r := *f.r
	r.ReadOnly = readOnly
	l, err := rabbit.NewLive(&r, "test")
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { l.Close() })
	return l
}

// waitDepth waits (bounded) until a queue's ready count is n: quorum queues
// apply returns asynchronously.
func (f *fixture) waitDepth(queue string, n int) {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		d := f.depth(queue)
		if d == n {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s: depth %d, want %d", queue, d, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
