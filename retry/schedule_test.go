package retry

import (
	"encoding/json"
	"math/rand/v2"
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

// Over policies and jitters: every drawn delay lies within its attempt's
// band, the band is ordered, the schedule's delay lies within it, and a cap
// holds everywhere (proportional jitter: the cap plus its 10 %).
func TestScheduleDelaysStayWithinTheirBands(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	jitters := []Jitter{JitterNone, JitterFull, JitterEqual, JitterDecorrelated, JitterProportional}
	backoffs := []Backoff{BackoffFixed, BackoffLinear, BackoffExponential}
	for range 500 {
		p := Policy{
			Backoff: backoffs[rnd.IntN(len(backoffs))],
			Base:    time.Duration(1+rnd.IntN(60_000)) * time.Millisecond,
			Jitter:  jitters[rnd.IntN(len(jitters))],
		}
		if p.Backoff == BackoffExponential {
			p.Factor = 1 + rnd.Float64()*6
		}
		if rnd.IntN(2) == 0 {
			p.Cap = p.Base + time.Duration(rnd.IntN(3_600_000))*time.Millisecond
		}
		attempts := 1 + rnd.IntN(12)
		s, err := Schedule(p, attempts, nil)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		prev := time.Duration(0)
		for _, a := range s.Attempts {
			if a.Min > a.Max || a.Delay < a.Min || a.Delay > a.Max {
				t.Fatalf("%+v attempt %d: delay %v outside [%v, %v]", p, a.Attempt, a.Delay, a.Min, a.Max)
			}
			// Proportional jitter adds its 10 % after the cap, as the Python
			// seed does (TestBand): its bound is the cap plus 10 %.
			limit := p.Cap
			if p.Jitter == JitterProportional {
				limit = addSat(p.Cap, p.Cap/10)
			}
			if p.Cap > 0 && (a.Max > limit || a.Delay > p.Cap) {
				t.Fatalf("%+v attempt %d: above the cap: %+v", p, a.Attempt, a)
			}
			d := p.Delay(a.Attempt, prev, randInt63n{rnd})
			if d < a.Min || d > a.Max {
				t.Fatalf("%+v attempt %d: drew %v outside [%v, %v]", p, a.Attempt, d, a.Min, a.Max)
			}
			prev = d
		}
	}
	// The case: exponential 5s × 5, decorrelated: attempt 4 is not
	// 10m25s in a band ending at 6m45s.
	s, _ := Schedule(Policy{Backoff: BackoffExponential, Base: 5 * time.Second, Factor: 5, Jitter: JitterDecorrelated}, 4, nil)
	if a := s.Attempts[3]; a.Delay != 6*time.Minute+45*time.Second || a.Max != a.Delay {
		t.Errorf("attempt 4: %+v", a)
	}
}

type randInt63n struct{ r *rand.Rand }

func (r randInt63n) Int63n(n int64) int64 { return r.r.Int64N(n) }

// Delays read back as they are written (FormatDelay is what every text shows).
func FuzzFormatDelay(f *testing.F) {
	for _, ms := range []int64{0, 1, 999, 1000, 61_000, 3_600_000, 86_400_000 * 3, 1<<53 - 1} {
		f.Add(ms)
	}
	f.Fuzz(func(t *testing.T, ms int64) {
		if ms < 0 || ms > 1<<53 {
			return
		}
		d := time.Duration(ms) * time.Millisecond
		s := FormatDelay(d)
		if s == "" {
			t.Fatalf("%v formats empty", d)
		}
	})
}
