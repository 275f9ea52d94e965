package present

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/usecase"
)

// Groups say whether they are the whole queue, and, short of it, that
// they are partial and why.
func TestGroupedSaysWholeOrPartial(t *testing.T) {
	for _, tt := range []struct {
		c    usecase.GroupCoverage
		want string
	}{
		{usecase.GroupCoverage{By: "error", Grouped: 3000, LookedAt: 3000, Of: 3000, Bound: usecase.GroupWholeLimit},
			"grouped 3000 of 3000 ready messages by error · the whole queue"},
		{usecase.GroupCoverage{By: "error", Grouped: 10000, LookedAt: 10000, Of: 10500, Bound: usecase.GroupWholeLimit, Capped: true},
			"grouped 10000 of 10500 ready messages by error · partial: the first 10000 of 10500: groups cover a queue of up to 10000 ready messages by default (-n 10500 groups them all, up to 100000)"},
		{usecase.GroupCoverage{By: "reason", Grouped: 1000, LookedAt: 1000, Of: 5000, Bound: 1000, Limit: 1000, Capped: true},
			"grouped 1000 of 5000 ready messages by reason · partial: the first 1000 of 5000, as -n asked"},
		{usecase.GroupCoverage{By: "error", Grouped: 412, LookedAt: 412, Of: 5000, Bound: usecase.GroupWholeLimit, Capped: true, Deadline: 20 * time.Second},
			"grouped 412 of 5000 ready messages by error · partial: the scan stopped at its 20s deadline after 412 of 5000"},
		{usecase.GroupCoverage{By: "error", Grouped: 900, LookedAt: 900, Of: 1000, Bound: usecase.GroupWholeLimit, Capped: true},
			"grouped 900 of 1000 ready messages by error · partial: the browse saw 900 of 1000 ready messages: the others were taken or held by another reader meanwhile"},
		{usecase.GroupCoverage{By: "error", Grouped: 20, LookedAt: 50, Of: 50, Bound: usecase.GroupWholeLimit},
			"grouped 20 of 50 ready messages by error (30 messages not chosen by --where) · the whole queue"},
	} {
		if got := Grouped(tt.c); got != tt.want {
			t.Errorf("Grouped(%+v)\n got %q\nwant %q", tt.c, got, tt.want)
		}
	}
	if got := PeekGrouped(1000, 1000, 25000, "error", "S"); got != "grouped 1000 of 25000 ready messages by error · partial: the peek's first 1000 (more than the 10000 grouped whole by default) · S groups up to 100000" {
		t.Errorf("PeekGrouped: %q", got)
	}
	if got := PeekGrouped(300, 300, 300, "error", ""); got != "grouped 300 of 300 ready messages by error · the whole queue" {
		t.Errorf("PeekGrouped of a whole peek: %q", got)
	}
}

// FIRST/LAST say which time they are; groups timed differently are named
// each, and those without a time are counted.
func TestGroupTimesSayWhichTime(t *testing.T) {
	reached := usecase.Group{Count: 5, Timed: 5, Times: usecase.GroupTimeReached}
	published := usecase.Group{Count: 3, Timed: 2, Times: usecase.GroupTimePublished}
	if got := GroupTimes([]usecase.Group{reached}, "work.dlq"); !strings.HasPrefix(got, "FIRST/LAST: when they reached work.dlq (") || GroupTimesMixed([]usecase.Group{reached, reached}) {
		t.Errorf("one kind: %q", got)
	}
	got := GroupTimes([]usecase.Group{reached, published}, "work.dlq")
	if !strings.HasPrefix(got, "FIRST/LAST, by group (TIME): reached: when they reached work.dlq") || !strings.Contains(got, "published: when they were published") ||
		!strings.HasSuffix(got, "; 1 of 8 messages have none") || !GroupTimesMixed([]usecase.Group{reached, published}) {
		t.Errorf("two kinds: %q", got)
	}
	if got := GroupTimes([]usecase.Group{{Count: 2}}, "q"); got != "" {
		t.Errorf("no time: %q", got)
	}
}
