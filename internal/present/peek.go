package present

import (
	"strconv"
	"strings"

	"github.com/ladder-tui/ladder/broker"
)

// PeekQuestion asks before a peek whose cost someone else feels:
// "peek 50 of 1204 in orders? 4 consumers lose them for the moment, all get
// redelivered=true". limit is how many the peek asks for, ready the queue's
// ready depth. queue is written as given: the caller sanitises and fits it.
func PeekQuestion(queue string, limit int, ready int64, c broker.PeekCost) string {
	q := "peek up to " + strconv.Itoa(limit) + " in " + queue + " (none ready now)?"
	if ready > 0 {
		q = "peek " + Count(min(int64(limit), ready)) + " of " + Count(ready) + " in " + queue + "?"
	}
	if cost := PeekCost(c); cost != "" {
		q += " " + cost
	}
	return q
}

// PeekCost says what a peek will cost, before it runs (broker.PeekCostOf
// applies the broker's version rules; PeekSideEffects says the same after
// it): who loses sight of the messages meanwhile, the redelivered flag,
// and the delivery limit the requeue counts toward.
func PeekCost(c broker.PeekCost) string {
	var parts []string
	switch {
	case c.Consumers > 0:
		parts = append(parts, Plural(c.Consumers, "consumer loses", "consumers lose")+" them for the moment")
	case c.ConsumersUnknown:
		parts = append(parts, "its consumers, if any, lose them for the moment")
	}
	if c.Redelivered {
		parts = append(parts, "all get redelivered=true")
	}
	if c.Limited {
		limit := strconv.FormatInt(c.DeliveryLimit, 10)
		if c.DefaultLimit {
			parts = append(parts, "the requeue counts toward the default delivery limit of "+limit)
		} else {
			parts = append(parts, "the requeue counts toward the delivery limit of "+limit)
		}
	}
	return strings.Join(parts, ", ")
}
