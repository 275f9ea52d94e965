package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
)

// peekAt is the peek time of the table tests.
var peekAt = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// tierPeek is a DLQ's peek whose messages died in the tiers of a ladder
// with a long name: one with its timestamp, one with x-death's time only,
// one with a framework's fault time only, one with no time at all.
func tierPeek() *broker.PeekResult {
	const svc = "registration_service"
	stamp := peekAt.Add(-11 * time.Minute)
	death := func(q string, ago time.Duration) []retry.Death {
		return []retry.Death{{Queue: q, Reason: retry.ReasonExpired, Count: 1, Time: peekAt.Add(-ago)}}
	}
	return &broker.PeekResult{Queue: svc + ".dlq", Type: "classic", Total: 4, Ready: 4, PeekedAt: peekAt,
		Messages: []broker.Message{
			{Position: 0, Properties: broker.Properties{MessageID: "registration-2026-03-04-000001", Timestamp: &stamp},
				Retry: retry.RetryState{Count: 3, Source: retry.SourceRetryCount}, Deaths: death(svc+".retry.5s", time.Minute),
				RoutingKey: "registration.created", BodySize: 120},
			{Position: 1, Properties: broker.Properties{MessageID: "registration-2026-03-04-000002"},
				Retry: retry.RetryState{Count: 2, Source: retry.SourceXDeath}, Deaths: death(svc+".retry.30s", 62*time.Minute),
				RoutingKey: "registration.updated", BodySize: 98},
			{Position: 2, Properties: broker.Properties{MessageID: "registration-2026-03-04-000003"},
				Retry:  retry.RetryState{Count: 1, Source: retry.SourceMassTransit, LastErrorTime: peekAt.Add(-5 * time.Minute)},
				Deaths: []retry.Death{{Queue: svc + ".retry.5m", Reason: retry.ReasonRejected, Count: 1}}, RoutingKey: "registration.deleted", BodySize: 77},
			{Position: 3, Properties: broker.Properties{MessageID: "m4"}, RoutingKey: "r", BodySize: 1},
		}}
}

// column is the cells of the column titled title (its start in the header
// line to the next title's), header first.
func column(t *testing.T, out, title, next string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range lines {
		// Titles are two spaces apart: "  AGE" is not the end of "MESSAGE".
		from, to := strings.Index(l, "  "+title), strings.Index(l, "  "+next)
		if from < 0 || to < from {
			continue
		}
		from, to = from+2, to+2
		// Cells are measured in cells, the header is ASCII: cut by runes.
		var cells []string
		for _, row := range lines[i:] {
			rs := []rune(row)
			cells = append(cells, strings.TrimSpace(string(rs[from:min(to, len(rs))])))
		}
		return cells
	}
	t.Fatalf("no header with %q and %q:\n%s", title, next, out)
	return nil
}

// AGE is the browser's: the timestamp's age plain, x-death's or the fault
// time's with "~", "–" when nothing tells.
func TestPeekTableShowsAge(t *testing.T) {
	out := renderPeek(&usecase.GroupedPeek{PeekResult: tierPeek()}, 0)
	got := strings.Join(column(t, out, "AGE", "RETRIES"), ",")
	if want := "AGE,11m,~1h,~5m,–"; got != want {
		t.Errorf("AGE column %q, want %q:\n%s", got, want, out)
	}
	// Without a limit every name is whole.
	for _, s := range []string{"registration_service.retry.30s", "registration-2026-03-04-000002", "registration.updated"} {
		if !strings.Contains(out, s) {
			t.Errorf("lacks %q:\n%s", s, out)
		}
	}
}

// At 80 columns (and down to the columns' least, 64) the table fits: the
// columns that may give way do, each keeping what tells its cells apart,
// their titles shortened where the title is wider.
func TestPeekTableFitsTheTerminal(t *testing.T) {
	res := tierPeek()
	if wide := renderPeek(&usecase.GroupedPeek{PeekResult: res}, 0); widest(wide) <= 80 {
		t.Fatalf("the table fits 80 columns uncut (%d): nothing to show", widest(wide))
	}
	for width := 80; width >= 64; width-- {
		out := renderPeek(&usecase.GroupedPeek{PeekResult: res}, width)
		if w := widest(out); w > width {
			t.Errorf("%d columns: a line of %d cells:\n%s", width, w, out)
		}
		id, key := "MESSAGE ID", "ROUTING KEY"
		if !strings.Contains(out, id) {
			id = "ID"
		}
		if !strings.Contains(out, key) {
			key = "KEY"
		}
		for _, c := range []struct{ title, next string }{{id, "AGE"}, {"RETRIES", "LAST DEATH"}, {"LAST DEATH", "DUE"}, {key, "SIZE"}} {
			cells := column(t, out, c.title, c.next)
			seen := map[string]bool{}
			for _, cell := range cells[1:] {
				if seen[cell] {
					t.Errorf("%d columns, %s: two rows read %q:\n%s", width, c.title, cell, out)
				}
				seen[cell] = true
			}
		}
		if got := strings.Join(column(t, out, "AGE", "RETRIES"), ","); got != "AGE,11m,~1h,~5m,–" {
			t.Errorf("%d columns: AGE column %q:\n%s", width, got, out)
		}
	}
}

// ladder peek's table on the simulation shows each message's AGE as the
// browser reads it from the same message (present.MessageAge).
func TestPeekCommandShowsAge(t *testing.T) {
	s := newSim(t)
	code, out, errOut := runOnSim(t, s, "peek", sim.OrdersDLQ, "-n", "4", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var res broker.PeekResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	want := []string{"AGE"}
	for i := range res.Messages {
		want = append(want, present.MessageAge(&res.Messages[i], res.PeekedAt))
	}
	if code, out, errOut = runOnSim(t, s, "peek", sim.OrdersDLQ, "-n", "4"); code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	if got := column(t, out, "AGE", "RETRIES"); strings.Join(got, ",") != strings.Join(want, ",") || len(got) != 5 {
		t.Errorf("AGE %q, want %q:\n%s", got, want, out)
	}
}

func widest(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, termtext.Width(l))
	}
	return w
}
