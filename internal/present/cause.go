package present

import (
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// FitCause fits a group key ("pkg.Type: message") into w cells keeping both
// ends readable: the type's own name (its package shortened to initials,
// o.s.w.c.ResourceAccessException, then cut from the left if it must) and
// the message's start and end around a middle ellipsis, where two causes of
// one type usually differ. key is drawn as it is: sanitise it first.
func FitCause(key string, w int) string {
	if w <= 0 {
		return ""
	}
	if termtext.Width(key) <= w {
		return key
	}
	typ, msg, ok := moveplan.SplitErrorType(key)
	if !ok || msg == "" {
		if ok {
			return termtext.TruncateLeft(ShortType(key), w) // a type alone: its name is its end
		}
		return Middle(key, w)
	}
	const sep = ": "
	// The full type while the message keeps half the width, else the short.
	if room := w - termtext.Width(typ) - len(sep); room >= w/2 && room >= 12 {
		return typ + sep + Middle(msg, room)
	}
	// The message keeps at least 16 cells (where Middle shows both ends),
	// or two fifths of a wide column.
	short := ShortType(typ)
	if maxType := max(w-len(sep)-max(16, w*2/5), 8); termtext.Width(short) > maxType {
		short = termtext.TruncateLeft(short, maxType)
	}
	room := w - termtext.Width(short) - len(sep)
	if room < 4 {
		return termtext.TruncateLeft(short, w)
	}
	return short + sep + Middle(msg, room)
}

// ShortType shortens a qualified type's package to initials, keeping its
// name: org.springframework.web.client.ResourceAccessException →
// o.s.w.c.ResourceAccessException (as logback abbreviates loggers).
func ShortType(typ string) string {
	i := strings.LastIndexByte(typ, '.')
	if i < 0 {
		return typ
	}
	var b strings.Builder
	for _, p := range strings.Split(typ[:i], ".") {
		if p != "" {
			b.WriteString(p[:1])
		}
		b.WriteByte('.')
	}
	return b.String() + typ[i+1:]
}

// Middle cuts s to w cells by taking out its middle: about two thirds of
// the room for the start, the rest for the end, an ellipsis between. Below
// 16 cells it keeps the start only.
func Middle(s string, w int) string {
	sw := termtext.Width(s)
	if sw <= w {
		return s
	}
	if w < 16 {
		return termtext.Truncate(s, w)
	}
	tail := (w - 1) / 3
	head := w - 1 - tail
	// A wide rune at either cut may leave a cell unused: at most w.
	return ansi.Truncate(s, head, "") + termtext.Ellipsis + ansi.TruncateLeft(s, sw-tail, "")
}

// Grouped says how much of a queue groups cover, the same words in the
// commands and the UI: "grouped 5000 of 5000 ready messages by error · the
// whole queue", or, short of it, "· partial:" and why (GroupCoverage.Why).
func Grouped(c usecase.GroupCoverage) string {
	s := "grouped " + strconv.Itoa(c.Grouped) + " of " + Plural(int(c.Of), "ready message", "ready messages") + " by " + c.By
	if n := c.LookedAt - c.Grouped; n > 0 {
		s += " (" + Plural(n, "message", "messages") + " not chosen by --where)"
	}
	why := c.Partial
	if why == "" {
		why = c.Why()
	}
	if why != "" {
		return s + " · partial: " + why
	}
	return s + " · the whole queue"
}

// FitGroupKey fits a group's key: an error's (by error or error-text) as
// FitCause does, a queue name, reason or origin by its middle (a type's
// initials would make another name of it).
func FitGroupKey(key, by string, w int) string {
	if by == usecase.GroupError || by == usecase.GroupErrorText {
		return FitCause(key, w)
	}
	return Middle(key, max(w, 0))
}

// GroupTimes says which time the groups' FIRST and LAST are (their
// Group.Times), for a line above the groups: "FIRST/LAST: when they
// reached orders.dlq (…)"; several kinds are named each, and the TIME
// column says which a group has. "" when no group is timed.
func GroupTimes(gs []usecase.Group, queue string) string {
	var kinds []string
	untimed, total := 0, 0
	for _, g := range gs {
		total += g.Count
		untimed += g.Count - g.Timed
		if g.Times != "" && !slices.Contains(kinds, g.Times) {
			kinds = append(kinds, g.Times)
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	long := func(k string) string {
		switch k {
		case usecase.GroupTimeReached:
			return "when they reached " + queue + " (the x-death of the death that put each there, or the failure time of the framework that published it there)"
		case usecase.GroupTimePublished:
			return "when they were published (their timestamp property; when they reached " + queue + " is not known)"
		case usecase.GroupTimeFirstDeath:
			return "their first death (the earliest x-death time; when they reached " + queue + " is not known)"
		}
		return k
	}
	s := "FIRST/LAST: " + long(kinds[0])
	if len(kinds) > 1 {
		var parts []string
		for _, k := range kinds {
			parts = append(parts, GroupTimeShort(k)+": "+long(k))
		}
		s = "FIRST/LAST, by group (TIME): " + strings.Join(parts, "; ")
	}
	if untimed > 0 {
		s += "; " + strconv.Itoa(untimed) + " of " + Plural(total, "message has", "messages have") + " none"
	}
	return s
}

// GroupTimesMixed reports whether the groups are timed by more than one
// kind (the TIME column is then shown).
func GroupTimesMixed(gs []usecase.Group) bool {
	kind := ""
	for _, g := range gs {
		if g.Times == "" {
			continue
		}
		if kind != "" && g.Times != kind {
			return true
		}
		kind = g.Times
	}
	return false
}

// GroupTimeShort names a kind of group time in a column (TIME).
func GroupTimeShort(kind string) string {
	switch kind {
	case usecase.GroupTimeReached:
		return "reached"
	case usecase.GroupTimePublished:
		return "published"
	case usecase.GroupTimeFirstDeath:
		return "1st death"
	}
	return kind
}

// PeekGrouped says how much of a queue the groups of a peek's messages
// cover (the terminal UI before or without a scan): shown of peeked (a
// filter shows fewer) of ready, by by; short of the whole queue,
// "partial" and what groups more (scanKey, the key that scans; "" says
// nothing of it).
func PeekGrouped(shown, peeked int, ready int64, by, scanKey string) string {
	s := "grouped " + strconv.Itoa(shown)
	if shown != peeked {
		s += " shown of " + strconv.Itoa(peeked) + " peeked"
	}
	s += " of " + Plural(int(max(ready, int64(peeked))), "ready message", "ready messages") + " by " + by
	if int64(peeked) >= ready {
		if shown == peeked {
			return s + " · the whole queue"
		}
		return s
	}
	s += " · partial: the peek's first " + strconv.Itoa(peeked)
	if ready > usecase.GroupWholeLimit {
		s += " (more than the " + strconv.Itoa(usecase.GroupWholeLimit) + " grouped whole by default)"
	}
	if scanKey != "" {
		s += " · " + scanKey + " groups up to " + strconv.Itoa(usecase.DefaultDumpLimit)
	}
	return s
}
