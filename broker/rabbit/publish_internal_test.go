package rabbit

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"

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
	// A select's read of a closed returns channel (move's, Publish's).
	if nextReturns(open, amqp.Return{}, false, func(amqp.Return) { t.Fatal("took a return from a closed channel") }) != nil {
		t.Fatal("a closed channel is waited on again")
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
		batch := []broker.Outgoing{{Body: make([]byte, 10)}, {Body: make([]byte, 300)}, {Body: make([]byte, 10)}}
		out := make([]broker.Outcome, len(batch))
		settled := map[int]bool{0: true}
		why := &amqp.Error{Code: amqp.PreconditionFailed, Reason: reason, Server: true}
		if err := l.channelEnded(nil, why, batch, []int{0, 1, 2}, settled, out); !errors.Is(err, broker.ErrTooLarge) {
			t.Fatalf("%q: %v, not read as a size refusal", reason, err)
		}
		if !out[1].NotSent || !errors.Is(out[1].Err, broker.ErrTooLarge) || !strings.Contains(out[1].Err.Error(), "message too large: "+reason) {
			t.Errorf("%q: refused one %+v", reason, out[1])
		}
		if !out[2].NotSent || !errors.Is(out[2].Err, broker.ErrNotReached) || out[0].Err != nil {
			t.Errorf("%q: others %+v", reason, out)
		}
		if got := l.maxMsg.Load(); got != limit {
			t.Errorf("%q: learnt %d, want %d", reason, got, limit)
		}
	}
}

// A channel the broker closed over a refused publish: the refused one is
// the first unsettled publish to the exchange the refusal names; it and
// those after it are not sent, those before it are in doubt. A lost
// connection leaves every unsettled one in doubt, in its own words.
func TestChannelEndedTellsTheRefusedPublish(t *testing.T) {
	batch := []broker.Outgoing{{Exchange: "a"}, {Exchange: "a"}, {Exchange: ""}, {Exchange: "a"}, {Exchange: ""}}
	seqs := []int{0, 1, 2, 3, 4}
	for _, c := range []struct {
		why     *amqp.Error
		kind    error
		doubt   []int
		refused int
	}{
		{&amqp.Error{Code: amqp.AccessRefused, Server: true, Reason: "ACCESS_REFUSED - write access to exchange 'amq.default' in vhost 'v' refused for user 'u'"}, broker.ErrAccessRefused, []int{1}, 2},
		{&amqp.Error{Code: amqp.NotFound, Server: true, Reason: "NOT_FOUND - no exchange 'a' in vhost 'v'"}, nil, nil, 1},
		{&amqp.Error{Code: amqp.AccessRefused, Server: true, Reason: "ACCESS_REFUSED - write access to exchange 'it's' in vhost 'v' refused for user 'u'"}, broker.ErrAccessRefused, []int{1, 2, 3, 4}, -1},
		{&amqp.Error{Code: amqp.FrameError, Reason: "EOF"}, broker.ErrConnLost, []int{1, 2, 3, 4}, -1},
	} {
		out := make([]broker.Outcome, len(batch))
		out[0].Confirmed = true
		err := (&Live{}).channelEnded(nil, c.why, batch, seqs, map[int]bool{0: true}, out)
		if c.kind != nil && !errors.Is(err, c.kind) || c.why.Server && !strings.Contains(err.Error(), c.why.Reason) {
			t.Errorf("%q: %v", c.why.Reason, err)
		}
		for i, o := range out {
			switch {
			case i == 0:
				if !o.Confirmed || o.Err != nil {
					t.Errorf("%q: the confirmed one became %+v", c.why.Reason, o)
				}
			case slices.Contains(c.doubt, i):
				if o.NotSent || !errors.Is(o.Err, err) || !strings.Contains(o.Err.Error(), "may have reached the broker") {
					t.Errorf("%q: #%d %+v, want in doubt", c.why.Reason, i, o)
				}
			case i == c.refused:
				if !o.NotSent || o.Err != err {
					t.Errorf("%q: #%d %+v, want the refused one", c.why.Reason, i, o)
				}
			default:
				if !o.NotSent || !errors.Is(o.Err, broker.ErrNotReached) {
					t.Errorf("%q: #%d %+v, want not reached", c.why.Reason, i, o)
				}
			}
		}
	}
}
