package retry

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Backoff is how the nominal delay grows with the attempt number.
type Backoff string

// Backoff kinds.
const (
	BackoffFixed       Backoff = "fixed"       // Base every time
	BackoffLinear      Backoff = "linear"      // Base × attempt
	BackoffExponential Backoff = "exponential" // Base × Factor^(attempt−1)
)

// Jitter is how a nominal delay is randomised so that messages that failed
// together do not all come back together (the thundering herd).
type Jitter string

// Jitter kinds. d is the nominal delay after Cap.
const (
	JitterNone         Jitter = "none"         // d
	JitterFull         Jitter = "full"         // uniform [0, d]
	JitterEqual        Jitter = "equal"        // uniform [d/2, d]
	JitterDecorrelated Jitter = "decorrelated" // min(Cap, uniform [Base, 3 × previous delay])
	JitterProportional Jitter = "proportional" // uniform [d, 1.1 × d], the Python seed's +0–10 %
)

// Policy is a backoff policy. Attempt n is the n-th retry: the first retry is
// attempt 1. That is the Go seed's x-retry-count after its increment, the PHP
// seed's yii-attempt of the run that failed, and the Python seed's
// x-retry-count + 1.
//
// The seeds as policies:
//
//	Go:     {Backoff: exponential, Base: 5s, Factor: 5}            5s, 25s, 125s (5^n s)
//	PHP:    {Backoff: linear, Base: 60s}                            60s, 120s, 180s
//	        {Backoff: exponential, Base: 60s, Factor: 2}            60s, 120s, 240s (60 × 2^(attempt−1))
//	Python: {Backoff: exponential, Base: 1s, Factor: 2, Cap: 300s,
//	         Jitter: proportional}                                  1s, 2s, 4s … 256s, 300s
//
// The Python seed computes base × 2^n with n the x-retry-count read before
// incrementing it (0 on the first failure), so its n is attempt−1 and it
// matches Base × Factor^(attempt−1). It caps before adding jitter, so its
// delays may reach 1.1 × Cap; Policy does the same.
type Policy struct {
	Backoff Backoff
	Base    time.Duration
	// Factor is the exponential growth factor; 0 means 2.
	Factor float64
	// Cap bounds the nominal delay; 0 means no cap.
	Cap time.Duration
	// Jitter defaults to none.
	Jitter Jitter
}

// Rand is the random source jitter draws from; *math/rand.Rand satisfies it.
// Tests pass a fixed source to get deterministic delays.
type Rand interface {
	// Int63n returns a uniform value in [0, n); n > 0.
	Int63n(n int64) int64
}

// ParseBackoff parses a CLI spelling of a backoff kind (case-insensitive).
func ParseBackoff(s string) (Backoff, error) {
	switch b := Backoff(strings.ToLower(strings.TrimSpace(s))); b {
	case BackoffFixed, BackoffLinear, BackoffExponential:
		return b, nil
	}
	return "", fmt.Errorf("retry: unknown backoff %q (want fixed, linear or exponential)", s)
}

// ParseJitter parses a CLI spelling of a jitter kind (case-insensitive).
func ParseJitter(s string) (Jitter, error) {
	switch j := Jitter(strings.ToLower(strings.TrimSpace(s))); j {
	case JitterNone, JitterFull, JitterEqual, JitterDecorrelated, JitterProportional:
		return j, nil
	}
	return "", fmt.Errorf("retry: unknown jitter %q (want none, full, equal, decorrelated or proportional)", s)
}

// Validate reports the first thing wrong with p.
func (p Policy) Validate() error {
	if err := p.check(); err != nil {
		return fmt.Errorf("retry: policy: %w", err)
	}
	return nil
}

