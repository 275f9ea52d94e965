package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/internal/termtext"
)

// truncateStyled cuts an already styled line to width cells, keeping its
// escape sequences balanced.
func truncateStyled(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, termtext.Ellipsis)
}

// fitLines makes exactly h lines of at most w cells: the last defence
// against a line wrapping in the terminal and shifting the whole screen.
func fitLines(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = truncateStyled(l, w)
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
