package rabbit_test

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// TestSmokeAMQPAndAPI proves the suite really reaches the broker: a queue is
// declared, used and deleted over AMQP, and the management API answers.
func TestSmokeAMQPAndAPI(t *testing.T) {
	r := brokertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	conn, err := r.DialAMQP(ctx, "test smoke")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q := brokertest.Name(t, "q")
	if _, err := ch.QueueDeclare(q, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := ch.QueueDelete(q, false, false, false); err != nil {
			t.Errorf("delete %s: %v", q, err)
		}
	})
	if err := ch.PublishWithContext(ctx, "", q, true, false, amqp.Publishing{Body: []byte("hello"), MessageId: "m1"}); err != nil {
		t.Fatal(err)
	}
	var got amqp.Delivery
	for i := 0; i < 50; i++ {
		d, ok, err := ch.Get(q, true)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got = d
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if string(got.Body) != "hello" || got.MessageId != "m1" {
		t.Fatalf("got body %q id %q, want hello m1", got.Body, got.MessageId)
	}

	api, err := r.API()
	if err != nil {
		t.Fatal(err)
	}
	ov, err := api.Overview()
	if err != nil {
		t.Fatal(r.APIError("overview", err))
	}
	if ov.RabbitMQVersion == "" {
		t.Fatal("overview has no broker version")
	}
	t.Logf("broker %s", ov.RabbitMQVersion)
}
