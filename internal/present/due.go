package present

import (
	"strconv"
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// DueForm is how much room a due time has.
type DueForm int

// Due forms, shortest first.
const (
	// DueCell fits a narrow column: "4s", "late 3m", "never", "due".
	DueCell DueForm = iota
	// DueWide is a wide column or a table: "in 4s", "overdue 3m12s".
	DueWide
	// DueSentence explains: "overdue by 3m12s (TTL 5s); held back by #0 …".
	DueSentence
)

// Due says when a message's TTL runs out, seen at at (the time of the
// peek, never the wall clock: a render is a function of its inputs). A
// message that will never expire says so.
func Due(h *topology.HoLMark, at time.Time, form DueForm) string {
	if h == nil {
		return NoValue
	}
	if form == DueSentence {
		return dueSentence(h, at)
	}
	switch {
	case h.Stuck && form == DueWide:
		return "never due (stuck)"
	case h.Stuck:
		return "stuck"
	case h.NeverDue:
		return "never"
	case h.Overdue > 0:
		if form == DueWide {
			return "overdue " + Short(h.Overdue)
		}
		return "late " + Approx(h.Overdue)
	case h.DueAt.After(at):
		if form == DueWide {
			return "in " + Short(h.DueAt.Sub(at))
		}
		return Short(h.DueAt.Sub(at))
	}
	return "due"
}

// DueOf is a message's due time: its TTL's (Due), else, when no TTL gives
// one (no mark, or never due), the time its framework set (Celery's eta,
// read from the header source), saying "eta".
func DueOf(h *topology.HoLMark, eta time.Time, source string, at time.Time, form DueForm) string {
	if eta.IsZero() || (h != nil && (h.Stuck || !h.NeverDue)) {
		return Due(h, at, form)
	}
	d := eta.Sub(at)
	switch form {
	case DueCell:
		if d < 0 {
			return "eta -" + Approx(-d)
		}
		return "eta " + Approx(d)
	case DueWide:
		if d < 0 {
			return "eta " + Short(-d) + " ago"
		}
		return "eta in " + Short(d)
	}
	when := "in " + Dur(d)
	if d < 0 {
		when = Dur(-d) + " ago"
	}
	return "eta " + eta.UTC().Format(time.RFC3339) + ", " + when + " (the framework's run time, header " + strconv.Quote(source) + "; no TTL applies)"
}

func dueSentence(h *topology.HoLMark, at time.Time) string {
	var s string
	switch {
	case h.Stuck:
		s = "never due (stuck): dead-lettering stripped its expiration and this queue has no TTL"
	case h.NeverDue:
		s = "never: no TTL applies, it waits for a consumer"
	case h.Overdue > 0:
		s = "overdue by " + Dur(h.Overdue) + " (TTL " + retry.FormatDelay(h.TTL) + ")"
	case h.DueAt.After(at):
		s = "in " + Dur(h.DueAt.Sub(at)) + " (TTL " + retry.FormatDelay(h.TTL) + ")"
	default:
		s = "now (TTL " + retry.FormatDelay(h.TTL) + ")"
	}
	if h.Blocked {
		s += "; held back by #" + strconv.Itoa(h.BlockedBy) + " ahead of it (head-of-line blocking)"
	}
	if h.Estimated {
		s += "; enqueue time estimated"
	}
	return s
}

// Blocked flags a message held back by a longer TTL ahead of it: "HoL",
// or with room "HoL←#3"; "" when it is not.
func Blocked(h *topology.HoLMark, wide bool) string {
	if h == nil || !h.Blocked {
		return ""
	}
	if wide && h.BlockedBy >= 0 {
		return "HoL←#" + strconv.Itoa(h.BlockedBy)
	}
	return "HoL"
}
