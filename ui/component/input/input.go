// Package input is a one-line text field for filters and dialog fields.
package input

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/ui/style"
)

// Line is a one-line text field. It is deliberately small (no blinking
// cursor, no history) so that frames are deterministic and typing never
// schedules timers.
type Line struct {
	value []rune
}

// Update applies a key or a paste; it reports whether it used the message.
func (in *Line) Update(msg tea.Msg, keys *keymap.KeyMap) bool {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if key.Matches(msg, keys.DeleteChar) {
			if len(in.value) > 0 {
				in.value = in.value[:len(in.value)-1]
			}
			return true
		}
		if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
			in.insert(msg.Text)
			return true
		}
	case tea.PasteMsg:
		s, _, _ := strings.Cut(msg.Content, "\n")
		in.insert(s)
		return true
	}
	return false
}

// insert adds printable text; control characters are dropped, so a pasted
// escape sequence cannot reach the field.
func (in *Line) insert(s string) {
	for _, r := range s {
		if r >= 0x20 && r != 0x7f && (r < 0x80 || r > 0x9f) {
			in.value = append(in.value, r)
		}
	}
}

func (in *Line) String() string { return string(in.value) }

// Set replaces the text.
func (in *Line) Set(s string) {
	in.value = in.value[:0]
	in.insert(s)
}

// View draws the field in width cells; the end stays visible when the text
// is longer, and a focused field shows a reversed cursor cell.
func (in *Line) View(width int, focused bool, st *style.Styles) string {
	if width <= 0 {
		return ""
	}
	s := termtext.Sanitize(in.String())
	if !focused {
		return termtext.Fit(s, width)
	}
	s = termtext.TruncateLeft(s, width-1)
	return s + st.Focused.Render(" ") + strings.Repeat(" ", max(0, width-1-termtext.Width(s)))
}
