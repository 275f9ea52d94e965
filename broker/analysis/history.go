package analysis

// History keeps each queue's recent depths, as reads see them, and reads
// what they show: net rates, growth over a window, and how long nothing has
// left a queue (the evidence for the hol-blocked rule). The analysis alone
// reads it; what it tells reaches every face in the snapshot (Trends,
// findings).

import (
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

// HistoryLen is how many snapshots of depth each queue keeps: six minutes at
// the default 2 s refresh, more than the widest sparkline shows.
const HistoryLen = 180

// Sample is one poll of a queue.
type Sample struct {
	At    time.Time
	Depth int64
	// In is the publish rate the snapshot gave (InOK when known), so what
	// left between two samples is what came in less the growth.
	In   float64
	InOK bool
}

// ring is a fixed-size buffer of depth samples, oldest overwritten first.
type ring struct {
	buf   [HistoryLen]Sample
	start int
	n     int
}

func (r *ring) push(s Sample) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = s
		r.n++
		return
	}
	r.buf[r.start] = s
	r.start = (r.start + 1) % len(r.buf)
}

// last returns up to k newest samples, oldest first, appended to dst.
func (r *ring) last(k int, dst []Sample) []Sample {
	k = min(k, r.n)
	for i := r.n - k; i < r.n; i++ {
		dst = append(dst, r.buf[(r.start+i)%len(r.buf)])
	}
	return dst
}

// History keeps a ring per queue, fed by every snapshot.
type History struct {
	q map[string]*ring
}

// NewHistory is an empty history.
func NewHistory() *History { return &History{q: map[string]*ring{}} }

// Record adds one sample per queue and forgets queues that are gone.
func (h *History) Record(at time.Time, depths map[string]int64) {
	h.RecordRates(at, depths, nil)
}

// RecordRates is Record with each queue's publish rate, where known.
func (h *History) RecordRates(at time.Time, depths map[string]int64, in map[string]float64) {
	for name, d := range depths {
		r := h.q[name]
		if r == nil {
			r = &ring{}
			h.q[name] = r
		}
		rate, ok := in[name]
		r.push(Sample{At: at, Depth: d, In: rate, InOK: ok})
	}
	for name := range h.q {
		if _, ok := depths[name]; !ok {
			delete(h.q, name)
		}
	}
}

// Depths returns up to k newest samples of queue, oldest first.
func (h *History) Depths(queue string, k int) []Sample {
	r := h.q[queue]
	if r == nil {
		return nil
	}
	return r.last(k, make([]Sample, 0, min(k, r.n)))
}

// NetRate is the change of depth per second over the samples kept, for when
// the broker gives no net rate; ok is false with fewer than two samples.
func (h *History) NetRate(queue string) (float64, bool) {
	r := h.q[queue]
	if r == nil || r.n < 2 {
		return 0, false
	}
	s := r.last(2, nil)
	dt := s[1].At.Sub(s[0].At).Seconds()
	if dt <= 0 {
		return 0, false
	}
	return float64(s[1].Depth-s[0].Depth) / dt, true
}

// NetWindow is the span a history net rate is measured over: management
// counters move in steps (every 5 s by default), so the last two polls of a
// fast refresh often show no change, then a jump.
const NetWindow = 10 * time.Second

// NetRateOver is the change of depth per second from the newest sample back
// to the newest one at least NetWindow older; ok is false until the history
// is that long.
func (h *History) NetRateOver(queue string) (float64, bool) {
	r := h.q[queue]
	if r == nil || r.n < 2 {
		return 0, false
	}
	s := r.last(r.n, nil)
	newest := s[len(s)-1]
	for i := len(s) - 2; i >= 0; i-- {
		if dt := newest.At.Sub(s[i].At); dt >= NetWindow {
			return float64(newest.Depth-s[i].Depth) / dt.Seconds(), true
		}
	}
	return 0, false
}

// Growth is how much queue's depth grew from the oldest sample within
// window of the newest to the newest, and over how long; ok is false with
// fewer than two samples there.
func (h *History) Growth(queue string, window time.Duration) (grew int64, over time.Duration, ok bool) {
	r := h.q[queue]
	if r == nil || r.n < 2 {
		return 0, 0, false
	}
	at := func(i int) Sample { return r.buf[(r.start+i)%len(r.buf)] }
	newest := at(r.n - 1)
	for i := 0; i < r.n-1; i++ {
		if x := at(i); newest.At.Sub(x.At) <= window {
			return newest.Depth - x.Depth, newest.At.Sub(x.At), newest.At.After(x.At)
		}
	}
	return 0, 0, false
}

// Quiet walks back from the newest sample while nothing left the queue and
// returns how long that was, how many seem to have left in it (estimate
// noise, at most topology.HoLQuietSlack) and how many arrived.
//
// Poll-to-poll figures cannot tell: management rates are smoothed and
// depths and counters move in steps of the stats interval, so a poll often
// shows a publish rate and no growth yet, which reads as outflow that never
// happened. The evidence here is cumulative instead: a wait queue's depth
// falls whenever a message leaves it (nothing else takes from it), so the
// window ends at the newest fall, and over the window the depth must have
// grown by what arrived (the publish rate summed over the polls, or the
// growth alone without rates) less the slack.
func (h *History) Quiet(queue string) (window time.Duration, left, arrived float64) {
	r := h.q[queue]
	if r == nil || r.n < 2 {
		return 0, 0, 0
	}
	s := r.last(r.n, nil)
	newest := s[len(s)-1]
	in := 0.0
	for i := len(s) - 1; i > 0; i-- {
		if s[i].Depth < s[i-1].Depth {
			break
		}
		dt := s[i].At.Sub(s[i-1].At)
		if dt <= 0 {
			continue
		}
		if s[i].InOK {
			in += s[i].In * dt.Seconds()
		} else {
			in += float64(s[i].Depth - s[i-1].Depth)
		}
		w := newest.At.Sub(s[i-1].At)
		growth := float64(newest.Depth - s[i-1].Depth)
		a := max(in, growth)
		if a-growth > topology.HoLQuietSlack(a, w) {
			break
		}
		window, left, arrived = w, a-growth, a
	}
	return window, left, arrived
}
