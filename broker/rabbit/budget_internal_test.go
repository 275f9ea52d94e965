package rabbit

import (
	"testing"
	"time"
)

func TestAutoRefreshBySize(t *testing.T) {
	for _, tc := range []struct {
		n      int
		steady bool
		want   time.Duration
	}{
		{10, true, 2 * time.Second},
		{500, true, 2 * time.Second},
		{2500, true, 10 * time.Second},
		{100_000, true, time.Minute},
		{100, false, 2 * time.Second},
		{2500, false, 40 * time.Second},
	} {
		if got := AutoRefresh(tc.n, tc.steady); got != tc.want {
			t.Errorf("AutoRefresh(%d, %v) = %v, want %v", tc.n, tc.steady, got, tc.want)
		}
	}
	if FullEvery(100) != TopologyTTL || FullEvery(2500) != 125*time.Second {
		t.Errorf("FullEvery: %v at 100 queues, %v at 2,500", FullEvery(100), FullEvery(2500))
	}
	if BigFor3x(125) || !BigFor3x(126) {
		t.Error("BigFor3x: full reads every 2 s up to 125 queues")
	}
}
