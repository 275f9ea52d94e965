package retry

import (
	"testing"
	"time"
)

// ladderGoSeed is the Go seed's topology: tiers 5s/30s/5m in front of orders.process.
func ladderGoSeed() *Ladder {
	return &Ladder{
		Main: "orders.process",
		Tiers: []Tier{
			{Queue: "orders.wait.5s", TTL: 5 * time.Second},
			{Queue: "orders.wait.30s", TTL: 30 * time.Second},
			{Queue: "orders.wait.5m", TTL: 5 * time.Minute},
		},
		DLQ: "orders.dlq",
	}
}

func TestChooseTier(t *testing.T) {
	l := ladderGoSeed()
	tests := []struct {
		want  time.Duration
		queue string
		match TierMatch
		ok    bool
	}{
		{5 * time.Second, "orders.wait.5s", TierExact, true},
		{time.Second, "orders.wait.5s", TierLonger, true},
		{0, "orders.wait.5s", TierLonger, true},
		{25 * time.Second, "orders.wait.30s", TierLonger, true},
		{5*time.Second + time.Millisecond, "orders.wait.30s", TierLonger, true},
		{5 * time.Minute, "orders.wait.5m", TierExact, true},
		{5*time.Minute + 1, "", "", false},
	}
	for _, tt := range tests {
		tier, m, ok := chooseTier(l, tt.want)
		if tier.Queue != tt.queue || m != tt.match || ok != tt.ok {
			t.Errorf("ChooseTier(%v) = %q %q %v, want %q %q %v", tt.want, tier.Queue, m, ok, tt.queue, tt.match, tt.ok)
		}
	}
	if _, _, ok := chooseTier(nil, time.Second); ok {
		t.Error("nil ladder should have no tier")
	}
}

func TestChooseTierUnsortedAndUnknown(t *testing.T) {
	l := &Ladder{Tiers: []Tier{
		{Queue: "long", TTL: time.Minute},
		{Queue: "unknown", TTL: -1},
		{Queue: "short", TTL: 10 * time.Second},
		{Queue: "exact-late", TTL: 20 * time.Second},
		{Queue: "exact-dup", TTL: 20 * time.Second},
	}}
	if tier, m, _ := chooseTier(l, 15*time.Second); tier.Queue != "exact-late" || m != TierLonger {
		t.Errorf("shortest longer tier should win regardless of order, got %q %q", tier.Queue, m)
	}
	if tier, m, _ := chooseTier(l, 20*time.Second); tier.Queue != "exact-late" || m != TierExact {
		t.Errorf("exact match after a longer one, first of equals, got %q %q", tier.Queue, m)
	}
	if tier, _, _ := chooseTier(l, 0); tier.Queue != "short" {
		t.Errorf("a tier of unknown TTL must never be chosen, got %q", tier.Queue)
	}
}
