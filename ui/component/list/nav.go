// Package list is the lists of the terminal UI (ladders, queue browser,
// vhost switcher): a cursor over rows with a visible window (Nav) and a
// filter typed in place (Filter), each with its own keys for help.
package list

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/keymap"
)

// Nav is a cursor over n rows, some of which may not be selectable
// (section titles), with a scroll offset that keeps it on screen.
type Nav struct {
	Cursor, Offset int
}

// HandleKey moves the cursor for the list keys; it reports whether msg was
// one of them. page is the number of visible rows.
func (l *Nav) HandleKey(msg tea.KeyPressMsg, keys *keymap.KeyMap, n, page int, ok func(int) bool) bool {
	switch {
	case key.Matches(msg, keys.Up):
		l.Step(n, -1, ok)
	case key.Matches(msg, keys.Down):
		l.Step(n, 1, ok)
	case key.Matches(msg, keys.PageUp):
		l.Step(n, -max(1, page-1), ok)
	case key.Matches(msg, keys.PageDown):
		l.Step(n, max(1, page-1), ok)
	case key.Matches(msg, keys.Top):
		l.Cursor = -1
		l.Step(n, 1, ok)
	case key.Matches(msg, keys.Bottom):
		l.Cursor = n
		l.Step(n, -1, ok)
	default:
		return false
	}
	return true
}

// Step moves by delta rows, landing on a selectable row (searching further
// in the same direction, then back) and staying put when there is none.
func (l *Nav) Step(n, delta int, ok func(int) bool) {
	if n == 0 {
		l.Cursor, l.Offset = 0, 0
		return
	}
	dir := 1
	if delta < 0 {
		dir = -1
	}
	to := min(max(l.Cursor+delta, 0), n-1)
	for i := to; i >= 0 && i < n; i += dir {
		if ok == nil || ok(i) {
			l.Cursor = i
			return
		}
	}
	for i := to; i >= 0 && i < n; i -= dir {
		if ok == nil || ok(i) {
			l.Cursor = i
			return
		}
	}
}

// Find moves the cursor to the next (dir 1) or previous (dir -1) row ok
// accepts, wrapping around the ends; it stays put and reports false when no
// row is accepted.
func (l *Nav) Find(n, dir int, ok func(int) bool) bool {
	if dir >= 0 {
		dir = 1
	} else {
		dir = -1
	}
	for d := 1; d <= n; d++ {
		i := ((l.Cursor+dir*d)%n + n) % n
		if ok == nil || ok(i) {
			l.Cursor = i
			return true
		}
	}
	return false
}

// First puts the cursor on the first row ok accepts (the first match of a
// filter), or on the first row when none is.
func (l *Nav) First(n int, ok func(int) bool) {
	l.Cursor = -1
	if !l.Find(n, 1, ok) {
		l.Cursor = 0
	}
}

// Clamp keeps the cursor within n rows and on a selectable one.
func (l *Nav) Clamp(n int, ok func(int) bool) {
	if l.Cursor >= n {
		l.Cursor = n - 1
	}
	if l.Cursor < 0 {
		l.Cursor = 0
	}
	if n > 0 && ok != nil && !ok(l.Cursor) {
		l.Step(n, 1, ok)
	}
}

// Scroll adjusts the offset so the cursor is within height visible rows.
func (l *Nav) Scroll(n, height int) {
	if height <= 0 {
		return
	}
	if l.Cursor < l.Offset {
		l.Offset = l.Cursor
	}
	if l.Cursor >= l.Offset+height {
		l.Offset = l.Cursor - height + 1
	}
	l.Offset = max(0, min(l.Offset, n-height))
}

// Window is the range [start, end) of rows to draw in height lines.
func (l *Nav) Window(n, height int) (start, end int) {
	return l.Offset, min(n, l.Offset+max(0, height))
}

// NavKeys are a list's cursor keys, for help.
func NavKeys(k *keymap.KeyMap) []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}
}
