package retry_test

import (
	"fmt"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// A worker's failure path: read the message's retry state, plan the retry,
// and publish (or nack) as the action says. Only the printing stands in for
// the AMQP calls.
func Example_plan() {
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
		// The Go seed's 5^n seconds: 5s, 25s, 125s.
		Policy:      retry.Policy{Backoff: retry.BackoffExponential, Base: 5 * time.Second, Factor: 5},
		MaxAttempts: 3,
		Ladder:      ladder,
	}

	// With amqp091-go: headers := retry.Headers(delivery.Headers)
	headers := retry.Headers{"x-retry-count": int32(1)}
	for range 3 {
		st := retry.ReadState(headers, retry.DeathQueues(ladder))
		act, err := retry.Plan(headers, st, opts)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch act.Kind {
		case retry.ActionTier:
			fmt.Printf("attempt %d: publish to %s (wait %s), ack the original\n", act.Attempt, act.Queue, retry.FormatDelay(act.Delay))
		case retry.ActionPark:
			fmt.Printf("exhausted after %d retries: nack without requeue, it goes to %s\n", st.Count, act.Queue)
		}
		headers = act.Headers // the next delivery carries what we published
	}
	// Output:
	// attempt 2: publish to orders.wait.30s (wait 30s), ack the original
	// attempt 3: publish to orders.wait.5m (wait 5m), ack the original
	// exhausted after 3 retries: nack without requeue, it goes to orders.dlq
}
