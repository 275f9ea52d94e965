package rabbit_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry/topology"
)

// statsInterval is the broker's statistics interval (collect_statistics_interval,
// 5 s by default on the test brokers): the management API's depths and
// counters move once per interval, so a refresh no shorter than it sees
// every step.
const statsInterval = 5 * time.Second

// A DLQ fed only by dead-lettering (a queue's messages expiring into it,
// another's rejected into it) has no publishes the broker counts: its
// inflow is seen from its depth within two refreshes after the first.
func TestDeadLetteredInflowWithinTwoRefreshes(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	r := brokertest.OwnVhost(t)
	ch := brokertest.Channel(t, r, "test dead-lettered inflow")
	declare := func(name string, args amqp.Table) {
		t.Helper()
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			t.Fatalf("declare %s: %v", name, err)
		}
	}
	declare("orders.dlq", nil)
	declare("orders.expire", amqp.Table{"x-message-ttl": int32(50), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	declare("orders.reject", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})

	// Feed both, ten messages a second each, until the test ends: a
	// consumer rejects (no requeue) everything orders.reject receives.
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	rejects := brokertest.Channel(t, r, "test dead-lettered inflow: rejecting consumer")
	deliveries, err := rejects.Consume("orders.reject", "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			select {
			case d, ok := <-deliveries:
				if !ok {
					return
				}
				_ = d.Reject(false)
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, q := range []string{"orders.expire", "orders.reject"} {
				if err := ch.PublishWithContext(ctx, "", q, false, false, amqp.Publishing{Body: []byte("x")}); err != nil && ctx.Err() == nil {
					t.Errorf("publish to %s: %v", q, err)
					return
				}
			}
		}
	}()

	c, err := rabbit.NewLive(r, "test dead-lettered inflow")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var seen []string
	for i := 0; i < 3; i++ { // the first refresh and two more
		if i > 0 {
			time.Sleep(statsInterval)
		}
		snap, err := c.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		q, ok := snap.Queue("orders.dlq")
		if !ok {
			t.Fatal("orders.dlq missing from the snapshot")
		}
		rt := q.Rates
		seen = append(seen, formatInflow(q))
		if rt.Known && rt.Publish > 0 {
			t.Fatalf("refresh %d: orders.dlq has publishes %.1f/s: dead-lettering is not publishing (%v)", i+1, rt.Publish, seen)
		}
		if rt.InKnown && rt.In > 0 {
			if i == 0 {
				t.Fatalf("the first refresh knows an inflow for orders.dlq with no history: %v", seen)
			}
			if rt.InSource != topology.InFromDepth {
				t.Fatalf("refresh %d: inflow from %q, want %q (%v)", i+1, rt.InSource, topology.InFromDepth, seen)
			}
			rep := present.Topology(snap)
			var dlq *present.QueueReport
			for _, o := range rep.Other {
				if o.Name == "orders.dlq" {
					dlq = &o
				}
			}
			for _, l := range rep.Ladders {
				if l.DLQ != nil && l.DLQ.Name == "orders.dlq" {
					dlq = l.DLQ
				}
			}
			if dlq == nil || dlq.InRate == nil || *dlq.InRate <= 0 || dlq.InRateSource == nil || *dlq.InRateSource != topology.InFromDepth {
				t.Fatalf("topology JSON of orders.dlq: %+v", dlq)
			}
			t.Logf("orders.dlq's inflow seen at refresh %d (%s)", i+1, seen)
			return
		}
	}
	t.Fatalf("orders.dlq's inflow not seen within two refreshes after the first, %v apart: %v", statsInterval, seen)
}

func formatInflow(q topology.Queue) string {
	r := q.Rates
	if !r.InKnown {
		return fmt.Sprintf("depth %d, in ?", q.Messages)
	}
	return fmt.Sprintf("depth %d, in %.1f/s (%s)", q.Messages, r.In, r.InSource)
}
