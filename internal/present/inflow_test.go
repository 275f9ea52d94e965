package present

import (
	"testing"

	"github.com/ladder-tui/ladder/retry/topology"
)

func TestInflow(t *testing.T) {
	for _, tc := range []struct {
		r    topology.Rates
		want string
	}{
		{topology.Rates{}, NoValue},
		{topology.Rates{In: 12.5, InKnown: true, InSource: topology.InFromPublish}, "12.5"},
		{topology.Rates{In: 4.13, InKnown: true, InSource: topology.InFromDepth}, "~4.1"},
		{topology.Rates{In: 340, InKnown: true, InSource: topology.InFromTTL}, "~340"},
		{topology.Rates{In: 0, InKnown: true, InSource: topology.InFromDepth}, "~0"},
	} {
		if got := Inflow(tc.r); got != tc.want {
			t.Errorf("Inflow(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}
