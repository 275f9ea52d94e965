package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/keymap"
)

// listNav is a cursor over n rows, some of which may not be selectable
// (section titles), with a scroll offset that keeps it on screen.
type listNav struct {
	cursor, offset int
}

// handleKey moves the cursor for the list keys; it reports whether msg was
// one of them. page is the number of visible rows.
func (l *listNav) handleKey(msg tea.KeyPressMsg, keys *keymap.KeyMap, n, page int, ok func(int) bool) bool {
	switch {
	case key.Matches(msg, keys.Up):
		l.step(n, -1, ok)
	case key.Matches(msg, keys.Down):
		l.step(n, 1, ok)
	case key.Matches(msg, keys.PageUp):
		l.step(n, -max(1, page-1), ok)
	case key.Matches(msg, keys.PageDown):
		l.step(n, max(1, page-1), ok)
	case key.Matches(msg, keys.Top):
		l.cursor = -1
		l.step(n, 1, ok)
	case key.Matches(msg, keys.Bottom):
		l.cursor = n
		l.step(n, -1, ok)
	default:
		return false
	}
	return true
}

// step moves by delta rows, landing on a selectable row (searching further
// in the same direction, then back) and staying put when there is none.
func (l *listNav) step(n, delta int, ok func(int) bool) {
	if n == 0 {
		l.cursor, l.offset = 0, 0
		return
	}
	dir := 1
	if delta < 0 {
		dir = -1
	}
	to := min(max(l.cursor+delta, 0), n-1)
	for i := to; i >= 0 && i < n; i += dir {
		if ok == nil || ok(i) {
			l.cursor = i
			return
		}
	}
	for i := to; i >= 0 && i < n; i -= dir {
		if ok == nil || ok(i) {
			l.cursor = i
			return
		}
	}
}

// clamp keeps the cursor within n rows and on a selectable one.
func (l *listNav) clamp(n int, ok func(int) bool) {
	if l.cursor >= n {
		l.cursor = n - 1
	}
	if l.cursor < 0 {
		l.cursor = 0
	}
	if n > 0 && ok != nil && !ok(l.cursor) {
		l.step(n, 1, ok)
	}
}

// scroll adjusts the offset so the cursor is within height visible rows.
func (l *listNav) scroll(n, height int) {
	if height <= 0 {
		return
	}
	if l.cursor < l.offset {
		l.offset = l.cursor
	}
	if l.cursor >= l.offset+height {
		l.offset = l.cursor - height + 1
	}
	l.offset = max(0, min(l.offset, n-height))
}
