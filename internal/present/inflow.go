package present

import "github.com/ladder-tui/ladder/retry/topology"

// Inflow writes a queue's inflow (topology.Rates.In) as Rate does, marked "~"
// when derived (from its depth, or depth ÷ TTL) rather than counted
// publishes: "12.5", "~4.1", NoValue when unknown.
func Inflow(r topology.Rates) string {
	if !r.InKnown {
		return NoValue
	}
	s := Rate(r.In, true)
	if r.InSource != topology.InFromPublish {
		s = "~" + s
	}
	return s
}

// InflowFrom says in words where a derived inflow comes from; "" for
// counted publishes or an unknown inflow.
func InflowFrom(r topology.Rates) string {
	if !r.InKnown {
		return ""
	}
	switch r.InSource {
	case topology.InFromDepth:
		return "from its depth (dead-lettered arrivals are not counted as publishes)"
	case topology.InFromTTL:
		return "depth ÷ TTL (what arrived within the TTL)"
	}
	return ""
}
