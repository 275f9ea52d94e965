package list

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/keymap"
)

func press(s string) tea.KeyPressMsg {
	switch s {
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	return tea.KeyPressMsg{Code: rune(s[0]), Text: s}
}

// The cursor skips rows that cannot be selected (section titles) and the
// window follows it.
func TestNavSkipsUnselectableRowsAndScrolls(t *testing.T) {
	km := keymap.Default()
	k := &km
	ok := func(i int) bool { return i%3 != 0 } // 0, 3, 6 … are titles
	var n Nav
	n.Clamp(10, ok)
	if n.Cursor != 1 {
		t.Fatalf("clamp: cursor %d", n.Cursor)
	}
	for range 2 {
		n.HandleKey(press("down"), k, 10, 4, ok)
	}
	if n.Cursor != 4 {
		t.Errorf("down twice from 1: %d, want 4 (3 is a title)", n.Cursor)
	}
	n.Scroll(10, 3)
	if s, e := n.Window(10, 3); s != 2 || e != 5 {
		t.Errorf("window %d-%d", s, e)
	}
	if !n.HandleKey(press("up"), k, 10, 4, ok) || n.Cursor != 2 {
		t.Errorf("up: %d", n.Cursor)
	}
	if n.HandleKey(press("x"), k, 10, 4, ok) {
		t.Error("a letter moved the cursor")
	}
}

func TestFilterTypesKeepsAndClears(t *testing.T) {
	km := keymap.Default()
	k := &km
	changes := 0
	f := NewFilter(func() { changes++ })
	if f.HandleKey(press("a"), k) || f.Active() {
		t.Fatal("a filter not started took a key")
	}
	f.Start()
	for _, s := range []string{"A", "b"} {
		if !f.HandleKey(press(s), k) {
			t.Fatalf("typing %q not taken", s)
		}
	}
	f.Paste(tea.PasteMsg{Content: "c\x1b[2J\nignored"}, k)
	if f.Text() != "Abc[2J" || f.Match() != "abc[2j" || changes != 3 {
		t.Errorf("text %q match %q after %d changes", f.Text(), f.Match(), changes)
	}
	if !f.HandleKey(press("enter"), k) || f.Capturing() || !f.Active() {
		t.Error("enter did not keep the filter")
	}
	if !f.Back() || f.Active() || changes != 4 {
		t.Errorf("back: active %v, %d changes", f.Active(), changes)
	}
	if f.Back() {
		t.Error("back with no filter used the esc")
	}
}

// Find wraps around both ends over the rows ok accepts; First lands on the
// first of them.
func TestNavFindWraps(t *testing.T) {
	ok := func(i int) bool { return i == 2 || i == 5 }
	var n Nav
	n.First(7, ok)
	if n.Cursor != 2 {
		t.Fatalf("first: %d", n.Cursor)
	}
	for _, want := range []int{5, 2, 5} {
		if !n.Find(7, 1, ok) || n.Cursor != want {
			t.Fatalf("next: %d, want %d", n.Cursor, want)
		}
	}
	for _, want := range []int{2, 5} {
		if !n.Find(7, -1, ok) || n.Cursor != want {
			t.Fatalf("previous: %d, want %d", n.Cursor, want)
		}
	}
	if n.Find(7, 1, func(int) bool { return false }) || n.Cursor != 5 {
		t.Fatalf("no match moved the cursor to %d", n.Cursor)
	}
	n.First(7, func(int) bool { return false })
	if n.Cursor != 0 {
		t.Fatalf("first without a match: %d", n.Cursor)
	}
	if n.Find(0, 1, nil) {
		t.Fatal("found a row in an empty list")
	}
}

// n and N step only through a kept filter: typed, they are text.
func TestFilterStepOnlyWhenKept(t *testing.T) {
	km := keymap.Default()
	k := &km
	f := NewFilter(nil)
	if f.Step(press("n"), k) != 0 {
		t.Fatal("n stepped without a filter")
	}
	f.Start()
	if f.Step(press("n"), k) != 0 || !f.HandleKey(press("n"), k) || f.Text() != "n" {
		t.Fatal("n did not type while the filter was typed")
	}
	f.HandleKey(press("enter"), k)
	if f.Step(press("n"), k) != 1 || f.Step(press("N"), k) != -1 || f.Step(press("j"), k) != 0 {
		t.Fatal("kept filter: n/N do not step")
	}
}
