package retry

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// RetrySchedule is what a policy does over a number of attempts.
type RetrySchedule struct {
	Attempts []ScheduledAttempt `json:"attempts"`
}

// ScheduledAttempt is one retry of a schedule.
type ScheduledAttempt struct {
	Attempt int
	// Delay is the nominal delay, within Min and Max, which bound what jitter
	// can produce (decorrelated jitter grows from Base whatever the backoff,
	// so its band can end below the backoff's nominal delay).
	Delay, Min, Max time.Duration
	// Tier is the queue a retry of the nominal delay would wait in, "" when
	// there is no ladder or no tier fits; Match says how it fits.
	Tier  string
	Match TierMatch
}

// MarshalJSON writes durations as integer milliseconds and a missing tier as
// null: {"attempt":1,"delay_ms":5000,"min_ms":5000,"max_ms":5000,"tier":"q"}.
func (a ScheduledAttempt) MarshalJSON() ([]byte, error) {
	var tier *string
	if a.Tier != "" {
		tier = &a.Tier
	}
	return json.Marshal(struct {
		Attempt int     `json:"attempt"`
		DelayMS int64   `json:"delay_ms"`
		MinMS   int64   `json:"min_ms"`
		MaxMS   int64   `json:"max_ms"`
		Tier    *string `json:"tier"`
	}{a.Attempt, a.Delay.Milliseconds(), a.Min.Milliseconds(), a.Max.Milliseconds(), tier})
}

// Schedule lists attempts 1…attempts of p. With a ladder, each attempt names
// the tier its nominal delay would use (see chooseTier).
func Schedule(p Policy, attempts int, l *Ladder) (RetrySchedule, error) {
	if err := p.check(); err != nil {
		return RetrySchedule{}, fmt.Errorf("retry: schedule: policy: %w", err)
	}
	if attempts < 0 {
		return RetrySchedule{}, fmt.Errorf("retry: schedule: attempts %d is negative", attempts)
	}
	s := RetrySchedule{Attempts: make([]ScheduledAttempt, 0, attempts)}
	for n := 1; n <= attempts; n++ {
		a := ScheduledAttempt{Attempt: n}
		a.Min, a.Max = p.band(n)
		a.Delay = min(max(p.Nominal(n), a.Min), a.Max)
		if t, m, ok := chooseTier(l, a.Delay); ok {
			a.Tier, a.Match = t.Queue, m
		}
		s.Attempts = append(s.Attempts, a)
	}
	return s, nil
}

// FormatDelay writes d the way people write delays: 5s, 2m5s, 5m, 1h, 1.5s.
func FormatDelay(d time.Duration) string {
	s := d.String()
	// Duration.String says 5m0s and 1h0m0s; drop the zero tail.
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
