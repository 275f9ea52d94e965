package input

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/ui/style"
)

func TestLineDropsControlsAndKeepsTheFirstPastedLine(t *testing.T) {
	km := keymap.Default()
	k := &km
	var in Line
	in.Update(tea.KeyPressMsg{Code: 'a', Text: "a"}, k)
	in.Update(tea.PasteMsg{Content: "b\x07c\u009b\nsecond"}, k)
	if in.String() != "abc" {
		t.Errorf("%q", in.String())
	}
	in.Update(tea.KeyPressMsg{Code: tea.KeyBackspace}, k)
	if in.String() != "ab" {
		t.Errorf("backspace: %q", in.String())
	}
	if in.Update(tea.KeyPressMsg{Code: 'x', Text: "x", Mod: tea.ModCtrl}, k) || in.String() != "ab" {
		t.Error("ctrl+x typed a letter")
	}
	in.Set("new")
	if in.String() != "new" {
		t.Errorf("set: %q", in.String())
	}
}

// press is the key press a terminal sends for a binding name.
func press(name string) tea.Msg {
	special := map[string]rune{
		"left": tea.KeyLeft, "right": tea.KeyRight, "home": tea.KeyHome, "end": tea.KeyEnd,
		"backspace": tea.KeyBackspace, "delete": tea.KeyDelete, "enter": tea.KeyEnter,
		"tab": tea.KeyTab, "esc": tea.KeyEscape, "up": tea.KeyUp, "down": tea.KeyDown,
	}
	if c, ok := special[name]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	if name == "space" {
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	if c, ok := strings.CutPrefix(name, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	if c, ok := strings.CutPrefix(name, "alt+"); ok && c == "backspace" {
		return tea.KeyPressMsg{Code: tea.KeyBackspace, Mod: tea.ModAlt}
	}
	return tea.KeyPressMsg{Code: []rune(name)[0], Text: name}
}

// edit types start, then applies the keys; "|" in want marks the cursor.
func edit(t *testing.T, start string, keys ...string) string {
	t.Helper()
	km := keymap.Default()
	var in Line
	in.Set(start)
	for _, k := range keys {
		if strings.HasPrefix(k, "paste:") {
			in.Update(tea.PasteMsg{Content: strings.TrimPrefix(k, "paste:")}, &km)
			continue
		}
		if !in.Update(press(k), &km) {
			t.Fatalf("%q was not used by the field", k)
		}
	}
	r := []rune(in.String())
	return string(r[:in.Cursor()]) + "|" + string(r[in.Cursor():])
}

func TestLineEditingKeys(t *testing.T) {
	for _, c := range []struct {
		name  string
		start string
		keys  []string
		want  string
	}{
		{"left then type inserts at the cursor", "orders", []string{"left", "left", "X"}, "ordeX|rs"},
		{"right stops at the end", "ab", []string{"right", "right"}, "ab|"},
		{"left stops at the start", "ab", []string{"left", "left", "left"}, "|ab"},
		{"home", "queue:x", []string{"home"}, "|queue:x"},
		{"ctrl+a", "queue:x", []string{"ctrl+a", "Z"}, "Z|queue:x"},
		{"end", "queue:x", []string{"home", "end"}, "queue:x|"},
		{"ctrl+e", "queue:x", []string{"ctrl+a", "ctrl+e"}, "queue:x|"},
		{"ctrl+b and ctrl+f", "abc", []string{"ctrl+b", "ctrl+b", "ctrl+f"}, "ab|c"},
		{"backspace deletes before the cursor", "abc", []string{"left", "backspace"}, "a|c"},
		{"backspace at the start does nothing", "abc", []string{"home", "backspace"}, "|abc"},
		{"delete deletes under the cursor", "abc", []string{"home", "delete"}, "|bc"},
		{"ctrl+u deletes to the start", "queue:orders", []string{"left", "left", "ctrl+u"}, "|rs"},
		{"ctrl+k deletes to the end", "queue:orders", []string{"ctrl+a", "right", "right", "ctrl+k"}, "qu|"},
		{"ctrl+w deletes a word back", "retries>=3 and age", []string{"ctrl+w"}, "retries>=3 and |"},
		{"ctrl+w over spaces", "a bc  ", []string{"ctrl+w"}, "a |"},
		{"ctrl+w stops at a separator", "exchange:orders-x", []string{"ctrl+w"}, "exchange:|"},
		{"ctrl+w eats a separator alone", "exchange:", []string{"ctrl+w"}, "exchange|"},
		{"alt+backspace is ctrl+w", "one two", []string{"alt+backspace"}, "one |"},
		{"ctrl+w mid-text", "one two", []string{"left", "left", "left", "ctrl+w"}, "|two"},
		{"space is text", "a", []string{"space", "b"}, "a b|"},
		{"q and ? are text", "", []string{"q", "?"}, "q?|"},
		{"paste inserts at the cursor", "queue:ds", []string{"left", "paste:order"}, "queue:dorder|s"},
		{"multi-rune at the cursor", "ü", []string{"home", "é"}, "é|ü"},
	} {
		if got := edit(t, c.start, c.keys...); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// Navigation keys are left to the caller: enter, esc, tab, up, down.
func TestLineLeavesNavigationKeys(t *testing.T) {
	km := keymap.Default()
	var in Line
	in.Set("x")
	for _, k := range []string{"enter", "esc", "tab", "up", "down"} {
		if in.Update(press(k), &km) {
			t.Errorf("%s was used by the field", k)
		}
	}
	if in.String() != "x" {
		t.Fatalf("%q", in.String())
	}
}

func TestLineViewShowsTheCursor(t *testing.T) {
	km := keymap.Default()
	for _, noColor := range []bool{false, true} {
		st := style.New(style.DefaultTheme(), noColor)
		var in Line
		in.Set("orders")
		in.Update(press("left"), &km)
		in.Update(press("left"), &km)
		out := in.View(20, true, st)
		if ansi.StringWidth(out) != 20 {
			t.Errorf("width %d", ansi.StringWidth(out))
		}
		if plain := ansi.Strip(out); !strings.HasPrefix(plain, "orders ") {
			t.Errorf("plain %q", plain)
		}
		// The cursor is on the "r": drawn reversed, which needs no colour.
		if !strings.Contains(out, st.Cursor.Render("r")) || !strings.Contains(st.Cursor.Render("r"), "\x1b[7m") {
			t.Errorf("noColor=%v: the cursor is not drawn in reverse video on r: %q", noColor, out)
		}
		// At the end it is a reversed blank after the text.
		in.Update(press("end"), &km)
		if out := in.View(20, true, st); !strings.Contains(out, "orders"+st.Cursor.Render(" ")) {
			t.Errorf("cursor at the end: %q", out)
		}
		// Unfocused: no cursor.
		if out := in.View(20, false, st); strings.Contains(out, "\x1b[7m") {
			t.Errorf("unfocused field shows a cursor: %q", out)
		}
	}
}

// A text longer than the field scrolls so that the cursor stays visible.
func TestLineViewKeepsTheCursorInView(t *testing.T) {
	km := keymap.Default()
	st := style.New(style.DefaultTheme(), true)
	var in Line
	in.Set("0123456789abcdefghij")
	if got := ansi.Strip(in.View(8, true, st)); got != "defghij " {
		t.Errorf("end: %q", got)
	}
	in.Update(press("home"), &km)
	if got := ansi.Strip(in.View(8, true, st)); got != "01234567" {
		t.Errorf("start: %q", got)
	}
	for range 10 {
		in.Update(press("right"), &km)
	}
	out := in.View(8, true, st)
	if got := ansi.Strip(out); !strings.Contains(got, "a") || ansi.StringWidth(out) != 8 || !strings.Contains(out, st.Cursor.Render("a")) {
		t.Errorf("middle: %q", out)
	}
	// Wide runes never overflow the width.
	in.Set("表表表表表表")
	if w := ansi.StringWidth(in.View(5, true, st)); w != 5 {
		t.Errorf("wide: width %d", w)
	}
}
