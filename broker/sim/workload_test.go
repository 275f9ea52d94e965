package sim

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// After ten simulated minutes, orders have gone main → tier → main … and
// some, failing every time, reached orders.dlq with x-retry-count 3, their
// original routing key, and a death in each tier.
func TestWorkloadRetriesThroughTheLadder(t *testing.T) {
	s := busy(t, Options{Seed: 7})
	s.Advance(10 * time.Minute)

	exhausted := 0
	for _, m := range peek(t, s, OrdersDLQ) {
		if m.Retry.Source != retry.SourceRetryCount || m.Retry.Count != OrdersMaxRetries {
			continue // a poison order, rejected at once
		}
		exhausted++
		if v, ok := m.Headers["x-retry-count"].(int32); !ok || v != OrdersMaxRetries {
			t.Errorf("x-retry-count = %#v, want int32(3) as the Go seed writes it", m.Headers["x-retry-count"])
		}
		if m.Retry.LastError == "" {
			t.Errorf("no x-last-error on %s", m.Properties.MessageID)
		}
		if m.RoutingKey != "orders.created" && m.RoutingKey != "orders.paid" {
			t.Errorf("routing key %q: the tiers lost the original key", m.RoutingKey)
		}
		var queues []string
		for _, d := range m.Deaths {
			queues = append(queues, d.Queue+"/"+string(d.Reason))
		}
		want := []string{OrdersMain + "/rejected", OrdersWait5m + "/expired", OrdersWait30s + "/expired", OrdersWait5s + "/expired"}
		if !slices.Equal(queues, want) {
			t.Errorf("deaths %v, want %v", queues, want)
		}
		// The first death was in orders.wait.5s, reached through
		// orders.retry; the origin is where orders.process got it from
		// (retry.OriginIn), so a replay goes back to the main queue.
		if m.Origin == nil || m.Origin.Exchange != OrdersExchange || m.Origin.RoutingKey != m.RoutingKey {
			t.Errorf("origin = %+v, want %s/%s", m.Origin, OrdersExchange, m.RoutingKey)
		}
	}
	if exhausted == 0 {
		t.Fatal("no message exhausted its retries into orders.dlq")
	}
	for _, tier := range OrdersTiers {
		if st := s.queueCounters(tier); st == 0 {
			t.Errorf("nothing was ever published to %s", tier)
		}
	}
}

func (s *Sim) queueCounters(name string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byName[name].published
}

// A message's retry count grows one tier at a time: Plan chose 5s, then
// 30s (the next longer than 25s), then 5m (for 125s).
func TestWorkloadMessagesInTiersCarryTheirAttempt(t *testing.T) {
	s := busy(t, Options{Seed: 7})
	s.Advance(10 * time.Minute)
	for i, tier := range OrdersTiers {
		for _, m := range peek(t, s, tier) {
			if m.Retry.Count != int64(i+1) {
				t.Errorf("%s holds %s with retry count %d, want %d", tier, m.Properties.MessageID, m.Retry.Count, i+1)
			}
			if m.Exchange != OrdersRetry || m.Headers[TierHeader] != tier {
				t.Errorf("%s: reached via %q with %s=%v", tier, m.Exchange, TierHeader, m.Headers[TierHeader])
			}
		}
	}
}

func TestWorkloadIsRepeatable(t *testing.T) {
	depths := func() []int64 {
		s := busy(t, Options{Seed: 11})
		s.Advance(3 * time.Minute)
		snap, err := s.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, q := range snap.Topology.Queues {
			out = append(out, q.Messages)
		}
		return out
	}
	if a, b := depths(), depths(); !slices.Equal(a, b) {
		t.Errorf("same seed, different depths: %v vs %v", a, b)
	}
}

// The payments worker's mixed expirations make blocked messages to see:
// held behind a longer expiration, and, once overdue, released by the peek
// that uncovers them (as RabbitMQ does).
func TestPaymentsWaitShowsBlockedMessages(t *testing.T) {
	s := busy(t, Options{Seed: 7})
	s.Advance(10 * time.Minute)
	r, err := s.Peek(context.Background(), PaymentsWait, broker.PeekOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	blocked := 0
	for _, m := range r.Messages {
		if m.HoL != nil && m.HoL.Blocked {
			blocked++
		}
		if m.HoL != nil && m.HoL.Overdue > 0 {
			t.Errorf("%s is overdue in the peek: the read should have released it", m.Properties.MessageID)
		}
	}
	if blocked == 0 || r.Released == 0 {
		t.Errorf("%s: %d blocked messages seen, %d released (%d peeked), want some of each", PaymentsWait, blocked, r.Released, len(r.Messages))
	}
	if r.HoLBasis == "" {
		t.Error("HoLBasis empty")
	}
}

// Invoices rejected with an expiration lose it: they sit in
// invoices.retry, never due (stuck), not "overdue" by the stripped TTL.
func TestInvoicesRetryIsStuck(t *testing.T) {
	s := busy(t, Options{Seed: 7})
	s.Advance(10 * time.Minute)
	ms := peek(t, s, InvoicesRetry)
	if len(ms) == 0 {
		t.Fatal("invoices.retry is empty")
	}
	m := ms[0]
	if m.Properties.Expiration != "" || len(m.Deaths) == 0 || !m.Deaths[0].HasOriginalExpiration {
		t.Fatalf("head = %+v, want expiration moved into x-death", m)
	}
	if m.HoL == nil || !m.HoL.NeverDue || !m.HoL.Stuck || m.HoL.Overdue != 0 {
		t.Errorf("HoL = %+v, want never due (stuck)", m.HoL)
	}
}

// The demo (ten minutes of warm-up) opens on payments.wait blocked: a
// 20-minute retry-after at its head, published minutes ago, and for the
// next minutes messages arrive and none leave; it expires in the end.
func TestPaymentsWaitOpensHoLBlocked(t *testing.T) {
	s := busy(t, Options{Seed: 0})
	s.Advance(10 * time.Minute)
	head := peek(t, s, PaymentsWait)
	if len(head) == 0 || head[0].Properties.Expiration != "1200000" {
		t.Fatalf("head of %s: %+v, want the 20m retry-after", PaymentsWait, head)
	}
	q := func() topology.Queue {
		snap, err := s.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		q, _ := snap.Topology.Queue(PaymentsWait)
		return q
	}
	first := q()
	if age := s.Now().Sub(first.HeadMessageTimestamp); age < 3*time.Minute {
		t.Errorf("head published %v ago, want minutes (head-age evidence)", age)
	}
	prev := first.Messages
	for range 12 * 60 / 5 { // the next 12 minutes, every 5 s
		s.Advance(5 * time.Second)
		d := q().Messages
		if d < prev {
			t.Fatalf("%s fell %d → %d at %v: something left a blocked queue", PaymentsWait, prev, d, s.Now())
		}
		prev = d
	}
	if prev < first.Messages+50 {
		t.Errorf("depth %d → %d over 12 minutes: too few arrived behind the head", first.Messages, prev)
	}
	s.Advance(10 * time.Minute)
	if d := q().Messages; d >= prev {
		t.Errorf("depth %d → %d: the long head never expired", prev, d)
	}
}
