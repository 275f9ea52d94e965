package ui

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry"
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

// quiet measures how long nothing left a queue: arrivals from the publish
// rate (or growth), leaving = arrivals less growth.
func TestHistoryQuietWindow(t *testing.T) {
	h := newHistory()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	depth := int64(100)
	// 5 minutes of 1 msg/s arriving and the depth growing by as much.
	for i := 0; i <= 150; i++ {
		h.recordRates(t0.Add(time.Duration(i)*2*time.Second), map[string]int64{"w": depth}, map[string]float64{"w": 1})
		depth += 2
	}
	w, left, arrived := h.quiet("w")
	if w != 5*time.Minute || left != 0 || arrived != 300 {
		t.Fatalf("window %v left %v arrived %v", w, left, arrived)
	}
	f, ok := retry.HoLBlockedFinding("w", retry.HoLEvidence{Window: w, Left: left, Arrived: arrived, Waiting: depth - 2})
	if !ok || f.Code != retry.CodeHoLBlocked {
		t.Fatalf("%+v", f)
	}
	// Then one message leaves (the depth grows by one less than arrived).
	h.recordRates(t0.Add(302*time.Second), map[string]int64{"w": depth - 1}, map[string]float64{"w": 1})
	if w, _, _ := h.quiet("w"); w != 0 {
		t.Errorf("after a message left the window is %v, want 0", w)
	}
}