// check is Validate without the package prefix, for callers that add their own.
func (p Policy) check() error {
	switch p.Backoff {
	case BackoffFixed, BackoffLinear, BackoffExponential:
	case "":
		return errors.New("no backoff kind")
	default:
		return fmt.Errorf("backoff %q is unknown", p.Backoff)
	}
	switch p.Jitter {
	case "", JitterNone, JitterFull, JitterEqual, JitterProportional:
	case JitterDecorrelated:
		// Decorrelated jitter draws from [Base, 3 × prev]; with no base it
		// would stay at zero forever.
		if p.Base <= 0 {
			return fmt.Errorf("decorrelated jitter needs a positive base, got %v", p.Base)
		}
	default:
		return fmt.Errorf("jitter %q is unknown", p.Jitter)
	}
	if p.Base < 0 {
		return fmt.Errorf("base %v is negative", p.Base)
	}
	if p.Cap < 0 {
		return fmt.Errorf("cap %v is negative", p.Cap)
	}
	if p.Backoff == BackoffExponential && p.Factor != 0 && (p.Factor < 1 || math.IsNaN(p.Factor) || math.IsInf(p.Factor, 0)) {
		return fmt.Errorf("exponential factor %v must be at least 1", p.Factor)
	}
	return nil
}

// Nominal is the delay before attempt, without jitter, after Cap. Attempts
// below 1 count as 1; delays too large for a Duration saturate.
func (p Policy) Nominal(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	var d time.Duration
	switch p.Backoff {
	case BackoffLinear:
		d = mulSat(p.Base, float64(attempt))
	case BackoffExponential:
		f := p.Factor
		if f == 0 {
			f = 2
		}
		d = mulSat(p.Base, math.Pow(f, float64(attempt-1)))
	default:
		d = p.Base
	}
	if p.Cap > 0 && d > p.Cap {
		d = p.Cap
	}
	return d
}

// band is the range jitter can produce for attempt, assuming for decorrelated
// jitter that every earlier draw was the largest possible (the chain starts at
// Base).
func (p Policy) band(attempt int) (lo, hi time.Duration) {
	d := p.Nominal(attempt)
	switch p.Jitter {
	case JitterFull:
		return 0, d
	case JitterEqual:
		return d / 2, d
	case JitterProportional:
		return d, addSat(d, d/10)
	case JitterDecorrelated:
		if attempt < 1 {
			attempt = 1
		}
		lo, hi = p.Base, mulSat(p.Base, math.Pow(3, float64(attempt)))
		if p.Cap > 0 {
			lo, hi = min(lo, p.Cap), min(hi, p.Cap)
		}
		return lo, hi
	}
	return d, d
}

// Delay is the jittered delay before attempt. prev is the previous actual
// delay (decorrelated jitter grows from it; ≤ 0 means none, so Base). A nil
// rnd uses math/rand/v2. Draws are whole milliseconds above the band's lower
// end, the broker's TTL resolution.
func (p Policy) Delay(attempt int, prev time.Duration, rnd Rand) time.Duration {
	if rnd == nil {
		rnd = globalRand{}
	}
	d := p.Nominal(attempt)
	switch p.Jitter {
	case JitterFull:
		return uniform(rnd, 0, d)
	case JitterEqual:
		return uniform(rnd, d/2, d)
	case JitterProportional:
		return uniform(rnd, d, addSat(d, d/10))
	case JitterDecorrelated:
		if prev <= 0 {
			prev = p.Base
		}
		r := uniform(rnd, p.Base, max(p.Base, mulSat(prev, 3)))
		if p.Cap > 0 && r > p.Cap {
			r = p.Cap
		}
		return r
	}
	return d
}

// uniform draws lo + k ms, k uniform, staying within [lo, hi].
func uniform(rnd Rand, lo, hi time.Duration) time.Duration {
	steps := int64((hi - lo) / time.Millisecond)
	if steps <= 0 {
		return lo
	}
	// steps+1 cannot overflow: steps ≤ MaxInt64/1e6.
	return lo + time.Duration(rnd.Int63n(steps+1))*time.Millisecond
}

// mulSat multiplies a duration by f, saturating instead of overflowing.
func mulSat(d time.Duration, f float64) time.Duration {
	x := float64(d) * f
	if math.IsNaN(x) || x >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	if x <= 0 {
		return 0
	}
	return time.Duration(x)
}

func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return time.Duration(math.MaxInt64)
	}
	return a + b
}

type globalRand struct{}

func (globalRand) Int63n(n int64) int64 { return rand.Int64N(n) }
