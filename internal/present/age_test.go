package present

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// AGE reads the best time known: the timestamp plain, anything else "~".
func TestMessageAge(t *testing.T) {
	at := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	stamp := at.Add(-11 * time.Minute)
	deaths := []retry.Death{{Time: at.Add(-3 * time.Minute)}, {Time: at.Add(-62 * time.Minute)}}
	for _, tc := range []struct {
		name string
		m    broker.Message
		want string
	}{
		{"timestamp", broker.Message{Properties: broker.Properties{Timestamp: &stamp}, Deaths: deaths}, "11m"},
		{"x-death's earliest", broker.Message{Deaths: deaths}, "~1h"},
		{"fault time", broker.Message{Retry: retry.RetryState{LastErrorTime: at.Add(-5 * time.Minute)}}, "~5m"},
		{"decoded", broker.Message{Seen: at.Add(-2 * time.Hour), SeenFrom: broker.SeenXDeath}, "~2h"},
		{"nothing", broker.Message{}, NoValue},
	} {
		if got := MessageAge(&tc.m, at); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
