package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// A per-message TTL expires only at the head: B (500 ms) waits behind A
// (3 s) and leaves with it, as seen on a real broker.
func TestPerMessageTTLBlocksBehindHead(t *testing.T) {
	s := quiet(t)
	s.testDeclare(t, "hol.wait", map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "hol.out"})
	s.testDeclare(t, "hol.out", nil)
	s.testPublish(t, "", "hol.wait", "A", "3000", nil)
	s.testPublish(t, "", "hol.wait", "B", "500", nil)

	s.Advance(300 * time.Millisecond)
	ms := peek(t, s, "hol.wait")
	if got := ids(ms); !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("after 300ms hol.wait holds %v, want [A B]", got)
	}
	if ms[1].HoL == nil || !ms[1].HoL.Blocked || ms[1].HoL.BlockedBy != 0 {
		t.Errorf("B's HoL mark = %+v, want blocked by position 0", ms[1].HoL)
	}
	s.Advance(700 * time.Millisecond)
	if d := depth(t, s, "hol.wait"); d != 2 {
		t.Fatalf("after 1s hol.wait holds %d messages, want 2: B is blocked behind A", d)
	}
	if d := depth(t, s, "hol.out"); d != 0 {
		t.Fatalf("after 1s hol.out holds %d messages, want 0", d)
	}
	s.Advance(2 * time.Second)
	if d := depth(t, s, "hol.wait"); d != 0 {
		t.Fatalf("after 3s hol.wait holds %d messages, want 0", d)
	}
	out := peek(t, s, "hol.out")
	if got := ids(out); !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("hol.out holds %v, want [A B]", got)
	}
	b := out[1]
	if b.Properties.Expiration != "" {
		t.Errorf("dead-lettered B still has expiration %q", b.Properties.Expiration)
	}
	if len(b.Deaths) != 1 {
		t.Fatalf("B deaths = %+v, want one", b.Deaths)
	}
	d := b.Deaths[0]
	if d.Reason != retry.ReasonExpired || d.Queue != "hol.wait" || !d.HasOriginalExpiration || d.OriginalExpiration != 500*time.Millisecond {
		t.Errorf("B death = %+v, want expired in hol.wait with original-expiration 500ms", d)
	}
	if oe := b.Headers["x-death"].([]any)[0].(map[string]any)["original-expiration"]; oe != "500" {
		t.Errorf("original-expiration = %#v, want the string \"500\"", oe)
	}
	if b.Exchange != "" || b.RoutingKey != "hol.out" {
		t.Errorf("B arrived via %q/%q, want the default exchange with the dead-letter routing key", b.Exchange, b.RoutingKey)
	}
}

// Dying twice for the same {queue, reason} counts 2 in one entry moved to
// the front; x-first-death-* stay those of the first death.
func TestXDeathRepeatIncrementsOneEntry(t *testing.T) {
	s := quiet(t)
	s.testDeclare(t, "loop.wait", map[string]any{"x-message-ttl": int64(1000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "loop.work"})
	s.testDeclare(t, "loop.work", map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "loop.wait"})
	s.testPublish(t, "", "loop.wait", "m", "", nil)
	s.Advance(time.Second) // expired in loop.wait → loop.work
	first := peek(t, s, "loop.work")[0].Deaths[0].Time
	s.Advance(5 * time.Second)
	s.testReject(t, "loop.work") // → loop.wait
	s.Advance(time.Second)       // expired again → loop.work

	ms := peek(t, s, "loop.work")
	if len(ms) != 1 {
		t.Fatalf("loop.work holds %d messages, want 1", len(ms))
	}
	m := ms[0]
	xd := m.Headers["x-death"].([]any)
	if len(xd) != 2 {
		t.Fatalf("x-death has %d entries, want 2: %v", len(xd), xd)
	}
	e0 := xd[0].(map[string]any)
	if e0["queue"] != "loop.wait" || e0["reason"] != "expired" || e0["count"] != int64(2) {
		t.Errorf("front entry = %v, want loop.wait expired count int64(2)", e0)
	}
	if got := e0["time"].(time.Time); !got.Equal(first) {
		t.Errorf("repeated entry's time = %v, want the first death's %v", got, first)
	}
	if e1 := xd[1].(map[string]any); e1["queue"] != "loop.work" || e1["reason"] != "rejected" || e1["count"] != int64(1) {
		t.Errorf("second entry = %v, want loop.work rejected 1", e1)
	}
	if keys := e0["routing-keys"].([]any); len(keys) != 1 || keys[0] != "loop.wait" {
		t.Errorf("routing-keys = %v", keys)
	}
	for k, want := range map[string]string{
		"x-first-death-queue": "loop.wait", "x-first-death-reason": "expired", "x-first-death-exchange": "",
		"x-last-death-queue": "loop.wait", "x-last-death-reason": "expired",
	} {
		if m.Headers[k] != want {
			t.Errorf("%s = %#v, want %q", k, m.Headers[k], want)
		}
	}
	if m.Deaths[0].Count != 2 {
		t.Errorf("decoded count = %d", m.Deaths[0].Count)
	}
}

// A dead letter that would come back to a queue with no rejection on the
// way is dropped as a cycle, as the broker does.
func TestAutomaticDeadLetterCycleIsDropped(t *testing.T) {
	s := quiet(t)
	s.testDeclare(t, "self", map[string]any{"x-message-ttl": int64(100), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "self"})
	s.testPublish(t, "", "self", "m", "", nil)
	s.Advance(time.Second)
	if d := depth(t, s, "self"); d != 0 {
		t.Fatalf("self holds %d messages, want the cycle dropped", d)
	}
	if st := s.Stats(); st.CycleDrops != 1 {
		t.Errorf("CycleDrops = %d, want 1", st.CycleDrops)
	}
}

// The Python seed's tier returns through the default exchange to "main",
// which does not exist: its dead letters vanish (counted).
func TestUnroutableDeadLetterIsDropped(t *testing.T) {
	s := quiet(t)
	s.testPublish(t, "", NotifyRetryQ, "n", "", nil)
	s.Advance(59 * time.Second)
	if d := depth(t, s, NotifyRetryQ); d != 1 {
		t.Fatalf("before its TTL the message must wait, depth %d", d)
	}
	s.Advance(time.Second)
	if d := depth(t, s, NotifyRetryQ); d != 0 {
		t.Fatalf("after its TTL the message must leave, depth %d", d)
	}
	if st := s.Stats(); st.DeadLetterDrops != 1 || st.DeadLettered != 0 {
		t.Errorf("stats = %+v, want one dead-letter drop", st)
	}
}

// Without a dead-letter exchange an expired message is discarded.
func TestExpiredWithoutDLXIsDiscarded(t *testing.T) {
	s := quiet(t)
	s.testPublish(t, "", OrdersDLQ, "m", "1000", nil)
	s.Advance(time.Second)
	if d := depth(t, s, OrdersDLQ); d != 0 {
		t.Fatalf("depth %d, want the expired message gone", d)
	}
	if st := s.Stats(); st.Discarded != 1 {
		t.Errorf("Discarded = %d, want 1", st.Discarded)
	}
}
