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
