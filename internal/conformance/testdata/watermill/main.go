// Command watermill drives Watermill's retry and poison queue on AMQP to
// their dead end, for ladder's conformance test (internal/conformance:
// watermill_test.go runs it with `go run` in this directory, a module of
// its own so that ladder's go.mod does not carry Watermill).
//
// It follows ThreeDotsLabs/watermill's documented middleware
// (message/router/middleware/retry.go: Retry retries inside the handler;
// message/router/middleware/poison.go: PoisonQueue publishes what still
// fails to a topic of its own, with reason_poisoned, topic_poisoned,
// handler_poisoned and subscriber_poisoned in the metadata) on
// ThreeDotsLabs/watermill-amqp's NewDurableQueueConfig (pkg/amqp/config.go:
// the default exchange, a durable queue named by the topic;
// pkg/amqp/marshaler.go: metadata as headers, the message's UUID in the
// _watermill_message_uuid header).
//
// The handler fails every message; the command exits once every message
// is in the poison queue.
//
// With CONFORMANCE_CONFIG=pubsub it runs on NewDurablePubSubConfig with
// GenerateQueueNameTopicNameWithSuffix("billing") instead: each topic a
// fanout exchange, the subscriber's queue <topic>_billing (orders_billing,
// and poison_queue_billing for the poison topic), so topic_poisoned names
// an exchange, not a queue.
//
// Environment: CONFORMANCE_URL (AMQP URL with the vhost), CONFORMANCE_COUNT
// (messages, UUIDs "order-<i>"), CONFORMANCE_CONFIG ("" or pubsub).
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	amqp091 "github.com/rabbitmq/amqp091-go"
)

const (
	topic       = "orders"
	poisonTopic = "poison_queue" // the name in Watermill's examples
	maxRetries  = 2
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	url := os.Getenv("CONFORMANCE_URL")
	count, err := strconv.Atoi(os.Getenv("CONFORMANCE_COUNT"))
	if err != nil || url == "" {
		return fmt.Errorf("CONFORMANCE_URL and CONFORMANCE_COUNT are required (count: %v)", err)
	}
	logger := watermill.NewStdLogger(false, false)
	cfg := amqp.NewDurableQueueConfig(url)
	if os.Getenv("CONFORMANCE_CONFIG") == "pubsub" {
		cfg = amqp.NewDurablePubSubConfig(url, amqp.GenerateQueueNameTopicNameWithSuffix("billing"))
	}
	poisonQueue := cfg.Queue.GenerateName(poisonTopic)

	pub, err := amqp.NewPublisher(cfg, logger)
	if err != nil {
		return fmt.Errorf("publisher: %w", err)
	}
	defer func() { _ = pub.Close() }()
	sub, err := amqp.NewSubscriber(cfg, logger)
	if err != nil {
		return fmt.Errorf("subscriber: %w", err)
	}
	defer func() { _ = sub.Close() }()
	// The publisher declares no queue: the poison queue is declared the
	// way a subscriber of it would, or what PoisonQueue publishes to the
	// default exchange would be dropped.
	if err := sub.SubscribeInitialize(poisonTopic); err != nil {
		return fmt.Errorf("declare %s: %w", poisonTopic, err)
	}

	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 5 * time.Second}, logger)
	if err != nil {
		return fmt.Errorf("router: %w", err)
	}
	poison, err := middleware.PoisonQueue(pub, poisonTopic)
	if err != nil {
		return fmt.Errorf("poison queue middleware: %w", err)
	}
	var attempts atomic.Int64
	// First added runs outermost: Retry's last error reaches PoisonQueue.
	router.AddMiddleware(poison, middleware.Retry{MaxRetries: maxRetries, InitialInterval: 10 * time.Millisecond, Multiplier: 1}.Middleware)
	router.AddConsumerHandler("charge_order", topic, sub, func(msg *message.Message) error {
		attempts.Add(1)
		return errors.New("payment service unavailable for " + msg.UUID)
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- router.Run(ctx) }()
	select {
	case <-router.Running():
	case err := <-runErr:
		return fmt.Errorf("router: %w", err)
	}

	for i := range count {
		msg := message.NewMessage(fmt.Sprintf("order-%d", i), []byte(fmt.Sprintf(`{"order":%d}`, i)))
		if err := pub.Publish(topic, msg); err != nil {
			return fmt.Errorf("publish %s: %w", msg.UUID, err)
		}
	}

	// The poison queue's depth, read on a connection of the script's own.
	conn, err := amqp091.Dial(url)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("channel: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		q, err := ch.QueueDeclarePassive(poisonQueue, true, false, false, false, nil)
		if err != nil {
			return fmt.Errorf("depth of %s: %w", poisonQueue, err)
		}
		if q.Messages >= count {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s holds %d messages after 60 s, want %d", poisonQueue, q.Messages, count)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-runErr; err != nil {
		return fmt.Errorf("router: %w", err)
	}
	if want := int64(count * (maxRetries + 1)); attempts.Load() != want {
		return fmt.Errorf("handler ran %d times, want %d (%d messages, each tried once and retried %d times)", attempts.Load(), want, count, maxRetries)
	}
	fmt.Printf("watermill: %d messages in %s after %d attempts\n", count, poisonQueue, attempts.Load())
	return nil
}
