package retry

import "time"

// TierMatch says how well a tier fits a wanted delay.
type TierMatch string

// Tier matches.
const (
	TierExact  TierMatch = "exact"  // TTL equals the wanted delay
	TierLonger TierMatch = "longer" // the shortest TTL above the wanted delay
)

// chooseTier picks the tier a delay of want should wait in: the tier whose
// TTL is exactly want, else the shortest tier longer than want (waiting a
// little longer is safe, coming back early is not), else none. Tiers with a
// negative (unknown) TTL never match; ties go to the first listed.
func chooseTier(l *Ladder, want time.Duration) (Tier, TierMatch, bool) {
	if l == nil {
		return Tier{}, "", false
	}
	best := -1
	for i, t := range l.Tiers {
		if t.TTL < 0 || t.TTL < want {
			continue
		}
		if t.TTL == want {
			return t, TierExact, true
		}
		if best < 0 || t.TTL < l.Tiers[best].TTL {
			best = i
		}
	}
	if best < 0 {
		return Tier{}, "", false
	}
	return l.Tiers[best], TierLonger, true
}
