package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/retry"
)

// The timeline is in the broker's order, latest death first, and says that
// each time is the first of its queue and reason: main, rejected 3 times,
// comes first though its time is older than the wait queue's below it.
func TestDeathsTimelineSaysWhatItsOrderAndTimesAre(t *testing.T) {
	st := newStylesForTest()
	ds := []retry.Death{
		{Queue: "orders", Reason: retry.ReasonRejected, Count: 3, Time: fixedNow.Add(-10 * time.Minute)},
		{Queue: "orders.wait", Reason: retry.ReasonExpired, Count: 2, Time: fixedNow.Add(-9 * time.Minute)},
	}
	out := ansi.Strip(strings.Join(renderDeaths(ds, 80, st), "\n"))
	if i, j := strings.Index(out, "orders "), strings.Index(out, "orders.wait"); i < 0 || j < i {
		t.Fatalf("not in the broker's order:\n%s", out)
	}
	if !strings.Contains(out, "FIRST DEATH is each queue and reason's first (x-death keeps no later time)") {
		t.Fatalf("no word on the times:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Fatalf("line of %d cells: %q", ansi.StringWidth(l), l)
		}
	}
	// Each pair once: the times are exact, nothing to explain.
	ds[0].Count, ds[1].Count = 1, 1
	if out := ansi.Strip(strings.Join(renderDeaths(ds, 80, st), "\n")); strings.Contains(out, "FIRST DEATH is each") {
		t.Fatalf("a note for single deaths:\n%s", out)
	}
	m := fixtureMessage(0)
	if doc := ansi.Strip(strings.Join(renderInspector(&m, fixedNow, 80, "enter", st), "\n")); !strings.Contains(doc, "x-death timeline (latest death first)") || strings.Contains(doc, "most recent first") {
		t.Fatal("the section title does not say latest death first")
	}
}
