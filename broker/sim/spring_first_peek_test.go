package sim

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Issue 32: a Spring AMQP application's failures (brokertest.SpringRetry),
// in a queue only their headers tie to the work queue. The first peek of
// a fresh simulation and of a fresh live client counts alike: the 2
// expiries x-death records in the retry queue, learned from the messages.
func TestFirstPeekOfSpringFailuresAgreesWithTheLiveBroker(t *testing.T) {
	r := brokertest.OwnVhost(t)
	ch := brokertest.Channel(t, r, "test spring retry")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	sr := brokertest.NewSpringRetry("orders")
	if err := sr.Declare(ch); err != nil {
		t.Fatal(err)
	}
	const n = 3
	if err := sr.Fail(context.Background(), ch, "spring", n, time.Minute); err != nil {
		t.Fatal(err)
	}
	first := func(c broker.Client) []broker.Message {
		t.Helper()
		res, err := c.Peek(context.Background(), sr.Failed, broker.PeekOptions{Limit: n})
		if err != nil || len(res.Messages) != n {
			t.Fatalf("peek %s: %v", sr.Failed, err)
		}
		return res.Messages
	}
	live, err := rabbit.NewLive(r, "test spring first peek")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	liveMsgs := first(live)

	// The simulation: the same queues, and the same messages republished
	// to DLX as the application did (their headers as the broker gave
	// them).
	s := New(Options{Seed: 1, Now: fixedClock, Quiet: true, BrokerVersion: brokerVersion(t, live)})
	t.Cleanup(func() { s.Close() })
	s.mu.Lock()
	s.queues, s.byName, s.exchanges, s.bindings, s.topo = nil, map[string]*queue{}, nil, nil, nil
	s.declareExchange(sr.Queue, topology.ExchangeDirect, nil)
	s.declareExchange("DLX", topology.ExchangeDirect, nil)
	for _, q := range []struct {
		name string
		args map[string]any
	}{
		{sr.Queue, map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": sr.Retry}},
		{sr.Retry, map[string]any{"x-message-ttl": int64(sr.TTL / time.Millisecond), "x-dead-letter-exchange": sr.Queue, "x-dead-letter-routing-key": sr.Queue}},
		{sr.Failed, nil},
	} {
		if err := s.declareQueue(q.name, q.args); err != nil {
			t.Fatal(err)
		}
	}
	s.bind(sr.Queue, sr.Queue, sr.Queue, nil)
	s.bind("DLX", sr.Failed, "error."+sr.Queue, nil)
	s.mu.Unlock()
	for _, m := range liveMsgs {
		s.testPublishBody(t, "DLX", "error."+sr.Queue, m.Properties.MessageID, m.Headers, string(m.Body))
	}
	simMsgs := first(s)

	for i := range n {
		lr, sr2 := liveMsgs[i].Retry, simMsgs[i].Retry
		if lr.Count != 2 || lr.Source != retry.SourceXDeath || !slices.Equal(lr.CountedIn, []string{sr.Retry}) || lr.CountFrom != retry.CountFromMessages {
			t.Errorf("live #%d: count %d from %q in %v (%q); want 2 from x-death in %s, learned from the messages", i, lr.Count, lr.Source, lr.CountedIn, lr.CountFrom, sr.Retry)
		}
		if sr2.Count != lr.Count || sr2.Source != lr.Source || !slices.Equal(sr2.CountedIn, lr.CountedIn) || sr2.CountFrom != lr.CountFrom {
			t.Errorf("#%d: the simulation counts %d from %q in %v (%q), the live broker %d from %q in %v (%q)",
				i, sr2.Count, sr2.Source, sr2.CountedIn, sr2.CountFrom, lr.Count, lr.Source, lr.CountedIn, lr.CountFrom)
		}
	}
}
