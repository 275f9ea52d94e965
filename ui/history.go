package ui

import (
	"strings"
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

// historyLen is how many snapshots of depth each queue keeps: six minutes at
// the default 2 s refresh, more than the widest sparkline shows.
const historyLen = 180

type sample struct {
	at    time.Time
	depth int64
	// in is the publish rate the snapshot gave (inOK when known), so what
	// left between two samples is what came in less the growth.
	in   float64
	inOK bool
}

// ring is a fixed-size buffer of depth samples, oldest overwritten first.
type ring struct {
	buf   [historyLen]sample
	start int
	n     int
}

func (r *ring) push(s sample) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = s
		r.n++
		return
	}
	r.buf[r.start] = s
	r.start = (r.start + 1) % len(r.buf)
}

// last returns up to k newest samples, oldest first, appended to dst.
func (r *ring) last(k int, dst []sample) []sample {
	k = min(k, r.n)
	for i := r.n - k; i < r.n; i++ {
		dst = append(dst, r.buf[(r.start+i)%len(r.buf)])
	}
	return dst
}

// history keeps a ring per queue, fed by every snapshot.
type history struct {
	q map[string]*ring
}

func newHistory() *history { return &history{q: map[string]*ring{}} }

// record adds one sample per queue and forgets queues that are gone.
func (h *history) record(at time.Time, depths map[string]int64) {
	h.recordRates(at, depths, nil)
}

// recordRates is record with each queue's publish rate, where known.
func (h *history) recordRates(at time.Time, depths map[string]int64, in map[string]float64) {
	for name, d := range depths {
		r := h.q[name]
		if r == nil {
			r = &ring{}
			h.q[name] = r
		}
		rate, ok := in[name]
		r.push(sample{at: at, depth: d, in: rate, inOK: ok})
	}
	for name := range h.q {
		if _, ok := depths[name]; !ok {
			delete(h.q, name)
		}
	}
}

// depths returns up to k newest samples of queue, oldest first.
func (h *history) depths(queue string, k int) []sample {
	r := h.q[queue]
	if r == nil {
		return nil
	}
	return r.last(k, make([]sample, 0, min(k, r.n)))
}

// netRate is the change of depth per second over the samples kept, for when
// the broker gives no net rate; ok is false with fewer than two samples.
func (h *history) netRate(queue string) (float64, bool) {
	r := h.q[queue]
	if r == nil || r.n < 2 {
		return 0, false
	}
	s := r.last(2, nil)
	dt := s[1].at.Sub(s[0].at).Seconds()
	if dt <= 0 {
		return 0, false
	}
	return float64(s[1].depth-s[0].depth) / dt, true
}

// netWindow is the span a history net rate is measured over: management
// counters move in steps (every 5 s by default), so the last two polls of a
// fast refresh often show no change, then a jump.
const netWindow = 10 * time.Second

// netRateOver is the change of depth per second from the newest sample back
// to the newest one at least netWindow older; ok is false until the history
// is that long.
func (h *history) netRateOver(queue string) (float64, bool) {
	r := h.q[queue]
	if r == nil || r.n < 2 {
		return 0, false
	}
	s := r.last(r.n, nil)
	newest := s[len(s)-1]
	for i := len(s) - 2; i >= 0; i-- {
		if dt := newest.at.Sub(s[i].at); dt >= netWindow {
			return float64(newest.depth-s[i].depth) / dt.Seconds(), true
		}
	}
	return 0, false
}

// growth is how much queue's depth grew from the oldest sample within
// window of the newest to the newest, and over how long; ok is false with
// fewer than two samples there.
func (h *history) growth(queue string, window time.Duration) (grew int64, over time.Duration, ok bool) {
	r := h.q[queue]
	if r == nil || r.n < 2 {
		return 0, 0, false
	}
	at := func(i int) sample { return r.buf[(r.start+i)%len(r.buf)] }
	newest := at(r.n - 1)
	for i := 0; i < r.n-1; i++ {
		if x := at(i); newest.at.Sub(x.at) <= window {
			return newest.depth - x.depth, newest.at.Sub(x.at), newest.at.After(x.at)
		}
	}
	return 0, 0, false
}

// quiet walks back from the newest sample while nothing left the queue and
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
func (h *history) quiet(queue string) (window time.Duration, left, arrived float64) {
	r := h.q[queue]
	if r == nil || r.n < 2 {
		return 0, 0, 0
	}
	s := r.last(r.n, nil)
	newest := s[len(s)-1]
	in := 0.0
	for i := len(s) - 1; i > 0; i-- {
		if s[i].depth < s[i-1].depth {
			break
		}
		dt := s[i].at.Sub(s[i-1].at)
		if dt <= 0 {
			continue
		}
		if s[i].inOK {
			in += s[i].in * dt.Seconds()
		} else {
			in += float64(s[i].depth - s[i-1].depth)
		}
		w := newest.at.Sub(s[i-1].at)
		growth := float64(newest.depth - s[i-1].depth)
		a := max(in, growth)
		if a-growth > topology.HoLQuietSlack(a, w) {
			break
		}
		window, left, arrived = w, a-growth, a
	}
	return window, left, arrived
}

var sparkLevels = []rune("▁▂▃▄▅▆▇█")

// sparkline draws depths in exactly width cells, newest on the right, scaled
// from 0 to the largest value shown. Zero is the lowest bar and any non-zero
// value at least the second, so "empty" and "a few" look different. Cells
// with no sample yet are blank.
func sparkline(s []sample, width int) string {
	if width <= 0 {
		return ""
	}
	if len(s) > width {
		s = s[len(s)-width:]
	}
	var hi int64
	for _, x := range s {
		hi = max(hi, x.depth)
	}
	var b strings.Builder
	b.Grow(width * 3)
	for range width - len(s) {
		b.WriteByte(' ')
	}
	top := int64(len(sparkLevels) - 1)
	for _, x := range s {
		lvl := int64(0)
		if hi > 0 && x.depth > 0 {
			lvl = max(1, x.depth*top/hi)
		}
		b.WriteRune(sparkLevels[lvl])
	}
	return b.String()
}
