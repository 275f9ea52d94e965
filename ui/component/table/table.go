// Package table lays out the terminal UI's tables: columns of a width and
// an alignment, one space apart, fitted to the screen, so no screen counts
// its gaps by hand.
package table

import (
	"strings"

	"github.com/ladder-tui/ladder/internal/termtext"
)

// Column is one column: its title, width in cells and alignment.
type Column struct {
	Title string
	Width int
	Right bool
}

// Remaining is the width left for the one flexible column of a table
// width cells wide: after lead cells (cursor and mark glyphs), the other
// columns' widths and the one-cell gap before each of them; at least least.
func Remaining(width, lead, least int, others ...int) int {
	used := lead
	for _, w := range others {
		used += w + 1
	}
	return max(least, width-used)
}

// Cell fits s to the column.
func (c Column) Cell(s string) string {
	if c.Right {
		return termtext.FitRight(s, c.Width)
	}
	return termtext.Fit(s, c.Width)
}

// Cells fits each value to its column (values beyond the columns are dropped).
func Cells(cols []Column, values ...string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		v := ""
		if i < len(values) {
			v = values[i]
		}
		out[i] = c.Cell(v)
	}
	return out
}

// Join puts fitted cells one space apart.
func Join(cells []string) string { return strings.Join(cells, " ") }

// Header is the columns' titles, fitted and joined.
func Header(cols []Column) string {
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.Title
	}
	return Join(Cells(cols, titles...))
}
