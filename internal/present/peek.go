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
// the quorum counter it raises and the delivery limit that counts toward.
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
	switch {
	case c.Limited:
		limit := strconv.FormatInt(c.DeliveryLimit, 10)
		which := "the delivery limit of "
		if c.DefaultLimit {
			which = "the default delivery limit of "
		}
		parts = append(parts, "each counts a delivery toward "+which+limit+
			" (one delivered "+limit+" times already is dead-lettered; how near they are cannot be seen without a delivery)")
	case c.Counted:
		parts = append(parts, "each counts a delivery (x-delivery-count +1)")
	case c.Acquired:
		parts = append(parts, "x-acquired-count +1, no delivery counted")
	}
	if c.Releases > 0 {
		parts = append(parts, "it may release at most "+Plural(int(c.Releases), "overdue message", "overdue messages")+
			" to "+c.ReleaseTo+" (only the head expires: messages whose own TTL ran out behind it leave when a read uncovers them)")
	}
	return strings.Join(parts, ", ")
}

// PeekPartial is the line that says a peek's view is not the whole queue
// from its head, and why ("" when it is): another reader held or took
// messages (its positions then count among what was ready to ladder), or
// the peek's limit stopped it. A read that stopped early says so on its
// own line (incomplete), so that reason is left out here.
func PeekPartial(res *broker.PeekResult) string {
	why := res.PartialBesidesStop()
	if len(why) == 0 {
		return ""
	}
	return "partial: " + strings.Join(why, "; ")
}
