package present

import (
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// Drain is the DRAIN cell: "~5m" to empty at the net rate, "≤30s" when a
// queue TTL bounds every message's stay, "grow" when filling, NoValue when
// neither draining nor known to fill, "" for an empty queue.
func Drain(d broker.Drain) string {
	switch d.Kind {
	case broker.DrainETA:
		return "~" + Approx(d.In)
	case broker.DrainBound:
		return "≤" + ApproxUp(d.In)
	case broker.DrainGrowing:
		return "grow"
	case broker.DrainUnknown:
		return NoValue
	}
	return ""
}

// ApproxUp is Approx rounded up, for a bound: 80 s is "2m", never "1m".
func ApproxUp(d time.Duration) string {
	// Each unit as long as Approx writes in it: below a minute, an hour,
	// 48 hours, then days.
	for _, u := range []struct{ unit, below time.Duration }{
		{time.Second, time.Minute}, {time.Minute, time.Hour}, {time.Hour, 48 * time.Hour},
	} {
		if up := (d + u.unit - 1).Truncate(u.unit); up < u.below {
			return Approx(up)
		}
	}
	day := 24 * time.Hour
	return Approx((d + day - 1).Truncate(day))
}
