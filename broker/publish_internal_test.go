package broker

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A channel the broker closed closes its returns while confirms are still
// buffered: draining the returns then ends (it spun forever on the closed
// channel, taking empty returns: seen as a replay that never ended).
func TestDrainReturnsStopsAtAClosedChannel(t *testing.T) {
	ch := make(chan amqp.Return, 2)
	ch <- amqp.Return{MessageId: "a"}
	close(ch)
	var took []string
	next := drainReturns(ch, func(r amqp.Return) { took = append(took, r.MessageId) })
	if next != nil || len(took) != 1 || took[0] != "a" {
		t.Fatalf("next %v, took %v", next, took)
	}
	open := make(chan amqp.Return, 1)
	if drainReturns(open, func(amqp.Return) {}) == nil {
		t.Fatal("an open channel with nothing waiting was dropped")
	}
}
