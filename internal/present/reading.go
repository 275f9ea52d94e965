package present

import (
	"strconv"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// Reading says how far a browse has read, the same on the command's
// progress line and the terminal UI: "reading the queue… 412 of 1000".
// Want 0 (an empty queue, or not yet known) shows the count alone.
func Reading(p broker.PeekProgress) string {
	s := "reading the queue… " + strconv.Itoa(p.Read)
	if p.Want > 0 {
		s += " of " + strconv.Itoa(p.Want)
	}
	return s
}

// ReadingLine is Reading with the time it has taken and, past a second, the
// rate and what is left: for a progress line.
func ReadingLine(p broker.PeekProgress) string {
	s := Reading(p)
	if p.Elapsed >= minRateTime && p.Read > 0 {
		rate := float64(p.Read) / p.Elapsed.Seconds()
		s += " · " + Rate(rate, true) + " msg/s"
	}
	return s + " · " + Dur(p.Elapsed.Round(100*time.Millisecond))
}
