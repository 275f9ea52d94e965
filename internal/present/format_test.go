package present

import (
	"math"
	"testing"
	"time"
)

var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestFormatters(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Count(1204), "1204"},
		{Count(123_456), "123k"},
		{Count(12_300_000), "12.3M"},
		{Count(-1), "–"},
		{Rate(0, true), "0"},
		{Rate(12.34, true), "12.3"},
		{Rate(-3, true), "3.0"},
		{Rate(1, false), "–"},
		{Rate(math.NaN(), true), "–"},
		{Dur(850 * time.Millisecond), "850ms"},
		{Dur(4 * time.Second), "4s"},
		{Dur(90 * time.Second), "1m30s"},
		{Dur(2*time.Hour + 5*time.Minute), "2h5m"},
		{Dur(76 * time.Hour), "3d4h"},
		{Approx(143 * time.Second), "2m"},
		{Approx(30 * time.Hour), "30h"},
		{Bytes(512), "512B"},
		{Bytes(1300), "1.3K"},
		{Bytes(34 * 1024), "34K"},
		{Age(fixedNow.Add(-time.Minute), fixedNow), "1m"},
		{Age(time.Time{}, fixedNow), "–"},
		{Age(fixedNow.Add(time.Second), fixedNow), "-1s"},
		{AgeEstimated(fixedNow.Add(-(23*time.Hour + 59*time.Minute)), fixedNow), "~24h"},
		{AgeEstimated(fixedNow.Add(-1000*24*time.Hour), fixedNow), "~1000d"},
		{AgeEstimated(time.Time{}, fixedNow), "–"},
		{AgeEstimated(fixedNow.Add(time.Minute), fixedNow), "~-1m"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
