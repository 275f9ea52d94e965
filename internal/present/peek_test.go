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
		{20, 7, broker.PeekCost{Redelivered: true, Limited: true, DeliveryLimit: 20, DefaultLimit: true},
			"peek 7 of 7 in q? all get redelivered=true, the requeue counts toward the default delivery limit of 20"},
		{20, 7, broker.PeekCost{Consumers: 2, Redelivered: true, Limited: true, DeliveryLimit: 5},
			"peek 7 of 7 in q? 2 consumers lose them for the moment, all get redelivered=true, the requeue counts toward the delivery limit of 5"},
	} {
		if got := PeekQuestion("q", tc.limit, tc.ready, tc.cost); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
