package broker

import (
	"errors"
	"strings"
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

// A batch's channel closed over a message too large, in either of the
// broker's wordings: that message is not sent and is ErrTooLarge (the one
// sentinel replay skips a line by), those after it were never reached, and
// the limit it named is learnt.
func TestRefusedTooLargeInBothWordings(t *testing.T) {
	for reason, limit := range map[string]int64{
		"PRECONDITION_FAILED - message size 300 is larger than configured max size 200": 200,
		"PRECONDITION_FAILED - message size 300 is larger than max size 200":            200,
	} {
		l := &Live{}
		batch := []Outgoing{{Body: make([]byte, 10)}, {Body: make([]byte, 300)}, {Body: make([]byte, 10)}}
		out := make([]Outcome, len(batch))
		settled := map[int]bool{0: true}
		why := &amqp.Error{Code: amqp.PreconditionFailed, Reason: reason, Server: true}
		if !l.refused(nil, why, batch, []int{0, 1, 2}, settled, out) {
			t.Fatalf("%q: not read as a size refusal", reason)
		}
		if !out[1].NotSent || !errors.Is(out[1].Err, ErrTooLarge) || !strings.Contains(out[1].Err.Error(), "message too large: "+reason) {
			t.Errorf("%q: refused one %+v", reason, out[1])
		}
		if !out[2].NotSent || !errors.Is(out[2].Err, errNotReached) || out[0].Err != nil {
			t.Errorf("%q: others %+v", reason, out)
		}
		if got := l.maxMsg.Load(); got != limit {
			t.Errorf("%q: learnt %d, want %d", reason, got, limit)
		}
	}
}
