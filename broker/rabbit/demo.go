package rabbit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/internal/secret"
	"github.com/ladder-tui/ladder/retry"
)

// The Go seed's ladder, as `ladder demo --real` declares it.
const (
	DemoExchange = "orders.topic"
	DemoRetry    = "orders.retry" // headers exchange: retry-tier=<tier> → that tier
	DemoDLX      = "orders.dlx"
	DemoMain     = "orders.process"
	DemoDLQ      = "orders.dlq"
	// DemoTierHeader picks the tier at orders.retry, so the message keeps
	// its own routing key and the tier dead-letters it back with that key.
	DemoTierHeader = "retry-tier"
)

// DemoTiers are the wait tiers and their TTLs.
var DemoTiers = []retry.Tier{
	{Queue: "orders.wait.5s", TTL: 5 * time.Second},
	{Queue: "orders.wait.30s", TTL: 30 * time.Second},
	{Queue: "orders.wait.5m", TTL: 5 * time.Minute},
}

// DemoPolicy is the Go seed's backoff: 5^n seconds.
var DemoPolicy = retry.Policy{Backoff: retry.BackoffExponential, Base: 5 * time.Second, Factor: 5}

// DemoOptions tune the real demo's traffic.
type DemoOptions struct {
	// Prefix, when set, is put before every name ("<prefix>.orders.process"),
	// so tests can run the demo in a shared vhost.
	Prefix      string
	Rate        float64 // messages per second (default 5)
	FailShare   float64 // share of deliveries that fail and retry (default 0.3)
	PoisonShare float64 // share rejected for good at once (default 0.05)
	MaxAttempts int     // retries before parking in the DLQ (default 3)
	// Ready, when set, is called once the ladder is declared and traffic
	// starts: a banner printed before would stand beside a failed dial.
	Ready func()
}

// DemoStats count what the demo did.
type DemoStats struct {
	Published int64 `json:"published"`
	Processed int64 `json:"processed"`
	Retried   int64 `json:"retried"`
	Parked    int64 `json:"parked"`
}

// demoNames are the demo's exchange and queue names under a prefix.
type demoNames struct {
	exchange, retry, dlx, main, dlq string
	tiers                           []retry.Tier
}

func namesFor(prefix string) demoNames {
	p := func(s string) string {
		if prefix == "" {
			return s
		}
		return prefix + "." + s
	}
	n := demoNames{exchange: p(DemoExchange), retry: p(DemoRetry), dlx: p(DemoDLX), main: p(DemoMain), dlq: p(DemoDLQ)}
	for _, t := range DemoTiers {
		t.Queue = p(t.Queue)
		n.tiers = append(n.tiers, t)
	}
	return n
}

// DeclareGoSeed declares the Go seed's ladder (names under prefix, if any);
// existing queues with other arguments make the broker refuse, and the
// error names the queue.
func DeclareGoSeed(conn *amqp.Connection, prefix string) error {
	n := namesFor(prefix)
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	exchanges := []struct{ name, kind string }{{n.exchange, "topic"}, {n.retry, "headers"}, {n.dlx, "fanout"}}
	for _, x := range exchanges {
		if err := ch.ExchangeDeclare(x.name, x.kind, true, false, false, false, nil); err != nil {
			return fmt.Errorf("declare exchange %s: %w", x.name, err)
		}
	}
	queues := []struct {
		name string
		args amqp.Table
	}{
		{n.main, amqp.Table{"x-dead-letter-exchange": n.dlx}},
		{n.dlq, nil},
	}
	for _, t := range n.tiers {
		queues = append(queues, struct {
			name string
			args amqp.Table
		}{t.Queue, amqp.Table{"x-message-ttl": int32(t.TTL.Milliseconds()), "x-dead-letter-exchange": n.exchange}})
	}
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			var ae *amqp.Error
			if errors.As(err, &ae) && ae.Code == amqp.PreconditionFailed {
				// One line that says what to do, not amqp091's
				// "Exception (406) Reason: \"PRECONDITION_FAILED - …\"".
				return secret.Reworded(fmt.Sprintf("queue %s already exists with other arguments (%s); delete it or use another vhost", q.name, demoArgs(q.args)), err)
			}
			return fmt.Errorf("declare queue %s: %w", q.name, err)
		}
	}
	binds := []struct {
		q, key, x string
		args      amqp.Table
	}{{n.main, "orders.#", n.exchange, nil}, {n.dlq, "", n.dlx, nil}}
	for _, t := range n.tiers {
		binds = append(binds, struct {
			q, key, x string
			args      amqp.Table
		}{t.Queue, "", n.retry, amqp.Table{"x-match": "all", DemoTierHeader: t.Queue}})
	}
	for _, b := range binds {
		if err := ch.QueueBind(b.q, b.key, b.x, false, b.args); err != nil {
			return fmt.Errorf("bind %s to %s: %w", b.q, b.x, err)
		}
	}
	return nil
}

// demoArgs is what the demo declares a queue with: "x-dead-letter-exchange
// orders.dlx, x-message-ttl 5000".
func demoArgs(args amqp.Table) string {
	if len(args) == 0 {
		return "the demo declares it without arguments"
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %v", k, args[k])
	}
	return strings.Join(parts, ", ")
}

