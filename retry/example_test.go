package retry_test

import (
	"fmt"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// A worker's failure path: read the message's retry state, plan, and
// publish as the action says, then ack the delivery. The printing stands in
// for amqp091-go's PublishWithDeferredConfirmWithContext and Ack
// (examples/worker does it for real).
func Example() {
	// The Go seed's ladder: three wait tiers that dead-letter back to the
	// main queue, and a DLQ.
	ladder := &retry.Ladder{
		Main: "orders.process",
		Tiers: []retry.Tier{
			{Queue: "orders.wait.5s", TTL: 5 * time.Second},
			{Queue: "orders.wait.30s", TTL: 30 * time.Second},
			{Queue: "orders.wait.5m", TTL: 5 * time.Minute},
		},
		DLQ: "orders.dlq",
	}
	opts := retry.PlanOptions{
		// The Go seed's 5^n seconds: 5s, 25s, 125s, each waiting in the
		// tier that fits (exactly, else the next longer one).
		Policy:      retry.Policy{Backoff: retry.BackoffExponential, Base: 5 * time.Second, Factor: 5},
		MaxAttempts: 3,
		Ladder:      ladder,
	}

	// With amqp091-go: headers := retry.Headers(delivery.Headers)
	headers := retry.Headers{}
	for range 4 {
		st := retry.ReadState(headers, retry.DeathQueues(ladder))
		act, err := retry.Plan(headers, st, opts)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch act.Kind {
		case retry.ActionTier:
			fmt.Printf("attempt %d: publish to exchange %q key %q (waits %s in %s), ack\n",
				act.Attempt, act.Exchange, act.RoutingKey, retry.FormatDelay(act.Delay), act.Queue)
		case retry.ActionPark:
			fmt.Printf("after %d retries: publish to exchange %q key %q, ack\n", st.Count, act.Exchange, act.RoutingKey)
		}
		headers = act.Headers // the next delivery carries what we published
	}
	fmt.Println("x-retry-count:", headers["x-retry-count"])
	// Output:
	// attempt 1: publish to exchange "" key "orders.wait.5s" (waits 5s in orders.wait.5s), ack
	// attempt 2: publish to exchange "" key "orders.wait.30s" (waits 30s in orders.wait.30s), ack
	// attempt 3: publish to exchange "" key "orders.wait.5m" (waits 5m in orders.wait.5m), ack
	// after 3 retries: publish to exchange "" key "orders.dlq", ack
	// x-retry-count: 3
}
