package list

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/ui/component/input"
	"github.com/ladder-tui/ladder/ui/style"
)

// Filter is a list's filter, typed in place: while it is typed it takes
// every key (Capturing); KeepFilter stops typing and keeps it; Back clears it.
// Every change of its text calls the list's onChange (filter again).
type Filter struct {
	text     input.Line
	typing   bool
	onChange func()
}

// NewFilter is a filter that calls onChange whenever its text changes.
func NewFilter(onChange func()) Filter { return Filter{onChange: onChange} }

func (f *Filter) changed() {
	if f.onChange != nil {
		f.onChange()
	}
}

// Start begins typing the filter.
func (f *Filter) Start() { f.typing = true }

// Capturing reports whether the filter takes every key now.
func (f *Filter) Capturing() bool { return f.typing }

// Active reports whether the filter is typed or kept.
func (f *Filter) Active() bool { return f.typing || f.text.String() != "" }

// Text is the filter as typed; Match is it lower-cased, for matching.
func (f *Filter) Text() string  { return f.text.String() }
func (f *Filter) Match() string { return strings.ToLower(f.text.String()) }

// Back clears the filter; it reports whether there was one (the esc was
// used up).
func (f *Filter) Back() bool {
	if !f.Active() {
		return false
	}
	f.typing = false
	f.text.Set("")
	f.changed()
	return true
}

// Reset forgets the filter (a new list).
func (f *Filter) Reset() { f.typing = false; f.text.Set("") }

// HandleKey takes a key while the filter is typed; it reports whether it
// used it.
func (f *Filter) HandleKey(msg tea.KeyPressMsg, keys *keymap.KeyMap) bool {
	if !f.typing {
		return false
	}
	if key.Matches(msg, keys.KeepFilter) {
		f.typing = false // keep the filter and the selection
		return true
	}
	if f.text.Update(msg, keys) {
		f.changed()
		return true
	}
	return false
}

// Paste types pasted text into the filter while it is typed.
func (f *Filter) Paste(msg tea.PasteMsg, keys *keymap.KeyMap) {
	if f.typing && f.text.Update(msg, keys) {
		f.changed()
	}
}

// Step is where NextMatch (1) or PrevMatch (-1) goes once a filter is
// kept; 0 for any other key, or while no filter is kept (n and N are typed
// into a filter being typed).
func (f *Filter) Step(msg tea.KeyPressMsg, keys *keymap.KeyMap) int {
	if f.typing || f.text.String() == "" {
		return 0
	}
	switch {
	case key.Matches(msg, keys.NextMatch):
		return 1
	case key.Matches(msg, keys.PrevMatch):
		return -1
	}
	return 0
}

// View draws the filter in width cells, with a cursor while it is typed.
func (f *Filter) View(width int, st *style.Styles) string {
	return f.text.View(width, f.typing, st)
}

// FilterKeys are the keys while a filter is typed, for the footer; help
// adds the editing keys (KeyMap.EditKeys).
func FilterKeys(k *keymap.KeyMap) []key.Binding {
	return []key.Binding{k.KeepFilter, k.ClearFilter, k.DeleteChar, k.TypingHelp}
}

// MatchKeys go from match to match of a kept filter, for help.
func MatchKeys(k *keymap.KeyMap) []key.Binding {
	return []key.Binding{k.NextMatch, k.PrevMatch}
}
