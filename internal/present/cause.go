package present

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
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
// commands and the UI: "grouped 5000 of 5000 ready messages by error", with
// why it stopped short when it did ("· stopped at the 20s deadline").
func Grouped(c broker.GroupCoverage) string {
	s := "grouped " + strconv.Itoa(c.Grouped) + " of " + Plural(int(c.Of), "ready message", "ready messages") + " by " + c.By
	var notes []string
	if n := c.LookedAt - c.Grouped; n > 0 {
		notes = append(notes, Plural(n, "message", "messages")+" not chosen by --where")
	}
	switch {
	case c.Deadline > 0:
		// said after the notes
	case c.Capped && c.LookedAt >= c.Bound && c.Bound == broker.DefaultDumpLimit:
		notes = append(notes, "a scan stops at "+strconv.Itoa(c.Bound)+" messages")
	case c.Capped && c.LookedAt >= c.Bound:
		notes = append(notes, "the first "+strconv.Itoa(c.Bound))
	case c.Capped:
		notes = append(notes, "the browse saw "+strconv.Itoa(c.LookedAt)+": others were taken or not visible meanwhile")
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	if c.Deadline > 0 {
		s += " · stopped at the " + c.Deadline.String() + " deadline"
	}
	return s
}

// FitGroupKey fits a group's key: an error's (by error or error-text) as
// FitCause does, a queue name, reason or origin by its middle (a type's
// initials would make another name of it).
func FitGroupKey(key, by string, w int) string {
	if by == broker.GroupError || by == broker.GroupErrorText {
		return FitCause(key, w)
	}
	return Middle(key, max(w, 0))
}
