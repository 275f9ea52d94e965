package ui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
)

// The poll is re-armed after the interval the snapshot asks for (a big
// vhost is read less often), unless --refresh was given; home's summary
// says how often when it is not the base 2 s.
func TestRefreshFollowsTheSnapshotUnlessGiven(t *testing.T) {
	for _, tc := range []struct {
		given, hint, want time.Duration
		says              string
	}{
		{0, 0, broker.BaseRefresh, ""},
		{0, 10 * time.Second, 10 * time.Second, "refresh every 10s"},
		{5 * time.Second, 10 * time.Second, 5 * time.Second, ""},
	} {
		fc := newFake()
		fc.snap.Refresh = tc.hint
		var ticks []time.Duration
		h := newHarness(t, fc, Options{Refresh: tc.given}, 160, 48)
		h.m.c.tick = func(d time.Duration, _ func(time.Time) tea.Msg) tea.Cmd {
			ticks = append(ticks, d)
			return nil
		}
		h.start()
		if len(ticks) != 1 || ticks[0] != tc.want {
			t.Errorf("--refresh %v, snapshot %v: ticks %v, want one of %v", tc.given, tc.hint, ticks, tc.want)
		}
		if tc.says != "" {
			h.mustContain(tc.says)
		} else {
			h.mustNotContain("refresh every")
		}
	}
}
