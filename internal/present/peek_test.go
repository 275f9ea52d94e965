package present

import (
	"testing"

	"github.com/ladder-tui/ladder/broker"
)

func TestPeekQuestion(t *testing.T) {
	for _, tc := range []struct {
		limit int
		ready int64
		cost  broker.PeekCost
		want  string
	}{
		{50, 14302, broker.PeekCost{Consumers: 3, Redelivered: true},
			"peek 50 of 14302 in q? 3 consumers lose them for the moment, all get redelivered=true"},
		{1000, 12, broker.PeekCost{Consumers: 1, Redelivered: true},
			"peek 12 of 12 in q? 1 consumer loses them for the moment, all get redelivered=true"},
		{100, 0, broker.PeekCost{ConsumersUnknown: true, Redelivered: true},
			"peek up to 100 in q (none ready now)? its consumers, if any, lose them for the moment, all get redelivered=true"},
		{20, 7, broker.PeekCost{Redelivered: true, Counted: true, Limited: true, DeliveryLimit: 20, DefaultLimit: true},
			"peek 7 of 7 in q? all get redelivered=true, each counts a delivery toward the default delivery limit of 20 (one delivered 20 times already is dead-lettered; how near they are cannot be seen without a delivery)"},
		{20, 7, broker.PeekCost{Consumers: 2, Redelivered: true, Counted: true, Limited: true, DeliveryLimit: 5},
			"peek 7 of 7 in q? 2 consumers lose them for the moment, all get redelivered=true, each counts a delivery toward the delivery limit of 5 (one delivered 5 times already is dead-lettered; how near they are cannot be seen without a delivery)"},
		{20, 7, broker.PeekCost{Consumers: 1, Redelivered: true, Counted: true},
			"peek 7 of 7 in q? 1 consumer loses them for the moment, all get redelivered=true, each counts a delivery (x-delivery-count +1)"},
		{20, 7, broker.PeekCost{Consumers: 1, Redelivered: true, Acquired: true},
			"peek 7 of 7 in q? 1 consumer loses them for the moment, all get redelivered=true, x-acquired-count +1, no delivery counted"},
	} {
		if got := PeekQuestion("q", tc.limit, tc.ready, tc.cost); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
