package analysis

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

func TestRing(t *testing.T) {
	var r ring
	for i := range HistoryLen + 5 {
		r.push(Sample{Depth: int64(i)})
	}
	got := r.last(3, nil)
	if len(got) != 3 || got[0].Depth != HistoryLen+2 || got[2].Depth != HistoryLen+4 {
		t.Fatalf("last 3 = %+v", got)
	}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	h := NewHistory()
	h.Record(t0, map[string]int64{"a": 1, "b": 2})
	h.Record(t0.Add(time.Second), map[string]int64{"a": 3})
	if _, ok := h.q["b"]; ok {
		t.Fatal("a deleted queue kept its history")
	}
	if r, ok := h.NetRate("a"); !ok || r != 2 {
		t.Fatalf("net rate %v %v", r, ok)
	}
}

// statsView is what a 2 s poll of the management API sees of a queue the
// broker's stats describe every 5 s: the depth and a publish rate averaged
// over the last 10 s, both as of the newest 5 s stats emission.
func statsView(t0 time.Time, poll time.Duration, arrivedBy, leftBy func(time.Duration) int64) (time.Time, int64, float64) {
	stats := poll.Truncate(5 * time.Second)
	depth := 61 + arrivedBy(stats) - leftBy(stats)
	rate := 0.0
	if stats >= 10*time.Second {
		rate = float64(arrivedBy(stats)-arrivedBy(stats-10*time.Second)) / 10
	}
	return t0.Add(poll), depth, rate
}

// Repro B of the audit: a 15-minute head, a 3 s message every 3.5 s, seen
// through smoothed 5 s stats. Poll to poll a rate shows with no growth yet,
// which the old per-poll sum took for outflow (the window never passed
// 12 s); over the window the depth grew by all that arrived.
func TestHistoryQuietThroughSmoothedStats(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	every := 3500 * time.Millisecond
	arrivedBy := func(d time.Duration) int64 { return int64(d / every) }
	none := func(time.Duration) int64 { return 0 }
	h := NewHistory()
	var depth int64
	for p := time.Duration(0); p <= 4*time.Minute; p += 2 * time.Second {
		at, d, rate := statsView(t0, p, arrivedBy, none)
		h.RecordRates(at, map[string]int64{"jobs.delay": d}, map[string]float64{"jobs.delay": rate})
		depth = d
	}
	w, left, arrived := h.Quiet("jobs.delay")
	if w < 3*time.Minute+50*time.Second || arrived < 60 || left > topology.HoLQuietSlack(arrived, w) {
		t.Fatalf("blocked queue: window %v left %.1f arrived %.1f, want nearly 4m of quiet", w, left, arrived)
	}
	if _, ok := topology.HoLBlockedFinding("jobs.delay", topology.HoLEvidence{Window: w, Left: left, Arrived: arrived, Waiting: depth}); !ok {
		t.Fatal("no hol-blocked for a queue nothing left in 4 minutes")
	}

	// The same arrivals into a healthy queue (each leaves 30 s later): its
	// depth holds steady and never quite falls between some polls, but it
	// does not grow by what arrives.
	healthy := NewHistory()
	leftBy := func(d time.Duration) int64 { return max(0, arrivedBy(d-30*time.Second)) }
	for p := time.Duration(0); p <= 4*time.Minute; p += 2 * time.Second {
		at, d, rate := statsView(t0, p, arrivedBy, leftBy)
		healthy.RecordRates(at, map[string]int64{"w": d}, map[string]float64{"w": rate})
	}
	if w, left, arrived := healthy.Quiet("w"); w >= topology.HoLBlockedWatch {
		t.Errorf("healthy queue: quiet for %v (left %.1f of %.1f)", w, left, arrived)
	}
}

// A queue that loses messages while as many arrive never falls at stats
// granularity yet is not quiet; a fall ends the window; without rates the
// growth alone counts as arrivals.
func TestHistoryQuietWindow(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	steady := NewHistory()
	for i := 0; i <= 150; i++ {
		steady.RecordRates(t0.Add(time.Duration(i)*2*time.Second), map[string]int64{"w": 40}, map[string]float64{"w": 5})
	}
	if w, _, _ := steady.Quiet("w"); w >= 30*time.Second {
		t.Errorf("steady depth at 5 msg/s: quiet for %v", w)
	}

	h := NewHistory()
	depth := int64(100)
	for i := 0; i <= 150; i++ {
		if i == 60 {
			depth -= 3 // three leave: nothing before this counts
		}
		h.Record(t0.Add(time.Duration(i)*2*time.Second), map[string]int64{"w": depth})
		if i%3 == 0 {
			depth++
		}
	}
	w, left, arrived := h.Quiet("w")
	if w != 180*time.Second || left != 0 || arrived != 30 {
		t.Fatalf("window %v left %v arrived %v, want 3m since the fall, 30 arrived", w, left, arrived)
	}
}
