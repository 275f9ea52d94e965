package present

import (
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// MessageAge is a message's AGE, the same in the browser and ladder peek:
// how long before at its best time known was (broker.Message.BestTime), in
// at most 6 cells; "~" and rounded coarser (AgeEstimated) when that time
// is not its timestamp property but x-death's or a framework's fault time;
// NoValue when nothing tells.
func MessageAge(m *broker.Message, at time.Time) string {
	seen, from := m.BestTime()
	if from != broker.SeenTimestamp {
		return AgeEstimated(seen, at)
	}
	return Age(seen, at)
}
