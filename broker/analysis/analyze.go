// Package analysis is the one analysis of what ladder reads: a vhost as the
// broker gave it, what peeks showed of its queues (evidence, looks) and the
// history of earlier reads, turned into ladders, rates, trends and every
// finding. The live client, the simulation, the all-vhosts overview and
// through them every face (the TUI, topology, ladder serve's shared
// snapshot, whatever exports findings) take their figures from here and
// nowhere else, so they cannot disagree.
package analysis

import (
	"slices"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Reading is one read of a vhost, as the broker gave it.
type Reading struct {
	Vhost         string
	BrokerVersion string
	TakenAt       time.Time
	// Topology is the vhost read, with what peeks showed applied
	// (broker.Evidence.Apply) and nothing derived yet.
	Topology topology.Vhost
	// Refresh is the read's hint of how often to read again (0: the base).
	Refresh time.Duration
}

// Analyze is the analysis of r with h, the history of the vhost's reads
// (r recorded last; nil: r alone): the snapshot every face shows. It does
// no I/O and changes neither r nor h.
func Analyze(r Reading, h *History) *broker.Snapshot {
	v := r.Topology
	v.Queues = slices.Clone(v.Queues)
	topology.Inflow(&v)
	ladders := topology.Discover(&v)
	fs := topology.FindingsAt(&v, ladders, r.TakenAt)
	var trends map[string]broker.Trend
	if h != nil {
		fs = append(fs, historyFindings(&v, ladders, fs, h, r.TakenAt)...)
		trends = Trends(&v, h)
	}
	topology.SortFindings(fs)
	return &broker.Snapshot{
		Vhost: r.Vhost, BrokerVersion: r.BrokerVersion, TakenAt: r.TakenAt,
		Topology: v, Ladders: ladders, Findings: fs, Refresh: r.Refresh, Trends: trends,
	}
}

// historyFindings are the findings only the history shows: hol-blocked (a
// wait queue relying on per-message expiration that keeps receiving
// messages and has let none out for a while, topology.HoLBlockedFinding,
// unless its messages may never expire, which the stuck finding says
// already, or a peek told it blocked) and dlq-growing (a dead-letter queue
// whose depth grew within the last topology.DLQGrowingWindow). fs are the
// findings so far.
func historyFindings(v *topology.Vhost, ladders []retry.Ladder, fs []topology.Finding, h *History, at time.Time) []topology.Finding {
	var found []topology.Finding
	for _, name := range topology.DeadLetterQueues(v, ladders) {
		q, ok := v.Queue(name)
		if !ok {
			continue
		}
		grew, over, ok := h.Growth(name, topology.DLQGrowingWindow)
		if !ok {
			continue
		}
		if f, ok := topology.DLQGrowingFinding(name, topology.DLQGrowth{Grew: grew, Over: over, Waiting: q.Messages}); ok {
			found = append(found, f)
		}
	}
	seen := map[string]bool{}
	for _, l := range ladders {
		for _, w := range l.WaitQueues {
			if seen[w] || has(fs, topology.CodeHoLBlocked, w) {
				continue
			}
			seen[w] = true
			q, ok := v.Queue(w)
			if !ok {
				continue
			}
			// A peek that saw its messages never expire says stuck; so
			// does the risk of it (a dead-letter route in) while nothing
			// is published into the queue: then dead-lettering is what
			// feeds it, and nothing leaving is no sign of a long head.
			stuck := slices.ContainsFunc(fs, func(f topology.Finding) bool {
				return f.Code == topology.CodeStuck && f.Queue == w && (f.Severity == topology.SeverityError || !q.Rates.Known || q.Rates.Publish <= 0)
			})
			ev := topology.HoLEvidence{Waiting: q.Messages, Stuck: stuck}
			ev.Window, ev.Left, ev.Arrived = h.Quiet(w)
			if !q.HeadMessageTimestamp.IsZero() && at.After(q.HeadMessageTimestamp) {
				ev.HeadAge = at.Sub(q.HeadMessageTimestamp)
			}
			if f, ok := topology.HoLBlockedFinding(w, ev); ok {
				found = append(found, f)
			}
		}
	}
	return found
}

func has(fs []topology.Finding, code, queue string) bool {
	return slices.ContainsFunc(fs, func(f topology.Finding) bool { return f.Code == code && f.Queue == queue })
}

// Trends is each queue of v's trend from h: its latest depths, its net rate
// (over the history's last NetWindow when it is that
// long, steadier than read-to-read deltas; else the broker's; else the
// last two reads), the time to drain, and its recent growth.
func Trends(v *topology.Vhost, h *History) map[string]broker.Trend {
	out := make(map[string]broker.Trend, len(v.Queues))
	for i := range v.Queues {
		q := &v.Queues[i]
		var t broker.Trend
		for _, s := range h.Depths(q.Name, broker.TrendLen) {
			t.Depths = append(t.Depths, s.Depth)
		}
		if net, ok := h.NetRateOver(q.Name); ok {
			t.Net, t.NetKnown = net, true
		} else if q.Rates.NetKnown {
			t.Net, t.NetKnown = q.Rates.Net, true
		} else {
			t.Net, t.NetKnown = h.NetRate(q.Name)
		}
		t.Drain = drainOf(q, t.Net, t.NetKnown)
		t.Growth, _, t.GrowthKnown = h.Growth(q.Name, topology.DLQGrowingWindow)
		out[q.Name] = t
	}
	return out
}

// drainOf is how long q's messages take to leave: its depth over the net
// drain rate; in a queue with a queue TTL every message now there leaves
// within it, filling or not (never more than that bound).
func drainOf(q *topology.Queue, net float64, netOK bool) broker.Drain {
	if q.Messages <= 0 {
		return broker.Drain{Kind: broker.DrainEmpty}
	}
	bound := drainBound(q)
	if netOK && net < 0 {
		d := time.Duration(float64(q.Messages) / -net * float64(time.Second))
		if bound <= 0 || d < bound {
			return broker.Drain{Kind: broker.DrainETA, In: d}
		}
	}
	switch {
	case bound > 0:
		return broker.Drain{Kind: broker.DrainBound, In: bound}
	case netOK && net > 0:
		return broker.Drain{Kind: broker.DrainGrowing}
	}
	return broker.Drain{Kind: broker.DrainUnknown}
}

// drainBound is how long a message now in q can stay there at most: a
// queue TTL (argument or policy) expires each within it, in order (one TTL
// for all: no head-of-line blocking). None for a message a consumer holds
// unacknowledged (it does not expire), a stream, or per-message TTLs.
func drainBound(q *topology.Queue) time.Duration {
	if q.Unacked > 0 || q.Type == topology.QueueStream {
		return 0
	}
	if s := topology.EffectiveSettings(q); s.HasMessageTTL && s.MessageTTL > 0 {
		return s.MessageTTL
	}
	return 0
}
