package ui

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/retry/topology"
)

// The demo as `ladder demo` starts it (ten minutes of warm-up, default
// seed, real-time speed): within its first minute and a half of polls
// payments.wait shows hol-blocked with the evidence, and the stuck
// invoices.retry does not.
func TestDemoShowsHoLBlockedWithinTwoMinutes(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := sim.New(sim.Options{Now: clock, WarmUp: 10 * time.Minute})
	t.Cleanup(func() { s.Close() })
	h := newHarnessOn(t, s, Options{Title: "demo"}, 80, 24).start()
	find := func(queue string) (topology.Finding, bool) {
		for _, f := range h.m.home.snap.Findings {
			if f.Code == topology.CodeHoLBlocked && f.Queue == queue {
				return f, true
			}
		}
		return topology.Finding{}, false
	}
	var at time.Duration
	for at = 0; at <= 90*time.Second; at += 2 * time.Second {
		if _, ok := find(sim.PaymentsWait); ok {
			break
		}
		mu.Lock()
		now = now.Add(2 * time.Second)
		mu.Unlock()
		h.send(pollMsg{gen: h.m.gen})
	}
	f, ok := find(sim.PaymentsWait)
	if !ok {
		t.Fatalf("no hol-blocked on %s after %v of polls", sim.PaymentsWait, at)
	}
	if !strings.HasPrefix(f.Message, "head published 5m") || !strings.Contains(f.Message, "nothing left for 1m") {
		t.Errorf("after %v: %q", at, f.Message)
	}
	if f, ok := find(sim.InvoicesRetry); ok {
		t.Errorf("the stuck %s: %+v", sim.InvoicesRetry, f)
	}
	h.mustContain("BLOCK")
}
