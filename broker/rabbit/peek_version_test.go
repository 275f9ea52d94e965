package rabbit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// Why PeekModeOf browses quorum queues over AMQP 1.0 only from RabbitMQ
// 4.3: the same browse (link credit for exactly the messages, each settled
// with the released outcome) counts a delivery on 4.0 as any return does,
// so it is no costless peek there; on 4.3 it counts none. Both keep the
// order.
func TestPeekQuorumByVersion(t *testing.T) {
	for _, c := range []struct {
		version string
		counted bool
	}{{"4.0", true}, {"4.3", false}} {
		t.Run(c.version, func(t *testing.T) {
			f := fixtureOn(t, brokertest.OwnVhostOn(t, brokertest.RequireVersion(t, c.version)))
			q := f.queue("qq", amqp.Table{"x-queue-type": "quorum"})
			f.publishN(q, 3, "m")
			ids, err := rabbit.BrowseAMQP1ForTest(context.Background(), f.live(true), q, 3)
			if err != nil || fmt.Sprint(ids) != "[m-0 m-1 m-2]" {
				t.Fatalf("RabbitMQ %s: browsed %v: %v", c.version, ids, err)
			}
			f.waitDepth(q, 3)
			var got []string
			for _, d := range f.drain(q, 500*time.Millisecond) {
				n, ok := d.Headers["x-delivery-count"]
				counted := ok && fmt.Sprint(n) != "0"
				got = append(got, d.MessageId)
				if counted != c.counted {
					t.Errorf("RabbitMQ %s: %s arrives with x-delivery-count %v after the released browse (counted: %v, want %v)", c.version, d.MessageId, n, counted, c.counted)
				}
			}
			if fmt.Sprint(got) != "[m-0 m-1 m-2]" {
				t.Fatalf("RabbitMQ %s: the queue holds %v", c.version, got)
			}
		})
	}
}
