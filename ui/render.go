package ui

import (
	"strings"

	"github.com/ladder-tui/ladder/ui/styled"
)

// fitLines makes exactly h lines of at most w cells: the last defence
// against a line wrapping in the terminal and shifting the whole screen.
func fitLines(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = styled.Truncate(l, w)
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
