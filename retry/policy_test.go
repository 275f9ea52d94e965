package retry

import (
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// Seed policies, as documented on Policy.
var (
	polGo        = Policy{Backoff: BackoffExponential, Base: 5 * time.Second, Factor: 5}
	polPHPLinear = Policy{Backoff: BackoffLinear, Base: 60 * time.Second}
	polPHPExp    = Policy{Backoff: BackoffExponential, Base: 60 * time.Second, Factor: 2}
	polPython    = Policy{Backoff: BackoffExponential, Base: time.Second, Factor: 2, Cap: 300 * time.Second, Jitter: JitterProportional}
)

func TestNominalSeedFormulas(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		p    Policy
		want []time.Duration // attempts 1, 2, 3…
	}{
		// Go seed: math.Pow(5, retryCount) s after the increment.
		{"go 5^n", polGo, []time.Duration{5 * s, 25 * s, 125 * s}},
		// PHP seed: $attempt * 60.
		{"php linear", polPHPLinear, []time.Duration{60 * s, 120 * s, 180 * s, 240 * s}},
		// PHP seed: 60 * (2 ** ($attempt - 1)).
		{"php exponential", polPHPExp, []time.Duration{60 * s, 120 * s, 240 * s, 480 * s}},
		// Python seed: min(1 * 2**retry_count, 300) with retry_count = attempt-1.
		{"python capped", polPython, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 64 * s, 128 * s, 256 * s, 300 * s, 300 * s}},
		{"fixed", Policy{Backoff: BackoffFixed, Base: 7 * s}, []time.Duration{7 * s, 7 * s, 7 * s}},
		{"factor 0 means 2", Policy{Backoff: BackoffExponential, Base: s}, []time.Duration{s, 2 * s, 4 * s}},
		{"linear capped", Policy{Backoff: BackoffLinear, Base: 10 * s, Cap: 25 * s}, []time.Duration{10 * s, 20 * s, 25 * s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.want {
				if got := tt.p.Nominal(i + 1); got != want {
					t.Errorf("attempt %d: got %v, want %v", i+1, got, want)
				}
			}
		})
	}
}

func TestNominalEdges(t *testing.T) {
	if got := polGo.Nominal(0); got != 5*time.Second {
		t.Errorf("attempt 0 should count as 1, got %v", got)
	}
	if got := polGo.Nominal(-3); got != 5*time.Second {
		t.Errorf("attempt -3 should count as 1, got %v", got)
	}
	if got := polGo.Nominal(1000); got != time.Duration(math.MaxInt64) {
		t.Errorf("huge exponent should saturate, got %v", got)
	}
	if got := polPython.Nominal(1000); got != 300*time.Second {
		t.Errorf("huge exponent should be capped, got %v", got)
	}
	if got := (Policy{Backoff: BackoffLinear, Base: time.Hour}).Nominal(math.MaxInt); got != time.Duration(math.MaxInt64) {
		t.Errorf("linear overflow should saturate, got %v", got)
	}
}

func TestBand(t *testing.T) {
	d := 10 * time.Second
	base := Policy{Backoff: BackoffFixed, Base: d}
	with := func(j Jitter) Policy { p := base; p.Jitter = j; return p }
	tests := []struct {
		name   string
		p      Policy
		att    int
		lo, hi time.Duration
	}{
		{"none", with(JitterNone), 1, d, d},
		{"empty is none", with(""), 1, d, d},
		{"full", with(JitterFull), 1, 0, d},
		{"equal", with(JitterEqual), 1, d / 2, d},
		{"proportional", with(JitterProportional), 1, d, 11 * time.Second},
		{"decorrelated 1", with(JitterDecorrelated), 1, d, 30 * time.Second},
		{"decorrelated 2", with(JitterDecorrelated), 2, d, 90 * time.Second},
		{"decorrelated capped", Policy{Backoff: BackoffFixed, Base: d, Cap: 45 * time.Second, Jitter: JitterDecorrelated}, 3, d, 45 * time.Second},
		// Python seed caps first, then adds up to 10 %.
		{"python attempt 10", polPython, 10, 300 * time.Second, 330 * time.Second},
	}
	for _, tt := range tests {
		lo, hi := tt.p.band(tt.att)
		if lo != tt.lo || hi != tt.hi {
			t.Errorf("%s: band [%v, %v], want [%v, %v]", tt.name, lo, hi, tt.lo, tt.hi)
		}
	}
}

// edgeRand always draws the smallest or the largest value and records n.
type edgeRand struct {
	top   bool
	lastN int64
}

func (r *edgeRand) Int63n(n int64) int64 {
	r.lastN = n
	if r.top {
		return n - 1
	}
	return 0
}

