package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/broker/rabbit"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Noise is what a contributor's own broker holds: other teams' ladders and
// queues, with messages, named to sort before the tests' own names so they
// fill the first screen of every list.
const (
	noisePrefix  = "aaa-noise."
	noiseVhost   = "ladder-noise"
	noiseLadders = 50
	noiseQueues  = 200
)

func noiseUp(ctx context.Context, r *rabbit.Resolved, api *rabbithole.Client) error {
	if _, err := api.PutVhost(noiseVhost, rabbithole.VhostSettings{}); err != nil {
		return fmt.Errorf("create vhost %s: %w", noiseVhost, err)
	}
	if _, err := api.UpdatePermissionsIn(noiseVhost, r.APIUser, rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"}); err != nil {
		return fmt.Errorf("grant %s on %s: %w", r.APIUser, noiseVhost, err)
	}
	for _, vh := range []string{"/", noiseVhost} {
		rv := *r
		rv.Vhost = vh
		if err := declareNoise(ctx, &rv); err != nil {
			return fmt.Errorf("noise in vhost %s: %w", vh, err)
		}
	}
	fmt.Fprintf(os.Stderr, "brokerstate: noise up: %d ladders and %d queues in / and in %s\n", noiseLadders, noiseQueues, noiseVhost)
	return nil
}

// declareNoise declares ladders of the Go seed's shape (topic exchange, main
// queue, three TTL tiers, DLQ), some with messages waiting and dead, and
// plain queues of every kind a broker holds: empty, deep, with a queue TTL,
// with per-message expirations, quorum.
func declareNoise(ctx context.Context, r *rabbit.Resolved) error {
	conn, err := r.DialAMQP(ctx, "test noise")
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	if err := ch.Confirm(false); err != nil {
		return err
	}
	var pending []*amqp.DeferredConfirmation
	pub := func(x, key string, p amqp.Publishing) error {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, x, key, false, false, p)
		pending = append(pending, dc)
		return err
	}
	for i := 0; i < noiseLadders; i++ {
		p := fmt.Sprintf("%ssvc%02d.", noisePrefix, i)
		steps := []func() error{
			func() error { return ch.ExchangeDeclare(p+"topic", "topic", true, false, false, false, nil) },
			func() error { return ch.ExchangeDeclare(p+"retry", "direct", true, false, false, false, nil) },
			func() error { return ch.ExchangeDeclare(p+"dlx", "fanout", true, false, false, false, nil) },
			func() error {
				_, err := ch.QueueDeclare(p+"process", true, false, false, false, amqp.Table{"x-dead-letter-exchange": p + "dlx"})
				return err
			},
			func() error { return ch.QueueBind(p+"process", "orders.#", p+"topic", false, nil) },
			func() error { _, err := ch.QueueDeclare(p+"dlq", true, false, false, false, nil); return err },
			func() error { return ch.QueueBind(p+"dlq", "", p+"dlx", false, nil) },
		}
		for _, ttl := range []string{"5s", "30s", "5m"} {
			ms := map[string]int32{"5s": 5000, "30s": 30000, "5m": 300000}[ttl]
			name := p + "wait." + ttl
			steps = append(steps,
				func() error {
					_, err := ch.QueueDeclare(name, true, false, false, false, amqp.Table{"x-message-ttl": ms, "x-dead-letter-exchange": p + "topic"})
					return err
				},
				func() error { return ch.QueueBind(name, ttl, p+"retry", false, nil) })
		}
		for _, s := range steps {
			if err := s(); err != nil {
				return fmt.Errorf("ladder %s: %w", p, err)
			}
		}
		// Work piling up, retries waiting a long tier, the dead.
		for j := 0; j < i%4; j++ {
			if err := pub(p+"topic", "orders.created", amqp.Publishing{MessageId: fmt.Sprintf("noise-%d-%d", i, j), Body: []byte("{}")}); err != nil {
				return err
			}
			if err := pub(p+"retry", "5m", amqp.Publishing{Headers: amqp.Table{"x-retry-count": int32(2)}, Body: []byte("{}")}); err != nil {
				return err
			}
			if err := pub("", p+"dlq", amqp.Publishing{Headers: amqp.Table{"x-retry-count": int32(3)}, Body: []byte("dead")}); err != nil {
				return err
			}
		}
	}
	for i := 0; i < noiseQueues; i++ {
		name := fmt.Sprintf("%sq%03d", noisePrefix, i)
		var args amqp.Table
		switch i % 10 {
		case 1:
			args = amqp.Table{"x-message-ttl": int32(600000)}
		case 2:
			args = amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": fmt.Sprintf("%sq%03d", noisePrefix, i+1)}
		case 3:
			if i < 40 { // a few: every quorum queue is a Raft group
				args = amqp.Table{"x-queue-type": "quorum"}
			}
		}
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			return fmt.Errorf("queue %s: %w", name, err)
		}
		for j := 0; j < i%5; j++ {
			m := amqp.Publishing{Body: []byte(strings.Repeat("n", 64))}
			if i%10 == 2 {
				m.Expiration = "3600000"
			}
			if err := pub("", name, m); err != nil {
				return err
			}
		}
	}
	for _, dc := range pending {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		ok, err := dc.WaitContext(wctx)
		cancel()
		if err != nil || !ok {
			return fmt.Errorf("noise publish not confirmed: %v", err)
		}
	}
	return nil
}

func noiseDown(api *rabbithole.Client) error {
	if _, err := api.DeleteVhost(noiseVhost); err != nil && !notFound(err) {
		return fmt.Errorf("delete vhost %s: %w", noiseVhost, err)
	}
	qs, err := api.ListQueuesIn("/")
	if err != nil {
		return fmt.Errorf("list queues in /: %w", err)
	}
	for _, q := range qs {
		if strings.HasPrefix(q.Name, noisePrefix) {
			if _, err := api.DeleteQueue("/", q.Name); err != nil && !notFound(err) {
				return fmt.Errorf("delete queue %s: %w", q.Name, err)
			}
		}
	}
	xs, err := api.ListExchangesIn("/")
	if err != nil {
		return fmt.Errorf("list exchanges in /: %w", err)
	}
	for _, x := range xs {
		if strings.HasPrefix(x.Name, noisePrefix) {
			if _, err := api.DeleteExchange("/", x.Name); err != nil && !notFound(err) {
				return fmt.Errorf("delete exchange %s: %w", x.Name, err)
			}
		}
	}
	fmt.Fprintln(os.Stderr, "brokerstate: noise down")
	return nil
}
