package ui

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/internal/depthhistory"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Management counters move in steps: the last two polls of a 1 s refresh
// show no change while the queue drains; the windowed rate sees it.
func TestNetRateOverAWindow(t *testing.T) {
	h := depthhistory.New()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i, d := range []int64{100, 100, 100, 100, 100, 90, 90, 90, 90, 90, 80, 80} {
		h.Record(t0.Add(time.Duration(i)*time.Second), map[string]int64{"q": d})
	}
	if last, ok := h.NetRate("q"); !ok || last != 0 {
		t.Fatalf("precondition: last-two rate %v %v", last, ok)
	}
	net, ok := h.NetRateOver("q")
	if !ok || net >= 0 {
		t.Fatalf("windowed rate %v %v, want negative (draining)", net, ok)
	}
	if got := drainCell(80, rowStats{net: net, netOK: ok}); got == present.NoValue || got == "grow" {
		t.Fatalf("drain %q", got)
	}
	short := depthhistory.New()
	short.Record(t0, map[string]int64{"q": 5})
	short.Record(t0.Add(time.Second), map[string]int64{"q": 4})
	if _, ok := short.NetRateOver("q"); ok {
		t.Fatal("a 1 s history claims a windowed rate")
	}
}

// The home screen turns the history into hol-blocked findings: over polls
// in which jobs.delay (per-message expiration, an old head) takes messages
// and lets none out, BLOCK appears with the evidence; invoices.retry,
// growing the same way but stuck (its messages never expire), never gets
// one.
func TestHomeAddsHoLBlockedFromPolls(t *testing.T) {
	t0 := fixedNow
	snapAt := func(i int) *broker.Snapshot {
		at := t0.Add(time.Duration(i) * 2 * time.Second)
		delay := queue("jobs.delay", 61+int64(i/2), 0, 0, 0.29, 0)
		delay.HeadMessageTimestamp = t0.Add(-3 * time.Minute)
		stuck := queue("invoices.retry", 80+int64(i/2), 0, 0, 0.29, 0)
		stuck.HeadMessageTimestamp = t0.Add(-time.Hour)
		return &broker.Snapshot{
			Vhost: "/", BrokerVersion: "4.1.0", TakenAt: at,
			Topology: topology.Vhost{Name: "/", Queues: []topology.Queue{
				queue("jobs", 0, 0, 1, 1, 1), delay, queue("invoices", 0, 0, 1, 1, 1), stuck,
			}},
			Ladders: []retry.Ladder{
				{Main: "jobs", WaitQueues: []string{"jobs.delay"}},
				{Main: "invoices", WaitQueues: []string{"invoices.retry"}},
			},
			Findings: []topology.Finding{{Code: topology.CodeStuck, Severity: topology.SeverityError, Queue: "invoices.retry",
				Message: `80 messages here never return to "invoices": this queue is fed by dead-lettering, which strips per-message expiration, and has no TTL and no consumers`}},
		}
	}
	fc := newFake()
	fc.snap = snapAt(0)
	h := newHarness(t, fc, Options{}, 160, 48).start()
	blocked := func() []topology.Finding {
		var out []topology.Finding
		for _, f := range h.m.home.snap.Findings {
			if f.Code == topology.CodeHoLBlocked {
				out = append(out, f)
			}
		}
		return out
	}
	for i := 1; i <= 20; i++ { // 40 s: not yet a minute
		fc.mu.Lock()
		fc.snap = snapAt(i)
		fc.mu.Unlock()
		h.send(pollMsg{gen: h.m.gen})
	}
	if fs := blocked(); len(fs) > 0 {
		t.Fatalf("hol-blocked after 40 s of watching: %+v", fs)
	}
	h.mustNotContain("hol-blocked")
	for i := 21; i <= 40; i++ { // 80 s in all
		fc.mu.Lock()
		fc.snap = snapAt(i)
		fc.mu.Unlock()
		h.send(pollMsg{gen: h.m.gen})
	}
	fs := blocked()
	if len(fs) != 1 || fs[0].Queue != "jobs.delay" {
		t.Fatalf("hol-blocked findings %+v, want one on jobs.delay (none on the stuck invoices.retry)", fs)
	}
	if want := "head published 4m20s ago, nothing left for 1m20s, 81 waiting"; !strings.HasPrefix(fs[0].Message, want) {
		t.Errorf("message %q, want it to start %q", fs[0].Message, want)
	}
	h.key("down") // jobs.delay: the detail pane has the evidence
	h.mustContain("✖hol-blocked", "head published 4m20s ago, nothing left for 1m20s, 81 waiting")
	for _, line := range strings.Split(h.plain(), "\n") {
		if strings.Contains(line, "invoices.retry") && strings.Contains(line, "hol-blocked") {
			t.Errorf("the stuck queue's row: %q", line)
		}
	}
}

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