// RunGoSeedDemo declares the Go seed's ladder and runs a producer and a
// worker that fails a share of messages and retries them through the retry
// engine's Plan, until ctx ends. report is called about once a second.
func RunGoSeedDemo(ctx context.Context, r *Resolved, o DemoOptions, report func(DemoStats)) (DemoStats, error) {
	if o.Rate <= 0 {
		o.Rate = 5
	}
	if o.FailShare <= 0 {
		o.FailShare = 0.3
	}
	if o.PoisonShare <= 0 {
		o.PoisonShare = 0.05
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	var st demoCounters
	conn, err := r.DialAMQP(ctx, "demo")
	if err != nil {
		return DemoStats{}, err
	}
	defer conn.Close()
	n := namesFor(o.Prefix)
	if err := DeclareGoSeed(conn, o.Prefix); err != nil {
		return DemoStats{}, err
	}
	// The worker plans with the ladder as discovery sees it.
	l, err := NewLive(r, "demo snapshot")
	if err != nil {
		return DemoStats{}, err
	}
	snap, err := l.Snapshot(ctx)
	l.Close()
	if err != nil {
		return DemoStats{}, err
	}
	ladder, ok := retry.LadderOf(snap.Ladders, n.main)
	if !ok {
		return DemoStats{}, fmt.Errorf("demo: discovery does not see %s as a ladder", n.main)
	}
	if o.Ready != nil {
		o.Ready()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs <- demoProduce(ctx, conn, o, n, &st) }()
	go func() { defer wg.Done(); errs <- demoWork(ctx, conn, o, n, &ladder, &st) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var first error
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case e := <-errs:
			if e != nil && first == nil && ctx.Err() == nil {
				first = e
				done = true
			}
		case <-tick.C:
			if report != nil {
				report(st.stats())
			}
		}
	}
	conn.Close()
	wg.Wait()
	return st.stats(), first
}

type demoCounters struct{ published, processed, retried, parked atomic.Int64 }

func (c *demoCounters) stats() DemoStats {
	return DemoStats{Published: c.published.Load(), Processed: c.processed.Load(), Retried: c.retried.Load(), Parked: c.parked.Load()}
}

func demoProduce(ctx context.Context, conn *amqp.Connection, o DemoOptions, n demoNames, st *demoCounters) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return err
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / o.Rate))
	defer tick.Stop()
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		key := "orders.created"
		if i%3 == 0 {
			key = "orders.paid"
		}
		body, _ := json.Marshal(map[string]any{"order_id": fmt.Sprintf("ord-%06d", i), "amount": 10 + i%90})
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, n.exchange, key, false, false, amqp.Publishing{
			MessageId: fmt.Sprintf("demo-%d-%d", time.Now().Unix(), i), Timestamp: time.Now(), ContentType: "application/json",
			DeliveryMode: amqp.Persistent, AppId: "ladder-demo", Body: body,
		})
		if err != nil {
			return fmt.Errorf("demo producer: %w", err)
		}
		if _, err := dc.WaitContext(ctx); err != nil && ctx.Err() == nil {
			return fmt.Errorf("demo producer: %w", err)
		}
		st.published.Add(1)
	}
}

// demoWork is what the Go seed's worker does, with the retry engine:
// publish the retry (confirmed) first, then ack; park with nack(requeue=false).
func demoWork(ctx context.Context, conn *amqp.Connection, o DemoOptions, n demoNames, ladder *retry.Ladder, st *demoCounters) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return err
	}
	if err := ch.Qos(20, 0, false); err != nil {
		return err
	}
	ds, err := ch.ConsumeWithContext(ctx, n.main, "ladder-demo-worker", false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("demo worker: %w", err)
	}
	deathQueues := retry.DeathQueues(ladder)
	for d := range ds {
		st.processed.Add(1)
		roll := rand.Float64()
		switch {
		case roll < o.PoisonShare:
			st.parked.Add(1)
			err = d.Nack(false, false)
		case roll < o.PoisonShare+o.FailShare:
			err = demoRetry(ctx, ch, &d, o, n, ladder, deathQueues, st)
		default:
			err = d.Ack(false)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("demo worker: %w", err)
		}
	}
	return nil
}

func demoRetry(ctx context.Context, ch *amqp.Channel, d *amqp.Delivery, o DemoOptions, n demoNames, ladder *retry.Ladder, deathQueues map[string]bool, st *demoCounters) error {
	h := fromTable(d.Headers)
	if h == nil {
		h = retry.Headers{}
	}
	h["x-last-error"] = "demo: payment service timed out"
	a, err := retry.Plan(h, retry.ReadState(h, deathQueues), retry.PlanOptions{Policy: DemoPolicy, MaxAttempts: o.MaxAttempts, Ladder: ladder})
	if err != nil {
		return err
	}
	switch a.Kind {
	case retry.ActionPark:
		st.parked.Add(1)
		return d.Nack(false, false)
	case retry.ActionDrop:
		return d.Ack(false)
	case retry.ActionTier:
		a.Headers[DemoTierHeader] = a.Queue
		pub := amqp.Publishing{
			Headers: toTable(a.Headers), MessageId: d.MessageId, Timestamp: d.Timestamp, ContentType: d.ContentType,
			DeliveryMode: d.DeliveryMode, AppId: d.AppId, Body: d.Body,
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, n.retry, d.RoutingKey, true, false, pub)
		if err != nil {
			return err
		}
		ok, err := dc.WaitContext(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return d.Nack(false, true) // not stored: try again later
		}
		st.retried.Add(1)
		return d.Ack(false)
	}
	return errors.New("demo: unexpected plan " + string(a.Kind))
}
