package brokertest

import (
	"context"
	"testing"

	"github.com/ladder-tui/ladder/broker/rabbit"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Channel opens a connection named name to the broker r reaches and a
// channel on it, both closed when the test ends: the setup most live tests
// start with to declare and publish their fixtures.
func Channel(t testing.TB, r *rabbit.Resolved, name string) *amqp.Channel {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("%s: channel: %v", name, err)
	}
	return ch
}
