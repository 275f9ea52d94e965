package rabbit_test

import (
	"context"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// demo --real: the Go seed's ladder declared for real, traffic retried
// through the engine's Plan: failed messages wait in orders.wait.5s, come
// back with their routing key, fail again and move on to orders.wait.30s.
func TestRealDemoRetriesThroughTheTiers(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newVhostFixture(t)
	p := brokertest.Name(t, "")
	t.Cleanup(func() {
		ch := f.channel()
		defer ch.Close()
		for _, q := range []string{"orders.process", "orders.dlq", "orders.wait.5s", "orders.wait.30s", "orders.wait.5m"} {
			_, _ = ch.QueueDelete(p+"."+q, false, false, false)
		}
		for _, x := range []string{"orders.topic", "orders.retry", "orders.dlx"} {
			_ = ch.ExchangeDelete(p+"."+x, false, false)
		}
	})
	// The demo runs until a message failed twice (5 s in the first tier,
	// then the 30 s one), bounded: a busy machine takes longer than 8 s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type result struct {
		st  rabbit.DemoStats
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := rabbit.RunGoSeedDemo(ctx, f.r, rabbit.DemoOptions{Prefix: p, Rate: 20, FailShare: 1}, nil)
		done <- result{st, err}
	}()
	began := time.Now()
	reached := brokertest.WaitFor(2*time.Minute, func() bool {
		return time.Since(began) > 8*time.Second && f.depthOrGone(p+".orders.wait.30s") > 0
	})
	cancel()
	r := <-done
	st, err := r.st, r.err
	if err != nil {
		t.Fatal(err)
	}
	if !reached {
		t.Fatalf("nothing reached the 30s tier in 2 minutes: %+v", st)
	}
	if st.Published == 0 || st.Retried <= st.Published/2 {
		t.Fatalf("stats %+v", st)
	}
	res, err := f.live(true).Peek(context.Background(), p+".orders.wait.30s", broker.PeekOptions{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) == 0 {
		t.Fatalf("nothing reached the 30s tier: %+v", st)
	}
	m := res.Messages[0]
	if m.Retry.Count != 2 || m.Retry.Source != "x-retry-count" || m.Retry.Kind != "int32" {
		t.Errorf("retry %+v", m.Retry)
	}
	if len(m.Deaths) != 1 || m.Deaths[0].Queue != p+".orders.wait.5s" || m.Deaths[0].Reason != "expired" {
		t.Errorf("deaths %+v", m.Deaths)
	}
	if m.RoutingKey != "orders.created" && m.RoutingKey != "orders.paid" {
		t.Errorf("the tier lost the routing key: %q", m.RoutingKey)
	}
}