func TestDelayJitterEdges(t *testing.T) {
	d := 5 * time.Second
	mk := func(j Jitter) Policy { return Policy{Backoff: BackoffFixed, Base: d, Jitter: j} }
	tests := []struct {
		name   string
		p      Policy
		prev   time.Duration
		lo, hi time.Duration
	}{
		{"none", mk(JitterNone), 0, d, d},
		{"full", mk(JitterFull), 0, 0, d},
		{"equal", mk(JitterEqual), 0, 2500 * time.Millisecond, d},
		{"proportional", mk(JitterProportional), 0, d, 5500 * time.Millisecond},
		{"decorrelated no prev", mk(JitterDecorrelated), 0, d, 15 * time.Second},
		{"decorrelated prev 20s", mk(JitterDecorrelated), 20 * time.Second, d, 60 * time.Second},
		{"decorrelated capped", Policy{Backoff: BackoffFixed, Base: d, Cap: 40 * time.Second, Jitter: JitterDecorrelated}, 20 * time.Second, d, 40 * time.Second},
		{"decorrelated tiny prev", mk(JitterDecorrelated), time.Millisecond, d, d},
	}
	for _, tt := range tests {
		if got := tt.p.Delay(1, tt.prev, &edgeRand{}); got != tt.lo {
			t.Errorf("%s: lowest draw %v, want %v", tt.name, got, tt.lo)
		}
		if got := tt.p.Delay(1, tt.prev, &edgeRand{top: true}); got != tt.hi {
			t.Errorf("%s: highest draw %v, want %v", tt.name, got, tt.hi)
		}
	}
	// Draws are whole milliseconds: full jitter over 5s has 5001 outcomes.
	r := &edgeRand{}
	mk(JitterFull).Delay(1, 0, r)
	if r.lastN != 5001 {
		t.Errorf("full jitter over 5s drew from %d outcomes, want 5001", r.lastN)
	}
}

func TestDelayStaysInBand(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	for _, j := range []Jitter{JitterNone, JitterFull, JitterEqual, JitterProportional, JitterDecorrelated} {
		p := Policy{Backoff: BackoffExponential, Base: 1500 * time.Millisecond, Factor: 3, Cap: time.Minute, Jitter: j}
		for trial := range 200 {
			var prev time.Duration // each trial is one message's chain of retries
			for attempt := 1; attempt <= 8; attempt++ {
				lo, hi := p.band(attempt)
				var got time.Duration
				if trial%2 == 0 {
					got = p.Delay(attempt, prev, nil) // the package's own source
				} else {
					got = p.Delay(attempt, prev, rnd)
				}
				if got < lo || got > hi {
					t.Fatalf("%s attempt %d: %v outside [%v, %v]", j, attempt, got, lo, hi)
				}
				if (got-lo)%time.Millisecond != 0 {
					t.Fatalf("%s attempt %d: %v is not lo + whole ms", j, attempt, got)
				}
				prev = got
			}
		}
	}
}

func TestParseBackoffJitter(t *testing.T) {
	for in, want := range map[string]Backoff{"fixed": BackoffFixed, "Linear": BackoffLinear, " EXPONENTIAL ": BackoffExponential} {
		if got, err := ParseBackoff(in); err != nil || got != want {
			t.Errorf("ParseBackoff(%q) = %q, %v", in, got, err)
		}
	}
	for in, want := range map[string]Jitter{"none": JitterNone, "full": JitterFull, "Equal": JitterEqual, "decorrelated": JitterDecorrelated, "proportional": JitterProportional} {
		if got, err := ParseJitter(in); err != nil || got != want {
			t.Errorf("ParseJitter(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseBackoff("expo"); err == nil || !strings.Contains(err.Error(), `"expo"`) {
		t.Errorf("ParseBackoff(expo) error %v should name the value", err)
	}
	if _, err := ParseJitter("half"); err == nil || !strings.Contains(err.Error(), `"half"`) {
		t.Errorf("ParseJitter(half) error %v should name the value", err)
	}
	if _, err := ParseJitter(""); err == nil {
		t.Error("ParseJitter(\"\") should fail")
	}
}

func TestValidate(t *testing.T) {
	ok := []Policy{polGo, polPHPLinear, polPHPExp, polPython, {Backoff: BackoffFixed}}
	for _, p := range ok {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	bad := map[string]Policy{
		"no backoff":           {Base: time.Second},
		"unknown backoff":      {Backoff: "cubic", Base: time.Second},
		"unknown jitter":       {Backoff: BackoffFixed, Base: time.Second, Jitter: "lots"},
		"negative base":        {Backoff: BackoffFixed, Base: -time.Second},
		"negative cap":         {Backoff: BackoffFixed, Base: time.Second, Cap: -1},
		"shrinking factor":     {Backoff: BackoffExponential, Base: time.Second, Factor: 0.5},
		"NaN factor":           {Backoff: BackoffExponential, Base: time.Second, Factor: math.NaN()},
		"decorrelated no base": {Backoff: BackoffFixed, Jitter: JitterDecorrelated},
	}
	for name, p := range bad {
		if err := p.Validate(); err == nil || !strings.HasPrefix(err.Error(), "retry: policy: ") {
			t.Errorf("%s: want a retry: policy: error, got %v", name, err)
		}
	}
}
