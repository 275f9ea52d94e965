package ui

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// selectHome puts the ladders screen's cursor on queue.
func selectHome(t *testing.T, h *harness, queue string) {
	t.Helper()
	h.key("home")
	for range len(h.m.home.rows) {
		if r := h.m.home.selected(); r != nil && r.name == queue {
			return
		}
		h.key("down")
	}
	t.Fatalf("no row %q on the ladders screen", queue)
}

// u on home acts on a row with a head-of-line finding only, and help lists
// it only there: the fixture's orders.retry.1m has hol-risk, orders.dlq
// none. (The fake has no topology, so the unblock stops at its error: that
// it got there is the point.)
func TestHomeUnblockKeyOnAHoLFinding(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 160, 40).start()
	peeks := func() int {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		return len(fc.peeked)
	}

	selectHome(t, h, "orders.dlq")
	h.mustNotContain("unblock")
	h.key("?")
	h.mustNotContain("unblock")
	h.key("esc", "u")
	if n := peeks(); n != 0 || h.m.top() != h.m.home {
		t.Fatalf("u on a row without a HoL finding: %d peeks, top %T", n, h.m.top())
	}

	selectHome(t, h, "orders.retry.1m")
	h.mustContain("u unblock (HoL)")
	h.key("?")
	h.mustContain("unblock (HoL)")
	h.key("esc", "u")
	h.mustContain("unblock orders.retry.1m: fake: no topology")
}

// Under --read-only u is gone from home: not in the footer or help, and
// pressing it reads nothing.
func TestHomeUnblockKeyIsAbsentReadOnly(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{ReadOnly: true}, 160, 40).start()
	selectHome(t, h, "orders.retry.1m")
	h.mustNotContain("unblock")
	h.key("?")
	h.mustNotContain("unblock")
	h.key("esc", "u")
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if slices.Contains(fc.peeked, "orders.retry.1m") {
		t.Errorf("u read the queue under --read-only: %q", fc.peeked)
	}
}

// u on the demo's payments.wait from the ladders screen, where its HoL
// finding shows: the same flow as the browser's u (the dialog on the dry
// run of exactly the messages holding others back; enter moves them;
// afterwards nothing holds anything back).
func TestHomeUnblocksAHoLFinding(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := sim.New(sim.Options{Seed: 3, Now: func() time.Time { return now }, WarmUp: 10 * time.Minute})
	t.Cleanup(func() { s.Close() })
	h := newHarnessOn(t, s, Options{}, 160, 48).start()
	selectHome(t, h, sim.PaymentsWait)
	if r := h.m.home.unblockRow(); r == nil {
		var codes []string
		for _, f := range h.m.home.selected().finds {
			codes = append(codes, f.Code)
		}
		t.Fatalf("payments.wait has no HoL finding on home: %q", codes)
	}
	h.mustContain("u unblock (HoL)")
	// Its messages carry their own TTLs: u's reads ask first.
	h.key("u")
	h.mustContain("ladder unblock reads the queue twice", "may release at most")
	h.key("y")
	h.mustContain("Confirm move", "those holding others back", "remaining delay")
	if h.m.top() != h.m.move || h.m.move.Spec().Unblock == nil {
		t.Fatalf("u did not open the unblock dialog:\n%s", h.plain())
	}
	picks := len(h.m.move.Spec().Unblock.Pick)
	if got := h.m.move.Preview().Requested; picks == 0 || got != picks {
		t.Fatalf("dry run plans %d, the unblock picks %d", got, picks)
	}
	h.key("enter")
	h.mustContain("moved " + strconv.Itoa(picks))
	_, after, _, err := usecase.PrepareUnblockWith(t.Context(), s, sim.PaymentsWait, usecase.UnblockOptions{ForcePeek: true})
	if err != nil || len(after.Picks) != 0 {
		t.Errorf("after unblock: %+v %v", after.Picks, err)
	}
	if strings.Contains(h.plain(), "not found") {
		t.Errorf("a planned message was not found:\n%s", h.plain())
	}
}

// An unblock plan asked from home that arrives after the user opened a
// queue does not pull the move dialog over the browser.
func TestHomeUnblockPlanArrivingLateOpensNothing(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 160, 40).start()
	h.send(openQueueMsg{queue: "orders.dlq"})
	browser := h.m.top()
	plan := moveplan.UnblockPlan{Queue: "orders.retry.1m", Picks: []moveplan.UnblockPick{{Position: 0, Remaining: time.Minute}}}
	h.send(unblockReadyMsg{queue: "orders.retry.1m", home: true, plan: plan})
	if h.m.top() != browser {
		t.Fatalf("top %T, want the browser still", h.m.top())
	}
	h.key("esc")
	h.send(unblockReadyMsg{queue: "orders.retry.1m", home: true, plan: plan})
	if h.m.top() != screen(h.m.move) {
		t.Fatalf("from home: top %T, want the move dialog", h.m.top())
	}
}
