package present

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

// A message whose expiration dead-lettering stripped, in a queue without a
// TTL, reads as never due (stuck) in every form, never "due" or "overdue".
func TestDueOfAStuckMessage(t *testing.T) {
	at := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	hr := topology.HoL([]topology.HoLInput{{Expiration: time.Second, HasExpiration: true, Stripped: true, Timestamp: at.Add(-8 * time.Minute)}}, 0, at)
	h := &hr.Marks[0]
	for form, want := range map[DueForm]string{DueCell: "stuck", DueWide: "never due (stuck)", DueSentence: "never due (stuck): dead-lettering stripped its expiration and this queue has no TTL"} {
		if got := Due(h, at, form); got != want {
			t.Errorf("form %d: %q, want %q", form, got, want)
		}
	}
	js, err := json.Marshal(h)
	if err != nil || !strings.Contains(string(js), `"never_due":true`) || !strings.Contains(string(js), `"never_due_reason":"stuck: dead-lettering stripped`) {
		t.Errorf("JSON %s %v", js, err)
	}
}

// A due time a framework set (Celery's eta) shows when no TTL gives one,
// saying "eta"; a TTL's due time wins over it.
func TestDueOfACeleryETA(t *testing.T) {
	at := time.Date(2024, 3, 1, 10, 20, 30, 0, time.UTC)
	eta := at.Add(90 * time.Second)
	for _, tc := range []struct {
		h    *topology.HoLMark
		eta  time.Time
		form DueForm
		want string
	}{
		{nil, eta, DueCell, "eta 2m"},
		{nil, at.Add(-3 * time.Minute), DueCell, "eta -3m"},
		{&topology.HoLMark{NeverDue: true}, eta, DueWide, "eta in 1m30s"},
		{nil, at.Add(-3 * time.Minute), DueWide, "eta 3m ago"},
		{nil, eta, DueSentence, `eta 2024-03-01T10:22:00Z, in 1m30s (the framework's run time, header "eta"; no TTL applies)`},
		{&topology.HoLMark{DueAt: at.Add(4 * time.Second)}, eta, DueCell, "4s"},
		{&topology.HoLMark{Stuck: true, NeverDue: true}, eta, DueCell, "stuck"},
		{nil, time.Time{}, DueCell, NoValue},
	} {
		if got := DueOf(tc.h, tc.eta, "eta", at, tc.form); got != tc.want {
			t.Errorf("DueOf(%+v, %v, %d) = %q, want %q", tc.h, tc.eta, tc.form, got, tc.want)
		}
	}
}
