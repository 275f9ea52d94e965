package style

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// setsColour reports an SGR sequence in s that sets a colour (30–38, 40–48,
// 90–97, 100–107, 58); resets (0, 39, 49) and attributes do not count.
func setsColour(s string) bool {
	for _, m := range sgr.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) || n == 58 {
				return true
			}
		}
	}
	return false
}

func TestNoColorSetsNoColour(t *testing.T) {
	s := New(DefaultTheme(), true)
	out := strings.Join([]string{
		s.Title.Render("t"), s.Muted.Render("m"), s.Error.Render("e"), s.Warning.Render("w"),
		s.Selected.Render("sel"), s.Stale.Render("st"), s.Dimmed.Render("dim"), s.Dialog.Render("d"), s.Banner.Render("b"),
	}, "")
	if setsColour(out) {
		t.Fatalf("NO_COLOR styles emit colour: %q", out)
	}
	if !strings.Contains(s.Selected.Render("sel"), "\x1b[") {
		t.Fatal("selection is invisible without colour")
	}
	if !strings.Contains(s.Dimmed.Render("dim"), "\x1b[") {
		t.Fatal("dimmed rows look like matches without colour")
	}
}

func TestThemeUsesANSIIndices(t *testing.T) {
	s := New(DefaultTheme(), false)
	// Basic palette colour 1 (red) renders as SGR 31, following the user's palette.
	if out := s.Error.Render("e"); !setsColour(out) || !strings.Contains(out, "31") {
		t.Fatalf("error style %q does not use ANSI red", out)
	}
}
