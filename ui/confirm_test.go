package ui

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// The move dialog's typed delay follows usecase.ParseDelay, as --delay
// does: a bare number is refused with what to type, never taken as ms.
func TestMoveDialogDelayWantsAUnit(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 100, 30).start()
	h.key("down", "down", "down", "enter", "m", "tab", "tab", "left") // delay: typed
	h.typeText("500")
	h.key("enter")
	h.mustContain(`delay "500": add a unit (500ms, 30s, 5m)`)
	if len(fc.moves) != 0 || h.m.move.Step() != movedialog.StepForm {
		t.Fatalf("a bare number reached the broker: %+v", fc.moves)
	}
	h.typeText("ms")
	h.key("enter")
	if len(fc.moves) != 1 || fc.moves[0].Delay != 500*time.Millisecond || !fc.moves[0].DryRun {
		t.Fatalf("500ms: %+v", fc.moves)
	}
}

// The whole queue's dry run stops at usecase.PreviewCap, as the command's
// does; the move runs bound to the plan (Expect), as many as were planned,
// or, from a cut plan, the whole queue, each planned as it moves, which
// the confirmation says.
func TestMoveDialogCapsAndBindsThePreview(t *testing.T) {
	for _, cut := range []bool{false, true} {
		fc := newFake()
		h := newHarness(t, fc, Options{}, 160, 48).start()
		h.key("down", "down", "down", "m", "left", "enter") // orders.dlq from home, the whole queue
		if len(fc.moves) != 1 || !fc.moves[0].DryRun || fc.moves[0].Limit != usecase.PreviewCap {
			t.Fatalf("whole-queue dry run %+v", fc.moves)
		}
		h.mustContain("Confirm move")
		planned, limit := len(h.m.move.Preview().Planned), 3
		if cut {
			h.m.move.Preview().Requested, limit = usecase.PreviewCap, 0
			h.mustContain("10000 were planned, the rest are planned one by one as they move")
		} else {
			h.mustNotContain("were planned")
		}
		h.key("enter")
		if len(fc.moves) != 2 || fc.moves[1].DryRun || fc.moves[1].Limit != limit || len(fc.moves[1].Expect) != planned || fc.moves[1].MaxMoves != usecase.DefaultMaxMoves {
			t.Fatalf("cut %v: the move %+v, want limit %d bound to %d plans", cut, fc.moves[1], limit, planned)
		}
	}
}

// A queue with nothing ready is refused at its preview and enter then
// runs nothing (the read-only refusal: movedialog's TestReadOnlyRefusedBeforeTheDryRun).
func TestMoveDialogRefusesNothingReady(t *testing.T) {
	fc := newFake()
	fc.peeks["orders.dlq"] = &broker.PeekResult{Queue: "orders.dlq"}
	h := newHarness(t, fc, Options{}, 160, 48).start()
	h.key("down", "down", "down", "m", "left", "enter")
	h.mustContain("no message is ready: nothing to move")
	h.key("enter")
	if len(fc.moves) != 1 || h.m.move.Step() != movedialog.StepPreview {
		t.Fatalf("nothing ready: %d moves, step %d", len(fc.moves), h.m.move.Step())
	}
}
