package decode

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

var seenAtTest = time.Date(2024, 3, 1, 10, 20, 30, 0, time.UTC)

// decoded is a message with these properties and headers, decoded as a
// peek decodes it.
func decoded(ts *time.Time, h retry.Headers) broker.Message {
	m := broker.Message{Properties: broker.Properties{Timestamp: ts}, Headers: h}
	DecodeMessage(&m, nil, 0, map[string]bool{"q.wait": true, "q": true}, nil)
	return m
}

func xdeath(times ...time.Time) []any {
	var out []any
	for i, t := range times {
		out = append(out, map[string]any{"queue": []string{"q.wait", "q"}[i%2], "reason": "expired", "count": int64(2),
			"exchange": "", "routing-keys": []any{"q"}, "time": t})
	}
	return out
}

// The best time known is the timestamp property, else x-death's earliest
// first death, else the framework's fault time, else nothing.
func TestSeenTime(t *testing.T) {
	ts := seenAtTest.Add(-time.Hour)
	for _, tc := range []struct {
		name string
		ts   *time.Time
		h    retry.Headers
		want time.Time
		from string
	}{
		{"timestamp wins", &ts, retry.Headers{"x-death": xdeath(seenAtTest)}, ts, broker.SeenTimestamp},
		{"x-death: the earliest entry", nil,
			retry.Headers{"x-death": xdeath(seenAtTest, seenAtTest.Add(-5*time.Minute)), "NServiceBus.ExceptionInfo.Message": "db down", "NServiceBus.TimeOfFailure": "2024-03-01 10:20:30:123456 Z"},
			seenAtTest.Add(-5 * time.Minute), broker.SeenXDeath},
		{"NServiceBus.TimeOfFailure", nil,
			retry.Headers{"NServiceBus.ExceptionInfo.Message": "db down", "NServiceBus.TimeOfFailure": "2024-03-01 10:20:30:000000 Z", "NServiceBus.FailedQ": "sales"},
			seenAtTest, broker.SeenErrorTime},
		{"MT-Fault-Timestamp", nil,
			retry.Headers{"MT-Fault-Message": "nope", "MT-Fault-Timestamp": "2024-03-01T10:20:30.0000000Z"},
			seenAtTest, broker.SeenErrorTime},
		{"nothing", nil, retry.Headers{"x-retry-count": int32(2)}, time.Time{}, ""},
	} {
		m := decoded(tc.ts, tc.h)
		if !m.Seen.Equal(tc.want) || m.SeenFrom != tc.from {
			t.Errorf("%s: seen %v from %q, want %v from %q", tc.name, m.Seen, m.SeenFrom, tc.want, tc.from)
		}
		// A message nothing decoded reads the same.
		raw := broker.Message{Properties: m.Properties, Deaths: m.Deaths, Retry: m.Retry}
		if got, from := raw.BestTime(); !got.Equal(tc.want) || from != tc.from {
			t.Errorf("%s: BestTime %v from %q", tc.name, got, from)
		}
	}
}

// seen and seen_from are in a message's JSON when known, and left out when not.
func TestSeenJSON(t *testing.T) {
	b, err := json.Marshal(decoded(nil, retry.Headers{"x-death": xdeath(seenAtTest)}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"seen":"2024-03-01T10:20:30Z","seen_from":"x-death"`) {
		t.Errorf("%s", b)
	}
	b, _ = json.Marshal(decoded(nil, nil))
	if strings.Contains(string(b), `"seen`) {
		t.Errorf("%s", b)
	}
}
