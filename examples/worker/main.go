// Command worker is a RabbitMQ worker that retries failed messages through
// the Go seed's ladder, using only the retry package: a main queue, wait
// tiers of 5s, 30s and 5m (queues whose TTL dead-letters back to the main
// queue), and a DLQ once three retries have failed. The count travels in
// x-retry-count.
//
// On a failure it reads the message's retry state, plans, publishes as the
// plan says and waits for the broker's confirm, and only then acks the
// delivery: a crash in between redelivers the message rather than losing it.
//
//	go run ./examples/worker -url amqp://guest:guest@127.0.0.1:5672/ -prefix orders -fail 'poison'
//
// Messages whose body matches -fail always fail; those matching -flaky fail
// on their first delivery only. Everything else succeeds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/retry"
)

// config is what the worker runs with (flags, else environment).
type config struct {
	URL        string
	Prefix     string
	Tiers      []time.Duration
	MaxRetries int
	Fail       *regexp.Regexp // always fails
	Flaky      *regexp.Regexp // fails on the first delivery only
	Log        *log.Logger
	// ready, when set, is closed once the queues are declared and the
	// consumer runs (tests publish after it).
	ready chan struct{}
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		cfg.Log.Fatal(err)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	url := fs.String("url", envOr("WORKER_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/"), "AMQP URL (env WORKER_AMQP_URL)")
	prefix := fs.String("prefix", envOr("WORKER_PREFIX", "orders"), "queue name prefix: PREFIX.process, PREFIX.wait.TTL, PREFIX.dlq (env WORKER_PREFIX)")
	tiers := fs.String("tiers", envOr("WORKER_TIERS", "5s,30s,5m"), "wait tiers' TTLs, shortest first (env WORKER_TIERS)")
	maxRetries := fs.Int("max-retries", 3, "retries before a message is parked in the DLQ")
	fail := fs.String("fail", "", "regexp: a message whose body matches always fails")
	flaky := fs.String("flaky", "", "regexp: a message whose body matches fails on its first delivery only")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	cfg := config{URL: *url, Prefix: *prefix, MaxRetries: *maxRetries, Log: log.New(os.Stderr, "worker: ", log.LstdFlags)}
	for _, s := range strings.Split(*tiers, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d < time.Millisecond {
			return config{}, fmt.Errorf("-tiers: %q is not a duration of a millisecond or more", s)
		}
		cfg.Tiers = append(cfg.Tiers, d)
	}
	var err error
	if cfg.Fail, err = compile("-fail", *fail); err != nil {
		return config{}, err
	}
	if cfg.Flaky, err = compile("-flaky", *flaky); err != nil {
		return config{}, err
	}
	return cfg, nil
}

func compile(flagName, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	return re, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// ladderOf names the ladder's queues: the worker declares them, so it
// knows them; nothing needs discovering.
func ladderOf(cfg config) *retry.Ladder {
	l := &retry.Ladder{Main: cfg.Prefix + ".process", DLQ: cfg.Prefix + ".dlq"}
	for _, ttl := range cfg.Tiers {
		l.Tiers = append(l.Tiers, retry.Tier{Queue: cfg.Prefix + ".wait." + retry.FormatDelay(ttl), TTL: ttl,
			ReturnRoutingKey: l.Main})
	}
	return l
}

// policy is the Go seed's 5^n seconds scaled to the first tier (5s, 25s,
// 125s by default), capped at the longest tier so every retry fits one.
func policy(cfg config) retry.Policy {
	return retry.Policy{Backoff: retry.BackoffExponential, Base: cfg.Tiers[0], Factor: 5, Cap: cfg.Tiers[len(cfg.Tiers)-1]}
}

// declare makes the ladder: the main queue dead-letters to the DLQ (where a
// nack without requeue sends a message), each tier back to the main queue
// through the default exchange once its TTL is up.
func declare(ch *amqp.Channel, l *retry.Ladder) error {
	queues := []struct {
		name string
		args amqp.Table
	}{
		{l.DLQ, nil},
		{l.Main, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": l.DLQ}},
	}
	for _, t := range l.Tiers {
		queues = append(queues, struct {
			name string
			args amqp.Table
		}{t.Queue, amqp.Table{"x-message-ttl": t.TTL.Milliseconds(), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": l.Main}})
	}
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			return fmt.Errorf("declare queue %s: %w", q.name, err)
		}
	}
	return nil
}

// run declares the ladder and consumes the main queue until ctx ends.
func run(ctx context.Context, cfg config) error {
	conn, err := amqp.DialConfig(cfg.URL, amqp.Config{Properties: amqp.Table{"connection_name": "ladder example worker"}})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("channel: %w", err)
	}
	l := ladderOf(cfg)
	if err := declare(ch, l); err != nil {
		return err
	}
	if err := ch.Confirm(false); err != nil {
		return fmt.Errorf("confirm mode: %w", err)
	}
	if err := ch.Qos(10, 0, false); err != nil {
		return fmt.Errorf("qos: %w", err)
	}
	ds, err := ch.ConsumeWithContext(ctx, l.Main, "", false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("consume %s: %w", l.Main, err)
	}
	if cfg.ready != nil {
		close(cfg.ready)
	}
	opts := retry.PlanOptions{Policy: policy(cfg), MaxAttempts: cfg.MaxRetries, Ladder: l}
	deathQueues := retry.DeathQueues(l)
	for {
		select {
		case <-ctx.Done():
			return nil
		case d, ok := <-ds:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return errors.New("consumer closed by the broker")
			}
			if err := handle(ctx, ch, &d, cfg, opts, deathQueues); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("message %s: %w", d.MessageId, err)
			}
		}
	}
}

