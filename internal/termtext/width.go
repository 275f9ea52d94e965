package termtext

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Ellipsis ends text cut to fit a column.
const Ellipsis = "…"

// Width is the display width of s in terminal cells: wide characters count
// two, escape sequences count zero.
func Width(s string) int { return ansi.StringWidth(s) }

// Truncate cuts s to at most w cells, ending it with an ellipsis when it was
// cut. Wide characters are never split in half.
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if Width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, Ellipsis)
}

// TruncateLeft keeps the end of s in at most w cells, starting it with an
// ellipsis when it was cut (for paths and long names whose tail matters).
func TruncateLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := Width(s)
	if sw <= w {
		return s
	}
	if w == 1 {
		return Ellipsis
	}
	return Ellipsis + ansi.TruncateLeft(s, sw-w+1, "")
}

// Fit truncates s to w cells and pads it with spaces to exactly w.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = Truncate(s, w)
	if n := w - Width(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// FitRight truncates s to w cells and pads it on the left to exactly w, for
// numbers.
func FitRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = Truncate(s, w)
	if n := w - Width(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return s
}

// Wrap breaks s into lines of at most w cells at spaces, breaking a word only
// when it is longer than a whole line.
func Wrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}
