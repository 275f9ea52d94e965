package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// A message without a timestamp property shows AGE from x-death's earliest
// first death, marked "~", and the inspector names where it came from.
func TestBrowserAgeFromXDeathWithoutTimestamp(t *testing.T) {
	msg := fixtureMessage(1)
	msg.Properties.Timestamp = nil
	msg.Seen, msg.SeenFrom = time.Time{}, "" // as a peek without a timestamp decodes it: BestTime reads it
	c := browserLayout(80)
	row := renderBrowserRow(&msg, c, fixedNow)
	// fixtureMessage's deaths are 3 and 10 minutes old: the earliest wins.
	if !strings.Contains(row, " ~10m ") {
		t.Fatalf("row %q", row)
	}
	props := strings.Join(strings.Fields(ansi.Strip(strings.Join(renderProperties(&msg, fixedNow, 80, newStylesForTest()), "\n"))), " ")
	if !strings.Contains(props, "seen 2026-03-04T11:50:00Z (10m before the peek; x-death's earliest death, no timestamp)") {
		t.Errorf("%s", props)
	}

	// With a timestamp the AGE is the timestamp's, unmarked, and the
	// inspector adds nothing.
	msg = fixtureMessage(1)
	row = renderBrowserRow(&msg, c, fixedNow)
	if strings.Contains(row, "~") || !strings.Contains(row, " 11m ") {
		t.Fatalf("row %q", row)
	}
	if props := ansi.Strip(strings.Join(renderProperties(&msg, fixedNow, 80, newStylesForTest()), "\n")); strings.Contains(props, "no timestamp") {
		t.Errorf("%s", props)
	}

	// Nothing known: "–" as before.
	msg.Properties.Timestamp, msg.Deaths = nil, []retry.Death{}
	if row := renderBrowserRow(&msg, c, fixedNow); strings.Contains(row, "~") {
		t.Errorf("row %q", row)
	}
}

// A Celery task's eta is its DUE when no TTL gives one, in the browser's
// 80-column cell and the inspector alike.
func TestBrowserDueFromCeleryETA(t *testing.T) {
	msg := fixtureMessage(1)
	msg.HoL = nil
	msg.Retry.DueTime, msg.Retry.DueSource = fixedNow.Add(4*time.Minute), "eta"
	if row := renderBrowserRow(&msg, browserLayout(80), fixedNow); !strings.Contains(row, "eta 4m") {
		t.Fatalf("row %q", row)
	}
	sum := strings.Join(strings.Fields(ansi.Strip(strings.Join(renderRetrySummary(&msg, fixedNow, 80, newStylesForTest()), "\n"))), " ")
	if !strings.Contains(sum, `in 4m (the framework's run time, header "eta"; no TTL applies)`) {
		t.Errorf("%s", sum)
	}
}

// Sorting by due and by age reads what the cells show: an eta sorts with
// TTL due times, and a time from x-death sorts with timestamps.
func TestBrowserSortsByTheTimesShown(t *testing.T) {
	eta, never := fixtureMessage(0), fixtureMessage(1)
	eta.HoL, eta.Retry.DueTime = nil, fixedNow.Add(time.Minute)
	never.HoL = &topology.HoLMark{NeverDue: true}
	if cmpDue(&eta, &never) >= 0 {
		t.Error("an eta sorts after never-due")
	}
	old := fixtureMessage(2) // timestamp 12 minutes before
	noTS := fixtureMessage(3)
	noTS.Properties.Timestamp = nil // x-death: 10 minutes before
	if cmpSeen(&old, &noTS) >= 0 {
		t.Error("the older timestamp sorts after the x-death time")
	}
}
