package ui

import (
	"fmt"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
)

// S's scan is a read like a peek: it asks for the peek's deadline, and its
// progress is the browse's own (how far it read of what it reads at most).
func TestGroupScanShowsTheBrowseProgress(t *testing.T) {
	fc := newFake()
	fc.peeks["orders.dlq"].Ready = 5000 // the peek saw only some: S scans
	fc.topology = true
	h := newHarness(t, fc, Options{}, 100, 30).start()
	h.send(openQueueMsg{queue: "orders.dlq", confirmed: true})
	h.mustContain("msg-0002")
	gate := make(chan struct{})
	fc.mu.Lock()
	fc.peekGate, fc.peekReport, fc.peekOpts = gate, broker.PeekProgress{Read: 412, Want: 4990}, nil
	fc.mu.Unlock()
	h.key("g", "S")
	if h.m.top() != h.m.browser {
		h.key("enter") // the cost question, when others feel the browse
	}
	h.mustContain("grouping the whole queue… 412 of 4990 read · esc stops")
	fc.mu.Lock()
	opts := fc.peekOpts
	fc.mu.Unlock()
	if len(opts) != 1 || opts[0].Deadline != broker.DefaultPeekDeadline || opts[0].Progress == nil {
		t.Fatalf("the scan's read asked %d peeks, deadline %v", len(opts), opts[0].Deadline)
	}
	close(gate)
	fc.mu.Lock()
	fc.peekGate = nil
	fc.mu.Unlock()
	h.mustContain("grouped 3 of 5000 ready messages by error")
}

// A scan the deadline stopped says so, on the status line and over the
// groups, and does not claim the whole queue.
func TestGroupScanStoppedAtItsDeadlineSaysSo(t *testing.T) {
	fc := newFake()
	fc.peeks["orders.dlq"].Ready = 5000
	h := newHarness(t, fc, Options{}, 120, 30).start()
	h.send(openQueueMsg{queue: "orders.dlq", confirmed: true})
	h.mustContain("msg-0002")
	h.key("g")
	b := h.m.browser
	b.gscan = groupScan{id: 7, by: b.groupBy, peek: b.id, running: true, cancel: func() {}}
	scan := &usecase.GroupScan{
		Groups: []usecase.Group{{Key: "boom", Count: 412, Positions: []int{}, SampleIDs: []string{}}},
		Coverage: usecase.GroupCoverage{By: b.groupBy, Grouped: 412, LookedAt: 412, Of: 5000, Bound: usecase.DefaultDumpLimit,
			Capped: true, Deadline: broker.DefaultPeekDeadline},
		SideEffects: []string{}, ScannedAt: fixedNow,
	}
	err := fmt.Errorf("group orders.dlq: stopped at the 20s deadline after 412 messages of 5000: the rest was not read: %w", broker.ErrPartial)
	h.send(groupScanDoneMsg{queue: "orders.dlq", id: 7, scan: scan, err: err})
	const cov = "grouped 412 of 5000 ready messages by error · partial: the scan stopped at its 20s deadline after 412 of 5000"
	h.mustContain(cov)
	if s := h.m.status; s != cov || !h.m.statusErr {
		t.Errorf("status %q (error %v): want the coverage alone, the deadline said once", s, h.m.statusErr)
	}
	if strings.Contains(h.plain(), "· the whole queue") {
		t.Errorf("a stopped scan claims the whole queue:\n%s", h.plain())
	}
}

// Keys named in the UI's text come from the keymap: the scan's "esc
// stops" and the inspector's "enter shows one in full" follow a remapped
// Back and Open.
func TestTextNamesKeysFromTheKeymap(t *testing.T) {
	fc := newFake()
	fc.peeks["orders.dlq"].Ready = 5000
	h := newHarness(t, fc, Options{}, 160, 48).start()
	h.m.c.keys.Open = key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "open"))
	h.m.c.keys.Back = key.NewBinding(key.WithKeys("ctrl+g"), key.WithHelp("ctrl+g", "back"))
	h.send(openQueueMsg{queue: "orders.dlq", confirmed: true})
	h.mustContain("msg-0002")
	h.key("o") // the message
	h.mustContain("Headers (", " · o shows one in full")
	h.mustNotContain("enter shows one in full")

	b := h.m.browser
	b.groupBy = "error"
	b.gscan = groupScan{id: 1, by: "error", peek: b.id, running: true, cancel: func() {}}
	b.reading = &reading{id: 99, kind: readGroups, queue: b.queue, progress: broker.PeekProgress{Read: 5, Want: 4990}, cancel: func() {}}
	if got, want := b.groupCoverage(), "grouping the whole queue… 5 of 4990 read · ctrl+g stops · below, partial: the peek's first 3"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
