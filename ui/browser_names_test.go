package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/retry"
)

// At 80 columns the browser's LAST DEATH cells keep the ends that tell the
// tiers apart, in the first drawing and after a resize; cut at the end
// they read alike.
func TestBrowserNamesKeepTheirDistinctTails(t *testing.T) {
	fc := newFake()
	p := fixturePeek(3)
	tiers := []string{"registration_service.retry.5s", "registration_service.retry.30s", "registration_service.retry.5m"}
	for i := range p.Messages {
		p.Messages[i].Deaths = []retry.Death{{Queue: tiers[i], Reason: retry.ReasonExpired, Count: 1}}
	}
	fc.peeks["orders.dlq"] = p
	h := newHarness(t, fc, Options{NoColor: true}, 80, 24).start()
	h.send(openQueueMsg{queue: "orders.dlq", confirmed: true})
	h.mustContain("expire…retry.5s ", "expir…retry.30s ", "expire…retry.5m ")
	rows := func() []string {
		var out []string
		for _, r := range h.m.browser.rows {
			out = append(out, r.text)
		}
		return out
	}
	distinct := func(what string, cut func(row string) string) {
		t.Helper()
		seen := map[string]bool{}
		for _, row := range rows() {
			c := cut(row)
			if seen[c] {
				t.Errorf("%s: two rows read %q:\n%s", what, c, strings.Join(rows(), "\n"))
			}
			seen[c] = true
		}
	}
	distinct("death", func(row string) string {
		for _, f := range strings.Fields(row) {
			if strings.HasPrefix(f, "exp") {
				return f
			}
		}
		return ""
	})
	// Wider after a resize: the names are whole.
	h.send(tea.WindowSizeMsg{Width: 200, Height: 40})
	h.mustContain(tiers[0], tiers[1], tiers[2])
}
