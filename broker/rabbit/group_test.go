package rabbit_test

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry"
)

// causeMessages decodes brokertest's dead letters as a peek would.
func causeMessages(n int) ([]broker.Message, []brokertest.CauseMessage) {
	src := brokertest.CauseMessages(n, 1, time.Date(2025, 3, 14, 3, 0, 0, 0, time.UTC))
	ms := make([]broker.Message, n)
	for i, c := range src {
		at := c.At
		ms[i] = broker.Message{Position: i, Headers: retry.Headers(c.Headers), Properties: broker.Properties{MessageID: c.ID, Timestamp: &at}}
		decode.DecodeMessage(&ms[i], c.Body, 64, nil, nil)
	}
	return ms, src
}

// 5,000 dead letters of 3 causes, every one with its own ids and values:
// 3 groups by error, each of the exception type that caused it, with its
// count; by error-text (today's exact texts) nearly one group a message.
func TestGroupByErrorIsOneGroupACause(t *testing.T) {
	ms, src := causeMessages(5000)
	want := map[string]int{}
	for _, c := range src {
		want[brokertest.CauseTypes[c.Cause]]++
	}
	gs := usecase.GroupMessages(ms, usecase.GroupError)
	if len(gs) != brokertest.CauseKinds {
		for _, g := range gs[:min(len(gs), 5)] {
			t.Logf("%d %q", g.Count, g.Key)
		}
		t.Fatalf("%d groups by error, want %d", len(gs), brokertest.CauseKinds)
	}
	total := 0
	for _, g := range gs {
		total += g.Count
		if g.Count != want[g.Type] || len(g.Positions) != g.Count || len(g.IDs) != g.Count {
			t.Errorf("group %q of type %q: %d messages, %d positions, %d ids; want %d", g.Key, g.Type, g.Count, len(g.Positions), len(g.IDs), want[g.Type])
		}
		if g.Sample == "" || g.Sample == g.Key || len(g.SampleIDs) != 3 {
			t.Errorf("group %q: sample %q, sample ids %v", g.Key, g.Sample, g.SampleIDs)
		}
		if g.FirstSeen.IsZero() || !g.LastSeen.After(g.FirstSeen) {
			t.Errorf("group %q seen %v … %v", g.Key, g.FirstSeen, g.LastSeen)
		}
	}
	if total != 5000 {
		t.Fatalf("groups hold %d messages", total)
	}
	if n := len(usecase.GroupMessages(ms, usecase.GroupErrorText)); n < 4900 {
		t.Fatalf("by error-text: %d groups, want one a message (nearly)", n)
	}
}

func TestParseGroupBy(t *testing.T) {
	for _, s := range []string{"error", "error-text", "reason", "queue", "origin"} {
		if got, err := usecase.ParseGroupBy(s); err != nil || got != s {
			t.Errorf("ParseGroupBy(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := usecase.ParseGroupBy("cause"); err == nil {
		t.Error("ParseGroupBy(cause) accepted")
	}
}

// A group's times are one kind: two messages, one with a timestamp, one
// with an x-death time only, make no span; the group is timed by the
// kind it prefers among those as many have (published), and says so.
func TestGroupTimes(t *testing.T) {
	t1, t2 := time.Unix(100, 0), time.Unix(200, 0)
	ms := []broker.Message{
		{Properties: broker.Properties{Timestamp: &t2}, Retry: retry.RetryState{LastError: "x 1"}},
		{Deaths: []retry.Death{{Time: t1}}, Retry: retry.RetryState{LastError: "x 2"}},
	}
	gs := usecase.GroupMessages(ms, usecase.GroupError)
	if len(gs) != 1 || !gs[0].FirstSeen.Equal(t2) || !gs[0].LastSeen.Equal(t2) || gs[0].Times != usecase.GroupTimePublished || gs[0].Timed != 1 || gs[0].Sample != "x 1" {
		t.Fatalf("%+v", gs)
	}
}
