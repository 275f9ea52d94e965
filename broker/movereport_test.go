package broker

import (
	"testing"
)

// A move that went on through another node: what moved adds up, what is
// left in the source is the second part's (it looked at all of it again).
func TestMoveReportAdd(t *testing.T) {
	first := NewMoveReport(MoveRequest{})
	first.Requested, first.Moved, first.Failed, first.Skipped = 100, 40, 7, 2
	first.DuplicatesAtMost, first.Via["direct"] = 5, 40
	first.Note("lost")
	more := NewMoveReport(MoveRequest{})
	more.Requested, more.Moved, more.Skipped = 62, 60, 2
	more.DuplicatesAtMost, more.Via["direct"] = 1, 60
	more.Note("lost")
	first.Add(more)
	if first.Requested != 100 || first.Moved != 100 || first.Failed != 0 || first.Skipped != 2 || first.DuplicatesAtMost != 6 ||
		first.Via["direct"] != 100 || len(first.Notes) != 1 {
		t.Errorf("added: %+v", first)
	}
}