// handle processes one delivery and settles it.
func handle(ctx context.Context, ch *amqp.Channel, d *amqp.Delivery, cfg config, opts retry.PlanOptions, deathQueues map[string]bool) error {
	h := retry.Headers(d.Headers)
	st := retry.ReadState(h, deathQueues)
	failure := process(d.Body, st.Count, cfg)
	if failure == nil {
		cfg.Log.Printf("processed %s after %d retries", d.MessageId, st.Count)
		return d.Ack(false)
	}
	opts.RoutingKey = d.RoutingKey
	act, err := retry.Plan(h, st, opts)
	if err != nil {
		// Cannot plan: the main queue dead-letters it to the DLQ.
		cfg.Log.Printf("cannot plan %s: %v; to the DLQ", d.MessageId, err)
		return d.Nack(false, false)
	}
	switch act.Kind {
	case retry.ActionDrop:
		cfg.Log.Printf("dropped %s after %d retries", d.MessageId, st.Count)
		return d.Ack(false)
	case retry.ActionDelayQueue:
		// A per-delay wait queue is declared before every publish (which
		// renews its x-expires). The capped policy never asks for one here.
		if _, err := ch.QueueDeclare(act.Queue, true, false, false, false, amqp.Table(act.QueueArgs)); err != nil {
			return fmt.Errorf("declare wait queue %s: %w", act.Queue, err)
		}
	}
	if act.Headers == nil { // a message without headers parked at once
		act.Headers = retry.Headers{}
	}
	act.Headers["x-last-error"] = failure.Error()
	pub := amqp.Publishing{
		Headers: amqp.Table(act.Headers), Body: d.Body, MessageId: d.MessageId, ContentType: d.ContentType,
		DeliveryMode: amqp.Persistent, Timestamp: time.Now(),
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, act.Exchange, act.RoutingKey, false, false, pub)
	if err != nil {
		return fmt.Errorf("publish to %s: %w", act.Queue, err)
	}
	stored, err := dc.WaitContext(ctx)
	if err != nil {
		return fmt.Errorf("confirm of publish to %s: %w", act.Queue, err)
	}
	if !stored {
		// The broker did not take the copy: keep the original.
		cfg.Log.Printf("publish of %s to %s nacked; requeued", d.MessageId, act.Queue)
		return d.Nack(false, true)
	}
	if act.Kind == retry.ActionPark {
		cfg.Log.Printf("parked %s in %s after %d retries", d.MessageId, act.Queue, st.Count)
	} else {
		cfg.Log.Printf("retry %d of %s via %s (%s)", act.Attempt, d.MessageId, act.Queue, retry.FormatDelay(act.Delay))
	}
	return d.Ack(false)
}

// process stands in for the worker's real work.
func process(body []byte, retries int64, cfg config) error {
	switch {
	case cfg.Fail != nil && cfg.Fail.Match(body):
		return errors.New("worker: permanent failure (matches -fail)")
	case cfg.Flaky != nil && cfg.Flaky.Match(body) && retries == 0:
		return errors.New("worker: transient failure (matches -flaky)")
	}
	return nil
}
