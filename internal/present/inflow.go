package present

import "github.com/ladder-tui/ladder/retry"

// Inflow writes a queue's inflow (retry.Rates.In) as Rate does, marked "~"
// when derived (from its depth, or depth ÷ TTL) rather than counted
// publishes: "12.5", "~4.1", NoValue when unknown.
func Inflow(r retry.Rates) string {
	if !r.InKnown {
		return NoValue
	}
	s := Rate(r.In, true)
	if r.InSource != retry.InFromPublish {
		s = "~" + s
	}
	return s
}

// InflowFrom says in words where a derived inflow comes from; "" for
// counted publishes or an unknown inflow.
func InflowFrom(r retry.Rates) string {
	if !r.InKnown {
		return ""
	}
	switch r.InSource {
	case retry.InFromDepth:
		return "from its depth (dead-lettered arrivals are not counted as publishes)"
	case retry.InFromTTL:
		return "depth ÷ TTL (what arrived within the TTL)"
	}
	return ""
}
