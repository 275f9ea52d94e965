package ui

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/internal/present"
)

// Management counters move in steps: the last two polls of a 1 s refresh
// show no change while the queue drains; the windowed rate sees it.
func TestNetRateOverAWindow(t *testing.T) {
	h := newHistory()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i, d := range []int64{100, 100, 100, 100, 100, 90, 90, 90, 90, 90, 80, 80} {
		h.record(t0.Add(time.Duration(i)*time.Second), map[string]int64{"q": d})
	}
	if last, ok := h.netRate("q"); !ok || last != 0 {
		t.Fatalf("precondition: last-two rate %v %v", last, ok)
	}
	net, ok := h.netRateOver("q")
	if !ok || net >= 0 {
		t.Fatalf("windowed rate %v %v, want negative (draining)", net, ok)
	}
	if got := drainCell(80, rowStats{net: net, netOK: ok}); got == present.NoValue || got == "grow" {
		t.Fatalf("drain %q", got)
	}
	short := newHistory()
	short.record(t0, map[string]int64{"q": 5})
	short.record(t0.Add(time.Second), map[string]int64{"q": 4})
	if _, ok := short.netRateOver("q"); ok {
		t.Fatal("a 1 s history claims a windowed rate")
	}
}
