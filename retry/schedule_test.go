package retry

import (
	"encoding/json"
	"testing"
	"time"
)

func TestScheduleGoSeedOnItsLadder(t *testing.T) {
	s, err := Schedule(polGo, 4, ladderGoSeed())
	if err != nil {
		t.Fatal(err)
	}
	want := []ScheduledAttempt{
		{Attempt: 1, Delay: 5 * time.Second, Min: 5 * time.Second, Max: 5 * time.Second, Tier: "orders.wait.5s", Match: TierExact},
		{Attempt: 2, Delay: 25 * time.Second, Min: 25 * time.Second, Max: 25 * time.Second, Tier: "orders.wait.30s", Match: TierLonger},
		{Attempt: 3, Delay: 125 * time.Second, Min: 125 * time.Second, Max: 125 * time.Second, Tier: "orders.wait.5m", Match: TierLonger},
		{Attempt: 4, Delay: 625 * time.Second, Min: 625 * time.Second, Max: 625 * time.Second},
	}
	if len(s.Attempts) != len(want) {
		t.Fatalf("got %d attempts, want %d", len(s.Attempts), len(want))
	}
	for i := range want {
		if s.Attempts[i] != want[i] {
			t.Errorf("attempt %d: got %+v, want %+v", i+1, s.Attempts[i], want[i])
		}
	}
}

func TestScheduleJSON(t *testing.T) {
	s, err := Schedule(polGo, 2, ladderGoSeed())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"attempts":[{"attempt":1,"delay_ms":5000,"min_ms":5000,"max_ms":5000,"tier":"orders.wait.5s"},` +
		`{"attempt":2,"delay_ms":25000,"min_ms":25000,"max_ms":25000,"tier":"orders.wait.30s"}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}

	// No ladder: tier is null. Python seed shows its jitter band.
	s, _ = Schedule(polPython, 1, nil)
	b, _ = json.Marshal(s)
	want = `{"attempts":[{"attempt":1,"delay_ms":1000,"min_ms":1000,"max_ms":1100,"tier":null}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}

	s, _ = Schedule(polGo, 0, nil)
	b, _ = json.Marshal(s)
	if string(b) != `{"attempts":[]}` {
		t.Errorf("zero attempts should be an empty list, got %s", b)
	}
}

func TestScheduleErrors(t *testing.T) {
	if _, err := Schedule(Policy{Backoff: "cubic"}, 3, nil); err == nil || err.Error() != `retry: schedule: policy: backoff "cubic" is unknown` {
		t.Errorf("invalid policy should fail with context, got %v", err)
	}
	if _, err := Schedule(polGo, -1, nil); err == nil {
		t.Error("negative attempts should fail")
	}
}

func TestFormatDelay(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                       "0s",
		1500 * time.Millisecond: "1.5s",
		250 * time.Millisecond:  "250ms",
		5 * time.Minute:         "5m",
		time.Hour:               "1h",
		90 * time.Minute:        "1h30m",
		125 * time.Second:       "2m5s",
		time.Hour + time.Second: "1h0m1s",
	} {
		if got := FormatDelay(d); got != want {
			t.Errorf("FormatDelay(%v) = %q, want %q", time.Duration(d), got, want)
		}
	}
}
