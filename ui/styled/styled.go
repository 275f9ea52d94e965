// Package styled fits styled text to a width: the line helpers every
// screen and dialog of the UI draws with.
package styled

import (
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/internal/termtext"
)

// Wrap wraps text at words and styles each line.
func Wrap(s lipgloss.Style, text string, width int) []string {
	ws := termtext.Wrap(text, width)
	for i := range ws {
		ws[i] = s.Render(ws[i])
	}
	return ws
}

// Truncate cuts an already styled line to width cells, keeping its escape
// sequences balanced.
func Truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, termtext.Ellipsis)
}
