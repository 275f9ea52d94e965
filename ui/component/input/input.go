// Package input is the one-line text field of every typed field: filters,
// the move dialog's N, target and delay, the prompts' file names and
// --where expressions. Editing keys come from keymap (KeyMap.EditKeys), so
// every field edits alike and help lists what works.
package input

import (
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/ui/style"
)

// Line is a one-line text field with a cursor. It is deliberately small (no
// blinking, no history) so that frames are deterministic and typing never
// schedules timers.
type Line struct {
	value []rune
	pos   int // the cursor: the index of the rune it is on, len(value) at the end
}

// Update applies a key or a paste; it reports whether it used the message.
// Keys it does not use (enter, esc, tab, up, down) are left to the caller.
// Space is text here: a typed field never lets it switch anything.
func (in *Line) Update(msg tea.Msg, keys *keymap.KeyMap) bool {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return in.key(msg, keys)
	case tea.PasteMsg:
		s, _, _ := strings.Cut(msg.Content, "\n")
		in.insert(strings.TrimSuffix(s, "\r"))
		return true
	}
	return false
}

func (in *Line) key(msg tea.KeyPressMsg, keys *keymap.KeyMap) bool {
	in.clamp()
	switch {
	case key.Matches(msg, keys.CursorLeft):
		in.pos = max(0, in.pos-1)
	case key.Matches(msg, keys.CursorRight):
		in.pos = min(len(in.value), in.pos+1)
	case key.Matches(msg, keys.LineStart):
		in.pos = 0
	case key.Matches(msg, keys.LineEnd):
		in.pos = len(in.value)
	case key.Matches(msg, keys.DeleteChar):
		if in.pos > 0 {
			in.cut(in.pos-1, in.pos)
		}
	case key.Matches(msg, keys.DeleteNext):
		if in.pos < len(in.value) {
			in.cut(in.pos, in.pos+1)
		}
	case key.Matches(msg, keys.DeleteWord):
		in.cut(in.wordStart(), in.pos)
	case key.Matches(msg, keys.DeleteToStart):
		in.cut(0, in.pos)
	case key.Matches(msg, keys.DeleteToEnd):
		in.cut(in.pos, len(in.value))
	case msg.Text != "" && msg.Mod&^tea.ModShift == 0:
		in.insert(msg.Text)
	default:
		return false
	}
	return true
}

// wordStart is where ctrl+w deletes back to: over the spaces before the
// cursor, then over the word before them. Punctuation that separates the
// parts of a target or an expression (: . = , /) ends a word too, so
// ctrl+w in "exchange:orders-x" leaves "exchange:".
func (in *Line) wordStart() int {
	i := in.pos
	for i > 0 && unicode.IsSpace(in.value[i-1]) {
		i--
	}
	if i > 0 && separator(in.value[i-1]) {
		return i - 1
	}
	for i > 0 && !unicode.IsSpace(in.value[i-1]) && !separator(in.value[i-1]) {
		i--
	}
	return i
}

func separator(r rune) bool { return strings.ContainsRune(":.=,/&|()<>!", r) }

// cut removes value[from:to] and leaves the cursor at from.
func (in *Line) cut(from, to int) {
	in.value = append(in.value[:from], in.value[to:]...)
	in.pos = from
}

// insert adds printable text at the cursor; control characters are
// dropped, so a pasted escape sequence cannot reach the field.
func (in *Line) insert(s string) {
	in.clamp()
	var add []rune
	for _, r := range s {
		if r >= 0x20 && r != 0x7f && (r < 0x80 || r > 0x9f) {
			add = append(add, r)
		}
	}
	rest := append(add, in.value[in.pos:]...)
	in.value = append(in.value[:in.pos], rest...)
	in.pos += len(add)
}

func (in *Line) clamp() { in.pos = min(max(in.pos, 0), len(in.value)) }

func (in *Line) String() string { return string(in.value) }

// Cursor is the cursor's position in runes (0 is before the first).
func (in *Line) Cursor() int { in.clamp(); return in.pos }

// Set replaces the text; the cursor goes to its end.
func (in *Line) Set(s string) {
	in.value, in.pos = in.value[:0], 0
	in.insert(s)
}

// View draws the field in width cells. Unfocused, it shows the start of
// the text; focused, it shows the cursor as a reversed cell (reverse video
// is an attribute, not a colour, so NO_COLOR keeps it), on the character it
// is on or on a blank after the text, and as much text before it as fits.
func (in *Line) View(width int, focused bool, st *style.Styles) string {
	if width <= 0 {
		return ""
	}
	if !focused {
		return termtext.Fit(termtext.Sanitize(in.String()), width)
	}
	in.clamp()
	cells := make([]string, len(in.value))
	for i, r := range in.value {
		cells[i] = termtext.Sanitize(string(r))
	}
	under := " "
	if in.pos < len(cells) {
		under = cells[in.pos]
	}
	uw := max(1, termtext.Width(under))
	if uw > width {
		return strings.Repeat(" ", width)
	}
	// The text before the cursor, as much of its end as fits.
	start, used := in.pos, uw
	for start > 0 && used+termtext.Width(cells[start-1]) <= width {
		start--
		used += termtext.Width(cells[start])
	}
	// Then the text after it, as much of its start as fits.
	end := min(in.pos+1, len(cells))
	for end < len(cells) && used+termtext.Width(cells[end]) <= width {
		used += termtext.Width(cells[end])
		end++
	}
	var b strings.Builder
	b.WriteString(strings.Join(cells[start:in.pos], ""))
	if termtext.Width(under) == 0 {
		under = " " // a combining mark alone would draw no cell
	}
	b.WriteString(st.Cursor.Render(under))
	if in.pos < len(cells) {
		b.WriteString(strings.Join(cells[in.pos+1:end], ""))
	}
	return b.String() + strings.Repeat(" ", max(0, width-used))
}
