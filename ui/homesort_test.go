package ui

import (
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// bigVhost is many ladders in name order, a few of whose DLQs hold
// messages, and other queues: what sorting is for.
func bigVhost() *broker.Snapshot {
	var qs []topology.Queue
	var ladders []retry.Ladder
	depth := map[string]int64{"b.dlq": 500, "d.dlq": 40, "d": 3, "z-other": 9}
	for _, p := range []string{"a", "b", "c", "d"} {
		for _, n := range []string{p, p + ".wait", p + ".dlq"} {
			qs = append(qs, queue(n, depth[n], 0, 0, 0, 0))
		}
		ladders = append(ladders, retry.Ladder{Main: p, Tiers: []retry.Tier{{Queue: p + ".wait", TTL: 5000}}, DLQ: p + ".dlq"})
	}
	qs = append(qs, queue("m-other", 0, 0, 0, 0, 0), queue("y-other", 2, 0, 0, 0, 0), queue("z-other", 9, 0, 0, 0, 0))
	fs := []topology.Finding{
		{Code: topology.CodeNoConsumers, Severity: topology.SeverityInfo, Queue: "a", Message: "info"},
		{Code: topology.CodeStuck, Severity: topology.SeverityError, Queue: "c.wait", Message: "error"},
		{Code: topology.CodeNoDLQ, Severity: topology.SeverityWarning, Queue: "y-other", Message: "warning"},
	}
	topology.SortFindings(fs)
	return &broker.Snapshot{
		Vhost: "/", BrokerVersion: "4.3.6", TakenAt: fixedNow,
		Topology: topology.Vhost{Name: "/", Queues: qs}, Ladders: ladders, Findings: fs,
	}
}

// names lists the selectable rows and section titles of rows.
func names(rows []homeRow) string {
	var out []string
	for _, r := range rows {
		if r.kind == rowSection {
			out = append(out, "["+r.title+"]")
			continue
		}
		if r.selectable() {
			out = append(out, r.name)
		}
	}
	return strings.Join(out, " ")
}

func TestHomeRowsSortedKeepLaddersWhole(t *testing.T) {
	s := bigVhost()
	grew := map[string]int64{"d.dlq": 30, "b.dlq": 2, "m-other": 5}
	for _, tc := range []struct {
		view homeView
		want string
	}{
		{homeView{}, "[LADDERS (4)] a a.wait a.dlq b b.wait b.dlq c c.wait c.dlq d d.wait d.dlq [OTHER QUEUES (3)] m-other y-other z-other"},
		// A ladder takes the place of its biggest queue.
		{homeView{sort: sortDepth}, "[LADDERS (4) · by depth] b b.wait b.dlq d d.wait d.dlq a a.wait a.dlq c c.wait c.dlq [OTHER QUEUES (3) · by depth] z-other y-other m-other"},
		{homeView{sort: sortGrowth, growth: func(q string) int64 { return grew[q] }},
			"[LADDERS (4) · by growth] d d.wait d.dlq b b.wait b.dlq a a.wait a.dlq c c.wait c.dlq [OTHER QUEUES (3) · by growth] m-other z-other y-other"},
		// Worst finding first: c's error, then a's note, then those without.
		{homeView{sort: sortFindings}, "[LADDERS (4) · by findings] c c.wait c.dlq a a.wait a.dlq b b.wait b.dlq d d.wait d.dlq [OTHER QUEUES (3) · by findings] y-other m-other z-other"},
		// Empty ones hidden: a and c hold nothing, nor does m-other.
		{homeView{hideEmpty: true}, "[LADDERS (2 of 4, 2 empty hidden)] b b.wait b.dlq d d.wait d.dlq [OTHER QUEUES (2 of 3, 1 empty hidden)] y-other z-other"},
		// Filtered (every ladder has a ".dlq"), b's other members stay,
		// dimmed, around its match.
		{homeView{hideEmpty: true, sort: sortDepth, filter: "d"}, "[LADDERS (2 of 4, 2 empty hidden) · by depth] b.dlq d d.wait d.dlq [OTHER QUEUES (0) · by depth]"},
	} {
		if got := names(buildHomeRowsView(s, tc.view)); got != tc.want {
			t.Errorf("%+v:\n got %s\nwant %s", tc.view, got, tc.want)
		}
	}
}

// s cycles the order (the section titles and the footer say which), e
// hides and shows empty queues; the cursor stays on its queue.
func TestHomeSortAndHideKeys(t *testing.T) {
	fc := newFake()
	fc.snap = bigVhost()
	h := newHarness(t, fc, Options{}, 160, 48).start()
	h.key("down", "down", "down", "down", "down") // b.dlq
	if r := h.m.home.selected(); r == nil || r.name != "b.dlq" {
		t.Fatalf("cursor on %+v", r)
	}
	h.mustContain("s sort by depth", "e hide empty")
	h.key("s")
	h.mustContain("LADDERS (4) · by depth", "s sort by growth")
	if r := h.m.home.selected(); r == nil || r.name != "b.dlq" {
		t.Fatalf("after sorting the cursor is on %+v, want b.dlq still", r)
	}
	h.key("s", "s")
	h.mustContain("· by findings", "s sort by name")
	h.key("s")
	h.mustNotContain("· by ")
	h.key("e")
	h.mustContain("LADDERS (2 of 4, 2 empty hidden)", "e show empty")
	h.mustNotContain("a.wait")
	h.key("e")
	h.mustContain("LADDERS (4)", "a.wait")
}

// enter on a finding goes back home with the cursor on its queue, shown
// even when a filter or hidden empty queues left it out.
func TestFindingsJumpToTheirQueue(t *testing.T) {
	fc := newFake()
	fc.snap = bigVhost()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("e", "/")
	h.typeText("z")
	h.key("enter")
	if r := h.m.home.selected(); r == nil || r.name != "z-other" {
		t.Fatalf("precondition: cursor on %+v", r)
	}
	h.key("f")
	h.mustContain("Findings (3)", "▸ ✖ stuck · c.wait")
	h.key("down", "down") // the note on a, an empty queue the filter hides too
	h.mustContain("▸ ℹ no-consumers · a")
	h.key("enter")
	if h.m.top() != screen(h.m.home) {
		t.Fatalf("enter on a finding left %T on top", h.m.top())
	}
	if r := h.m.home.selected(); r == nil || r.name != "a" {
		t.Fatalf("cursor on %+v, want a", r)
	}
	h.mustContain("a · main queue")
	// A finding about an exchange names no queue to go to.
	fc.mu.Lock()
	fc.snap.Findings = []topology.Finding{{Code: topology.CodeUnroutableDeadLetter, Severity: topology.SeverityError, Exchange: "x", Message: "dropped"}}
	fc.mu.Unlock()
	h.send(pollMsg{gen: h.m.gen})
	h.key("f", "enter")
	if h.m.top() != screen(h.m.findings) {
		t.Fatal("enter on an exchange's finding left the findings view")
	}
	h.mustContain("about exchange x, not a queue")
}
