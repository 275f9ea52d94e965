package rabbit

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// On 3.x with stats on, a big vhost refreshes from Prometheus between full
// reads: depths are new, the rates stay the full read's smoothed ones (its
// Prometheus has no counters), and consumers too where it lists none.
func TestSteadyRefreshOnABig3xVhostKeepsServerRates(t *testing.T) {
	f, m := newFake(t)
	f.set(func() { f.version, f.queues, f.noConsumers = "3.10.8", manyQueues(200), true })
	ctx := context.Background()
	if _, err := m.Vhost(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	if h := f.take(); h["queues"] != 1 || h["metrics"] != 0 {
		t.Fatalf("first read: %v, want a full read alone", h)
	}
	for i := 1; i <= 3; i++ {
		f.set(func() { f.tick = int64(i) })
		m.mu.Lock()
		m.prevAt = m.prevAt.Add(-time.Second)
		m.mu.Unlock()
		v, err := m.Vhost(ctx, "v")
		if err != nil {
			t.Fatal(err)
		}
		if h := f.take(); h["queues"] != 0 || h["metrics"] != 1 {
			t.Fatalf("poll %d: %v, want /metrics alone", i, h)
		}
		q := v.Queues[0]
		if v.RatesFrom != "management" || !q.Rates.Known || q.Rates.Publish != 99 {
			t.Fatalf("poll %d: rates from %q %+v, want the full read's server rate 99/s", i, v.RatesFrom, q.Rates)
		}
		if q.Messages != 10*int64(i) || q.ConsumersUnknown || q.Consumers != 1 {
			t.Fatalf("poll %d: depth %d consumers %d (unknown %v), want Prometheus' depth and the full read's consumer", i, q.Messages, q.Consumers, q.ConsumersUnknown)
		}
		if !q.Rates.ArrivedKnown || q.Rates.Arrived <= 0 {
			t.Fatalf("poll %d: arrivals %+v, want the depth's growth", i, q.Rates)
		}
	}
	if got := m.RefreshHint(); got != 2*time.Second {
		t.Errorf("refresh for 200 queues with Prometheus: %v", got)
	}
	// A small 3.x vhost reads fully every time (TestSteadyRefreshNotOn3xWithStats).
}

// Full reads come less often on a big vhost: 30 s up to 600 queues, 50 ms
// a queue beyond (1,000 queues: 50 s), and so do bindings.
func TestFullReadIntervalGrowsWithTheVhost(t *testing.T) {
	f, m := newFake(t)
	f.set(func() { f.queues = manyQueues(1000) })
	ctx := context.Background()
	m.Vhost(ctx, "v")
	f.take()
	age := func(d time.Duration) map[string]int {
		m.mu.Lock()
		m.last.at = time.Now().Add(-d)
		m.bindingsAt = time.Now().Add(-d)
		m.mu.Unlock()
		if _, err := m.Vhost(ctx, "v"); err != nil {
			t.Fatal(err)
		}
		return f.take()
	}
	if h := age(40 * time.Second); h["queues"] != 0 || h["metrics"] != 1 {
		t.Fatalf("1,000 queues, last full read 40 s old: %v, want a steady refresh", h)
	}
	if h := age(50 * time.Second); h["queues"] != 1 || h["bindings"] != 1 {
		t.Fatalf("1,000 queues, last full read 50 s old: %v, want a full read with bindings", h)
	}
	if got := m.RefreshHint(); got != 4*time.Second {
		t.Errorf("refresh for 1,000 queues with Prometheus: %v, want 4s", got)
	}
	f.set(func() { f.promDown = true })
	age(time.Minute)
	m.Vhost(ctx, "v") // Prometheus fails: full reads from now
	if got := m.RefreshHint(); got != 16*time.Second {
		t.Errorf("refresh for 1,000 queues without Prometheus: %v, want 16s", got)
	}
}

func manyQueues(n int) []string {
	qs := make([]string, n)
	for i := range qs {
		qs[i] = fmt.Sprintf("q%04d", i)
	}
	return qs
}
