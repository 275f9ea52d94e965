package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/topology"
)

// A DLQ that grows gets a dlq-growing finding from the second refresh on,
// with how much, how fast and how many wait; it goes once the DLQ has not
// grown for topology.DLQGrowingWindow.
func TestHomeAddsDLQGrowingFromPolls(t *testing.T) {
	t0 := fixedNow
	dlqAt := func(i int, depth int64) *broker.Snapshot {
		s := fixtureSnapshot()
		s.TakenAt = t0.Add(time.Duration(i) * 2 * time.Second)
		for j := range s.Topology.Queues {
			if s.Topology.Queues[j].Name == "orders.dlq" {
				s.Topology.Queues[j].Messages, s.Topology.Queues[j].Ready = depth, depth
			}
		}
		return s
	}
	growing := func(h *harness) []topology.Finding {
		var out []topology.Finding
		for _, f := range h.m.home.snap.Findings {
			if f.Code == topology.CodeDLQGrowing {
				out = append(out, f)
			}
		}
		return out
	}
	fc := newFake()
	fc.snap = dlqAt(0, 5000)
	h := newHarness(t, fc, Options{}, 80, 24).start()
	if fs := growing(h); len(fs) > 0 {
		t.Fatalf("a finding from one snapshot: %+v", fs)
	}
	poll := func(i int, depth int64) {
		fc.mu.Lock()
		fc.snap = dlqAt(i, depth)
		fc.mu.Unlock()
		h.send(pollMsg{gen: h.m.gen})
	}
	poll(1, 5010)
	fs := growing(h)
	if len(fs) != 1 || fs[0].Queue != "orders.dlq" || fs[0].Severity != topology.SeverityWarning {
		t.Fatalf("after the second refresh: %+v, want a warning on orders.dlq", fs)
	}
	if want := "grew by 10 in 2s (5/s), 5,010 waiting"; !strings.HasPrefix(fs[0].Message, want) {
		t.Fatalf("message %q, want it to start %q", fs[0].Message, want)
	}
	for i := 2; i <= 150; i++ { // five minutes of polls, 4/s
		poll(i, 5000+int64(8*i))
	}
	fs = growing(h)
	if len(fs) != 1 || !strings.HasPrefix(fs[0].Message, "grew by 1,200 in 5m (4/s), 6,200 waiting") {
		t.Fatalf("after five minutes: %+v", fs)
	}
	h.mustContain("▲GROW")
	// It stops growing: the finding stays while the window still shows
	// growth, and goes after it.
	for i := 151; i <= 299; i++ {
		poll(i, 6200)
	}
	if fs := growing(h); len(fs) != 1 || !strings.HasPrefix(fs[0].Message, "grew by 8 in 5m") {
		t.Fatalf("five minutes after the last growth: %+v", fs)
	}
	poll(300, 6200)
	if fs := growing(h); len(fs) != 0 {
		t.Fatalf("a DLQ that has not grown for five minutes: %+v", fs)
	}
	h.mustNotContain("GROW")
}

// The same snapshot shown again (ladder serve's sessions share one read; a
// refresh soon after may get it twice) is one poll of the history, not
// two; another snapshot, even taken at the same moment, is a poll.
func TestHomeRecordsASharedSnapshotOnce(t *testing.T) {
	m := newHome(screenCommon())
	s := fixtureSnapshot()
	m.setSnapshot(s)
	m.setSnapshot(s)
	if n := len(m.hist.Depths("orders", 10)); n != 1 {
		t.Fatalf("one snapshot shown twice: %d samples of orders, want 1", n)
	}
	m.setSnapshot(fixtureSnapshot())
	if n := len(m.hist.Depths("orders", 10)); n != 2 {
		t.Fatalf("a second snapshot: %d samples of orders, want 2", n)
	}
}
