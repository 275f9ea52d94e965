package rabbit_test

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry"
)

// What the inspector's x-death timeline says ("latest death first", each
// time the first of its queue and reason) is the broker's: a message
// rejected in main 3 times and expired in its wait queue 2 times in
// between reads main first (its latest death), although main's time (its
// first rejection) is older than the wait queue's.
func TestXDeathIsLatestDeathFirst(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newFixture(t)
	main, wait := brokertest.Name(t, "main"), brokertest.Name(t, "wait")
	f.declareQueue(main, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": wait})
	f.declareQueue(wait, amqp.Table{"x-message-ttl": int32(1100), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": main})
	f.publish("", main, amqp.Publishing{MessageId: "cycled", Body: []byte("x")})
	ch := f.channel()
	defer ch.Close()
	var held <-chan amqp.Delivery
	for i := range 3 {
		var d amqp.Delivery
		if !brokertest.WaitFor(30*time.Second, func() bool {
			var ok bool
			d, ok, _ = ch.Get(main, false)
			return ok
		}) {
			t.Fatalf("rejection %d: the message never came back to %s", i+1, main)
		}
		if i == 2 {
			// A consumer that does not ack holds the message when it
			// reaches the wait queue the third time, so it cannot expire
			// before it is read (a peek had the TTL's 1.1 s to catch it,
			// which a busy machine missed).
			hold := f.channel()
			defer hold.Close()
			if err := hold.Qos(1, 0, false); err != nil {
				t.Fatal(err)
			}
			var err error
			if held, err = hold.Consume(wait, "", false, false, false, false, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
	}
	var m broker.Message
	select {
	case d := <-held:
		// Decoded as a peek decodes what it browses.
		m.Headers = rabbit.FromTable(d.Headers)
		decode.DecodeMessage(&m, d.Body, 0, nil, nil)
	case <-time.After(60 * time.Second):
		t.Fatal("the message never reached the wait queue")
	}
	ds := m.Deaths
	if len(ds) != 2 || ds[0].Queue != main || ds[0].Reason != retry.ReasonRejected || ds[0].Count != 3 ||
		ds[1].Queue != wait || ds[1].Reason != retry.ReasonExpired || ds[1].Count != 2 {
		t.Fatalf("x-death %+v", ds)
	}
	// The order is the latest death's; the times are the first deaths'
	// (the wait queue's came a TTL of 1.1 s after main's: another second).
	if !ds[0].Time.Before(ds[1].Time) {
		t.Errorf("main's time %v is not its first death, before the wait queue's %v", ds[0].Time, ds[1].Time)
	}
}
