package usecase

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/retry"
)

var seenAtTest = time.Date(2024, 3, 1, 10, 20, 30, 0, time.UTC)

// decoded is a message with these properties and headers, decoded as a
// peek decodes it.
func decoded(ts *time.Time, h retry.Headers) broker.Message {
	m := broker.Message{Properties: broker.Properties{Timestamp: ts}, Headers: h}
	decode.DecodeMessage(&m, nil, 0, map[string]bool{"q.wait": true, "q": true}, nil)
	return m
}

// A group's FIRST/LAST are one kind of time (issue 32): when its messages
// reached the queue where most say (a framework's fault time, here),
// never a span across kinds; the group says which and how many had one.
func TestGroupTimesAreOneKind(t *testing.T) {
	ts := seenAtTest.Add(-2 * time.Hour)
	ms := []broker.Message{
		decoded(nil, retry.Headers{"MT-Fault-Message": "nope", "MT-Fault-Timestamp": "2024-03-01T10:20:30.0000000Z"}),
		decoded(nil, retry.Headers{"MT-Fault-Message": "nope", "MT-Fault-Timestamp": "2024-03-01T09:20:30.0000000Z"}),
		decoded(&ts, retry.Headers{"MT-Fault-Message": "nope"}),
		decoded(nil, retry.Headers{"MT-Fault-Message": "nope"}), // nothing known: counted, not timed
	}
	gs := GroupMessages(ms, GroupErrorText)
	if len(gs) != 1 || gs[0].Count != 4 {
		t.Fatalf("%+v", gs)
	}
	g := gs[0]
	if !g.FirstSeen.Equal(seenAtTest.Add(-time.Hour)) || !g.LastSeen.Equal(seenAtTest) || g.Times != GroupTimeReached || g.Timed != 2 {
		t.Errorf("first %v last %v (%s, %d timed)", g.FirstSeen, g.LastSeen, g.Times, g.Timed)
	}
	// Every message published with a timestamp: the published span.
	for i := range ms {
		ms[i] = decoded(&ts, retry.Headers{"MT-Fault-Message": "nope"})
	}
	if g := GroupMessages(ms, GroupErrorText)[0]; !g.FirstSeen.Equal(ts) || g.Times != GroupTimePublished || g.Timed != 4 {
		t.Errorf("first %v (%s, %d timed), want %v published", g.FirstSeen, g.Times, g.Timed, ts)
	}
}
