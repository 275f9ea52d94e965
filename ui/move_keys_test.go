package ui

import (
	"testing"

	"github.com/ladder-tui/ladder/ui/movedialog"
)

// The move dialog's typed target, left with ↑ onto its own row (the
// choice, drawn with the text beside it) and typed on: every letter goes
// into the text. None reaches the form's keys (y previews, n cancels) or,
// once n closed the dialog, the browser behind (a marks all, r re-peeks).
func TestTypingOnATypedTargetsRowTakesEveryLetter(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 100, 30).start()
	h.key("down", "down", "down", "enter") // orders.dlq, peeked
	peeks := len(fc.peeked)
	h.key("m", "tab", "left") // target: typed (its text is focused)
	if h.m.move.Focus() != movedialog.FieldTargetText {
		t.Fatalf("choosing typed focused field %d", h.m.move.Focus())
	}
	h.typeText("queue:")
	h.key("up") // onto the target's row: the choice, its text beside it
	if h.m.move.Focus() != movedialog.FieldTarget {
		t.Fatalf("↑ from the text focused field %d", h.m.move.Focus())
	}
	h.typeText("any-retry")
	if h.m.top() != h.m.move || h.m.move.Step() != movedialog.StepForm {
		t.Fatalf("the letters acted on the dialog or the screens behind: top %T, step %d", h.m.top(), h.m.move.Step())
	}
	if len(fc.moves) != 0 || len(h.m.browser.marks) != 0 || len(fc.peeked) != peeks {
		t.Fatalf("keys reached the screens behind: %d moves, %d marked, %d peeks (was %d)", len(fc.moves), len(h.m.browser.marks), len(fc.peeked), peeks)
	}
	if got := h.m.move.Text(movedialog.FieldTargetText); got != "queue:any-retry" {
		t.Fatalf("typed target %q, want %q", got, "queue:any-retry")
	}
	if !h.m.move.Capturing() {
		t.Error("the dialog does not say it takes text")
	}
	// The letters took the focus to the text; ↑ is the choice again, and
	// enter there previews what was typed.
	h.key("up")
	if h.m.move.Focus() != movedialog.FieldTarget {
		t.Fatalf("↑ from the text: focus %d", h.m.move.Focus())
	}
	h.key("enter")
	if len(fc.moves) != 1 || fc.moves[0].To.Name != "any-retry" || !fc.moves[0].DryRun {
		t.Fatalf("enter did not preview the typed target: %+v", fc.moves)
	}
}

// The same for a typed delay's row.
func TestTypingOnATypedDelaysRowTakesEveryLetter(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 100, 30).start()
	h.key("down", "down", "down", "enter", "m", "tab", "tab", "left") // delay: typed
	if h.m.move.Focus() != movedialog.FieldDelayText {
		t.Fatalf("choosing typed focused field %d", h.m.move.Focus())
	}
	h.key("up")
	h.typeText("90s")
	if h.m.top() != h.m.move || h.m.move.Text(movedialog.FieldDelayText) != "90s" || len(fc.moves) != 0 {
		t.Fatalf("typed delay %q, top %T, moves %d", h.m.move.Text(movedialog.FieldDelayText), h.m.top(), len(fc.moves))
	}
}
