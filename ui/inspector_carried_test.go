package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/retry"
)

// fitsWidth fails the test on a frame line wider than width cells.
func fitsWidth(t *testing.T, frame string, width int) {
	t.Helper()
	for i, l := range strings.Split(frame, "\n") {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i+1, w, width, l)
		}
	}
}

// A death ladder carried across a move or replay (x-ladder-deaths) is
// marked in the inspector's timeline, and the mark explained once, at 80
// columns as at 160; a message with none carried has neither.
func TestInspectorMarksCarriedDeaths(t *testing.T) {
	for _, w := range []int{80, 160} {
		fc := newFake()
		m := &fc.peeks["orders.dlq"].Messages[0]
		// As the decoder gives it on 4.x: the broker's x-death, then what
		// ladder carried before re-publishing.
		m.Deaths = []retry.Death{
			{Queue: "orders", Reason: retry.ReasonRejected, Count: 1, Time: fixedNow.Add(-time.Minute)},
			{Queue: "orders", Reason: retry.ReasonRejected, Count: 2, Time: fixedNow.Add(-10 * time.Minute), Carried: true},
		}
		m.Headers["x-death"] = []any{map[string]any{"queue": "orders", "reason": "rejected", "count": int64(1)}}
		m.Headers[retry.HeaderCarriedDeaths] = []any{map[string]any{"queue": "orders", "reason": "rejected", "count": int64(2)}}
		h := newHarness(t, fc, Options{}, w, 40).start()
		h.key("down", "down", "down", "enter", "enter")
		frame := h.plain()
		if l := lineWith(frame, "2026-03-04 11:50:00"); !strings.HasPrefix(l, "* orders ") || !strings.Contains(l, "rejected") {
			t.Errorf("at %d columns the carried death is not marked: %q\n%s", w, l, frame)
		}
		if l := lineWith(frame, "2026-03-04 11:59:00"); !strings.HasPrefix(l, "  orders ") {
			t.Errorf("at %d columns the broker's own death is not plain: %q\n%s", w, l, frame)
		}
		h.mustContain("* carried by ladder across a move or replay (in x-ladder-deaths)")
		fitsWidth(t, frame, w)

		h.key("esc", "down", "enter") // message #1: the fixture's, nothing carried
		h.mustContain("message #1 in orders.dlq")
		h.mustNotContain("carried by ladder", "* orders")
	}
}
