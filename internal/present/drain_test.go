package present

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

func TestDrainText(t *testing.T) {
	for d, want := range map[broker.Drain]string{
		{Kind: broker.DrainEmpty}:                       "",
		{Kind: broker.DrainETA, In: 2 * time.Minute}:    "~2m",
		{Kind: broker.DrainGrowing}:                     "grow",
		{Kind: broker.DrainUnknown}:                     NoValue,
		{Kind: broker.DrainBound, In: 30 * time.Second}: "≤30s",
		{Kind: broker.DrainBound, In: 80 * time.Second}: "≤2m",
	} {
		if got := Drain(d); got != want {
			t.Errorf("Drain(%+v) = %q, want %q", d, got, want)
		}
	}
}

func TestApproxUpNeverShortens(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second: "30s", 59*time.Second + time.Millisecond: "1m", 80 * time.Second: "2m",
		time.Hour: "1h", 61 * time.Minute: "2h", 47 * time.Hour: "47h", 49 * time.Hour: "3d", 72 * time.Hour: "3d",
	} {
		if got := ApproxUp(d); got != want {
			t.Errorf("ApproxUp(%v) = %q, want %q", d, got, want)
		}
	}
}
