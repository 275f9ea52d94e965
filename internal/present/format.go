// Package present says how ladder's values read as text: counts, rates,
// durations, due times, move targets and routes, plurals. Pure functions of
// (value, now, width), used alike by the commands' tables and the terminal
// UI, so one value never reads two ways. Broker text in the results is not
// sanitised here: callers draw through termtext.
package present

import (
	"math"
	"strconv"
	"time"
)

// NoValue fills a cell whose value is not known.
const NoValue = "–"

// Count writes a count in at most 6 cells: 1204, 12.3k, 4.1M.
func Count(n int64) string {
	switch {
	case n < 0:
		return NoValue
	case n < 100_000:
		return strconv.FormatInt(n, 10)
	case n < 10_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 0, 64) + "k"
	case n < 1e10:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
	}
	return strconv.FormatFloat(float64(n)/1e9, 'f', 0, 64) + "G"
}

// Rate writes messages per second: 0, 0.4, 12.5, 340, 12k.
func Rate(r float64, known bool) string {
	if !known || math.IsNaN(r) || math.IsInf(r, 0) {
		return NoValue
	}
	r = math.Abs(r)
	switch {
	case r == 0:
		return "0"
	case r < 100:
		return strconv.FormatFloat(r, 'f', 1, 64)
	case r < 10_000:
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r/1e3, 'f', 0, 64) + "k"
}

// Dur writes a duration in at most two units: 850ms, 4s, 1m30s, 2h5m, 3d4h.
func Dur(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d == 0:
		return "0s"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d < time.Hour:
		return two(int64(d/time.Minute), "m", int64(d%time.Minute/time.Second), "s")
	case d < 24*time.Hour:
		return two(int64(d/time.Hour), "h", int64(d%time.Hour/time.Minute), "m")
	}
	return two(int64(d/(24*time.Hour)), "d", int64(d%(24*time.Hour)/time.Hour), "h")
}

func two(a int64, au string, b int64, bu string) string {
	s := strconv.FormatInt(a, 10) + au
	if b != 0 {
		s += strconv.FormatInt(b, 10) + bu
	}
	return s
}

// Approx writes a duration in one unit, rounded: 45s, 12m, 5h, 3d.
func Approx(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.FormatInt(int64(d.Round(time.Second)/time.Second), 10) + "s"
	case d < time.Hour:
		return strconv.FormatInt(int64(d.Round(time.Minute)/time.Minute), 10) + "m"
	case d < 48*time.Hour:
		return strconv.FormatInt(int64(d.Round(time.Hour)/time.Hour), 10) + "h"
	}
	return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
}

// Age is how long ago t was, seen at now, in at most 6 cells: seconds
// only below 10 minutes (9m59s, 46m, 2h5m, 3d4h); NoValue when t is unknown.
func Age(t, now time.Time) string {
	if t.IsZero() {
		return NoValue
	}
	if t.After(now) {
		return "-" + Approx(t.Sub(now)) // the publisher's clock runs ahead
	}
	return Short(now.Sub(t))
}

// AgeEstimated is Age for a time that is not the publisher's timestamp
// (an x-death time, a framework's fault time): "~" and rounded coarser
// (~5m, ~3h, ~2d), in at most 6 cells; NoValue when t is unknown.
func AgeEstimated(t, now time.Time) string {
	if t.IsZero() {
		return NoValue
	}
	if t.After(now) {
		return "~-" + Approx(t.Sub(now))
	}
	return "~" + Approx(now.Sub(t))
}

// Short is Dur without seconds from 10 minutes on, where they are
// noise and would not fit a narrow column.
func Short(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	if d >= 10*time.Minute && d < time.Hour {
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return Dur(d)
}

// Bytes writes a size: 512B, 1.2K, 34K, 3.4M.
func Bytes(n int) string {
	f := float64(n)
	switch {
	case n < 1024:
		return strconv.Itoa(n) + "B"
	case n < 10*1024:
		return strconv.FormatFloat(f/1024, 'f', 1, 64) + "K"
	case n < 1024*1024:
		return strconv.FormatFloat(f/1024, 'f', 0, 64) + "K"
	case n < 10*1024*1024:
		return strconv.FormatFloat(f/(1024*1024), 'f', 1, 64) + "M"
	}
	return strconv.FormatFloat(f/(1024*1024), 'f', 0, 64) + "M"
}

// Clock writes a wall-clock time of day for "updated 12:03:04".
func Clock(t time.Time) string {
	if t.IsZero() {
		return NoValue
	}
	return t.Format("15:04:05")
}

// CeilSeconds rounds a countdown up to whole seconds so "in 0s" is never
// shown while time remains.
func CeilSeconds(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return (d + time.Second - 1).Truncate(time.Second)
}

// Consumers is a consumer count, "?" when the broker did not say.
func Consumers(n int, unknown bool) string {
	if unknown {
		return "?"
	}
	return strconv.Itoa(n)
}

// PerMessageTTL labels, in the TTL column of the UI and the CLI alike, a
// wait queue without a queue TTL: its messages carry their own.
const PerMessageTTL = "msg"
