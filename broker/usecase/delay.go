package usecase

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDelay reads a move's delay as --delay and the TUI's move dialog
// take it: a duration with its unit (500ms, 30s, 5m, 1h30m), 0 for none.
// A bare number is refused, not guessed: TTLs count milliseconds, people
// often seconds, and a wrong guess is a delay a thousand times off.
func ParseDelay(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	d, err := time.ParseDuration(t)
	switch {
	case err == nil && d < 0:
		return 0, fmt.Errorf("delay %q: must not be negative", s)
	case err == nil:
		return d, nil
	}
	if _, nerr := strconv.ParseFloat(t, 64); nerr == nil {
		return 0, fmt.Errorf("delay %q: add a unit (%sms, 30s, 5m)", s, t)
	}
	return 0, fmt.Errorf("delay %q: want a duration with its unit (500ms, 30s, 5m)", s)
}
