package rabbit

import (
	"testing"
	"time"
)

func TestArrivedFromDepthAndRemovals(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	m := &Management{}
	poll := func(at time.Duration, c queueCounters) {
		m.remember(map[string]queueCounters{"q": c}, t0.Add(at))
	}
	if _, ok := arrived(m.polls, "q", queueCounters{messages: 5}, t0); ok {
		t.Fatal("arrivals known without an earlier poll")
	}
	// A DLQ: 40 more messages in 2 s, nothing removed: 20/s from the second poll on.
	poll(0, queueCounters{messages: 100, removedKnown: true})
	if in, ok := arrived(m.polls, "q", queueCounters{messages: 140, removedKnown: true}, t0.Add(2*time.Second)); !ok || in != 20 {
		t.Fatalf("in = %v %v, want 20", in, ok)
	}
	// A consumed queue, measured from the oldest poll while none is
	// inflowWindow old: depth 100 → 130 while 100 were acked in 4 s.
	poll(2*time.Second, queueCounters{messages: 140, removed: 30, removedKnown: true})
	if in, ok := arrived(m.polls, "q", queueCounters{messages: 130, removed: 100, removedKnown: true}, t0.Add(4*time.Second)); !ok || in != 32.5 {
		t.Fatalf("in = %v %v, want (30 + 100) / 4 s = 32.5", in, ok)
	}
}

func TestArrivedWindow(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	m := &Management{}
	// Steps of the stats interval: the depth moves by 100 every 5 s
	// (20/s), polls every 2 s see steps of 0 or 100.
	depth := func(at time.Duration) int64 { return 100 * int64(at/(5*time.Second)) }
	var got []float64
	for at := time.Duration(0); at <= 40*time.Second; at += 2 * time.Second {
		c := queueCounters{messages: depth(at), removedKnown: true}
		if at >= 12*time.Second {
			in, ok := arrived(m.polls, "q", c, t0.Add(at))
			if !ok {
				t.Fatalf("at %v: unknown", at)
			}
			got = append(got, in)
		}
		m.remember(map[string]queueCounters{"q": c}, t0.Add(at))
	}
	// Over 10 s or more (10 or 12 s) a step more or less is at most a
	// third off, never the 0 or 50/s a 2 s delta swings between.
	for _, in := range got {
		if in < 13 || in > 27 {
			t.Fatalf("arrivals over the window swing: %v", got)
		}
	}
	// Only the polls within the window and the newest one older are kept.
	if n := len(m.polls); n > 7 {
		t.Fatalf("%d polls kept", n)
	}
	if old := t0.Add(40 * time.Second).Sub(m.polls[0].at); old < inflowWindow || old > inflowWindow+2*time.Second {
		t.Fatalf("oldest poll kept is %v old", old)
	}
}

func TestArrivedIsALowerBound(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	m := &Management{}
	m.remember(map[string]queueCounters{"q": {messages: 500, removed: 10, removedKnown: true}}, t0)
	now := t0.Add(10 * time.Second)
	// A purge: the depth falls without removals: not negative.
	if in, ok := arrived(m.polls, "q", queueCounters{messages: 0, removed: 10, removedKnown: true}, now); !ok || in != 0 {
		t.Fatalf("purged: %v %v", in, ok)
	}
	// Counters from another source (Prometheus after the API): only the depth.
	if in, _ := arrived(m.polls, "q", queueCounters{messages: 520, removed: 900, removedKnown: true, fromProm: true}, now); in != 2 {
		t.Fatalf("mixed sources: %v, want the depth's 2/s", in)
	}
	// Counters reset (a restarted node): only the depth.
	if in, _ := arrived(m.polls, "q", queueCounters{messages: 520, removed: 3, removedKnown: true}, now); in != 2 {
		t.Fatalf("reset: %v, want 2", in)
	}
	// A queue the earlier polls did not see has no arrivals yet.
	if _, ok := arrived(m.polls, "new", queueCounters{messages: 9}, now); ok {
		t.Fatal("arrivals for a queue with no earlier poll")
	}
}

func TestAdaptQueueCountsRemovals(t *testing.T) {
	_, c := adaptQueue(decodeQueue(t, `{"name":"q","messages":3,"consumers":1,"message_stats":{"ack":10,"deliver_get":30,"deliver_no_ack":4,"get_no_ack":2}}`))
	if !c.removedKnown || c.removed != 16 {
		t.Fatalf("%+v", c)
	}
	// Stats on (the row has consumers) and no message_stats: never delivered.
	if _, c := adaptQueue(decodeQueue(t, `{"name":"q","messages":3,"consumers":0}`)); !c.removedKnown || c.removed != 0 {
		t.Fatalf("%+v", c)
	}
	// Stats off: unknown.
	if _, c := adaptQueue(decodeQueue(t, `{"name":"q","messages":3}`)); c.removedKnown {
		t.Fatalf("%+v", c)
	}
}
