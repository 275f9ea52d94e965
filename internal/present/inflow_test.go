package present

import (
	"testing"

	"github.com/ladder-tui/ladder/retry"
)

func TestInflow(t *testing.T) {
	for _, tc := range []struct {
		r    retry.Rates
		want string
	}{
		{retry.Rates{}, NoValue},
		{retry.Rates{In: 12.5, InKnown: true, InSource: retry.InFromPublish}, "12.5"},
		{retry.Rates{In: 4.13, InKnown: true, InSource: retry.InFromDepth}, "~4.1"},
		{retry.Rates{In: 340, InKnown: true, InSource: retry.InFromTTL}, "~340"},
		{retry.Rates{In: 0, InKnown: true, InSource: retry.InFromDepth}, "~0"},
	} {
		if got := Inflow(tc.r); got != tc.want {
			t.Errorf("Inflow(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}
