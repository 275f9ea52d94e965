package broker

import (
	"testing"

	"github.com/ladder-tui/ladder/retry"
)

// The cost told before a peek follows the guard's version rules: a quorum
// queue's own limit on any version, from 4.0 a default of 20, none when
// the limit is disabled; streams cost nothing.
func TestPeekCostOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		q       retry.Queue
		version string
		want    PeekCost
		felt    bool
	}{
		{"classic unconsumed", retry.Queue{Type: retry.QueueClassic}, "4.1.0", PeekCost{Redelivered: true}, false},
		{"classic consumed", retry.Queue{Type: retry.QueueClassic, Consumers: 3}, "4.1.0", PeekCost{Consumers: 3, Redelivered: true}, true},
		{"unknown consumers", retry.Queue{Type: retry.QueueClassic, ConsumersUnknown: true}, "3.13.7", PeekCost{ConsumersUnknown: true, Redelivered: true}, true},
		{"quorum 4 default", retry.Queue{Type: retry.QueueQuorum}, "4.2.1", PeekCost{Redelivered: true, Limited: true, DeliveryLimit: 20, DefaultLimit: true}, true},
		{"quorum 3 no limit", retry.Queue{Type: retry.QueueQuorum}, "3.13.7", PeekCost{Redelivered: true}, false},
		{"quorum 3 own limit", retry.Queue{Type: retry.QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int64(4)}}, "3.13.7",
			PeekCost{Redelivered: true, Limited: true, DeliveryLimit: 4}, true},
		{"quorum policy limit", retry.Queue{Type: retry.QueueQuorum, Policy: map[string]any{"delivery-limit": int64(9)}}, "4.3.0",
			PeekCost{Redelivered: true, Limited: true, DeliveryLimit: 9}, true},
		{"quorum unlimited", retry.Queue{Type: retry.QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int64(-1)}}, "4.1.0", PeekCost{Redelivered: true}, false},
		{"stream", retry.Queue{Type: retry.QueueStream, Consumers: 5}, "4.1.0", PeekCost{}, false},
	} {
		got := PeekCostOf(tc.q, tc.version)
		if got != tc.want || got.Felt() != tc.felt {
			t.Errorf("%s: %+v (felt %v), want %+v (felt %v)", tc.name, got, got.Felt(), tc.want, tc.felt)
		}
	}
}
