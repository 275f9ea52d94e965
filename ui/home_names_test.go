package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// At 80 columns a ladder whose queues share a long start keeps the end
// that tells each apart (issue 23): cut at the end, its tiers all read
// "├─registration_serv…". Wider, the names are whole.
func TestHomeNamesKeepTheirDistinctTails(t *testing.T) {
	const main = "registration_service"
	tiers := []string{main + ".retry.5s", main + ".retry.30s", main + ".retry.5m"}
	dlq := main + ".dead_letter"
	fc := newFake()
	fc.snap = &broker.Snapshot{Vhost: "/", BrokerVersion: "4.1.0", TakenAt: fixedNow,
		Topology: topology.Vhost{Name: "/", Queues: []topology.Queue{
			queue(main, 1, 0, 1, 1, 1), queue(tiers[0], 2, 0, 0, 0, 0), queue(tiers[1], 3, 0, 0, 0, 0),
			queue(tiers[2], 4, 0, 0, 0, 0), queue(dlq, 5, 0, 0, 0, 0),
		}},
		Ladders: []retry.Ladder{{Main: main, DLQ: dlq, Tiers: []retry.Tier{
			{Queue: tiers[0], TTL: 5 * time.Second}, {Queue: tiers[1], TTL: 30 * time.Second}, {Queue: tiers[2], TTL: 5 * time.Minute}}}},
	}
	h := newHarness(t, fc, Options{NoColor: true}, 80, 24).start()
	if c := h.m.home.cols.name; c >= len(tiers[0]) {
		t.Fatalf("the name column (%d cells) fits the names: nothing to show", c)
	}
	h.mustContain("├─registrat…retry.5s ", "├─registra…retry.30s ", "├─registrat…retry.5m ", "└─regist…dead_letter ", " registration_service ")
	var cells []string
	for _, line := range strings.Split(h.plain(), "\n") {
		for _, glyph := range []string{"├─", "└─"} {
			if i := strings.Index(line, glyph); i >= 0 {
				cells = append(cells, strings.Fields(line[i:])[0])
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range cells {
		if seen[c] {
			t.Errorf("two rows read %q: %q", c, cells)
		}
		seen[c] = true
	}
	if len(cells) != 4 {
		t.Errorf("rows %q", cells)
	}
	w := newHarness(t, fc, Options{NoColor: true}, 160, 48).start()
	w.mustContain(tiers[0], tiers[1], tiers[2], dlq)
}
