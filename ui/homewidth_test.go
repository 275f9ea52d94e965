package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Home's rows keep their columns whatever a queue name holds (issue 21: a
// soft hyphen or a zero-width character shifted the columns and wrapped a
// row): every cell is measured and fitted by internal/termtext.
func TestHomeRowsKeepTheirWidthWithOddNames(t *testing.T) {
	odd := []string{
		"pay\u00adments.dlq",        // soft hyphen
		"zero\u200bwidth\u200d.dlq", // zero-width space and joiner
		"e\u0301vents",              // combining accent
		"注文.再試行.5s",                 // wide
		"emoji-🐇-queue",
		"bidi-\u202eevil",
		"tab\tand\nnewline",
	}
	fc := newFake()
	for _, n := range odd {
		fc.snap.Topology.Queues = append(fc.snap.Topology.Queues, queue(n, 3, 0, 0, 1, 1))
	}
	fc.snap.Findings = append(fc.snap.Findings, topology.Finding{Code: topology.CodeNoConsumers, Severity: topology.SeverityInfo, Queue: odd[0], Message: "x"})
	for _, w := range []int{80, 160} {
		h := newHarness(t, fc, Options{}, w, 48).start()
		for _, line := range strings.Split(h.plain(), "\n") {
			if got := ansi.StringWidth(line); got > w {
				t.Errorf("%d columns: a line of %d cells: %q", w, got, line)
			}
		}
		for _, n := range odd {
			row := ""
			for _, r := range h.m.home.rows {
				if r.name == n {
					row = ansi.Strip(renderHomeRow(&r, broker.Trend{}, h.m.home.cols, h.m.c.styles, false, false))
				}
			}
			if got := ansi.StringWidth(row); got != w {
				t.Errorf("%d columns: row of %q is %d cells: %q", w, n, got, row)
			}
		}
	}
}
