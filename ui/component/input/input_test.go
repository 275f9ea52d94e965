package input

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/keymap"
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
