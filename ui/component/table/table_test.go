package table

import "testing"

func TestRemainingCountsEveryGap(t *testing.T) {
	// 80 cells: lead 2, columns 5 and 6 each after a gap: 80-2-6-7 = 65.
	if got := Remaining(80, 2, 8, 5, 6); got != 65 {
		t.Errorf("got %d", got)
	}
	if got := Remaining(10, 2, 8, 5, 6); got != 8 {
		t.Errorf("at least: got %d", got)
	}
}

func TestCellsFitAndAlign(t *testing.T) {
	cols := []Column{{Title: "NAME", Width: 6}, {Title: "N", Width: 3, Right: true}}
	if got := Join(Cells(cols, "queue-long-name", "7")); got != "queue…   7" {
		t.Errorf("%q", got)
	}
	if got := Header(cols); got != "NAME     N" {
		t.Errorf("%q", got)
	}
	if got := Join(Cells(cols, "x")); got != "x         " {
		t.Errorf("missing value: %q", got)
	}
}
