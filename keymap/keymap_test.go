package keymap

import (
	"reflect"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
)

// Every binding has keys and help text, so help lists every key that works.
func TestEveryBindingHasHelp(t *testing.T) {
	k := Default()
	seen := 0
	for _, group := range k.FullHelp() {
		for _, b := range group {
			seen++
			if len(b.Keys()) == 0 || b.Help().Key == "" || b.Help().Desc == "" {
				t.Errorf("binding %v lacks keys or help", b.Keys())
			}
		}
	}
	// Count the struct's bindings by reflection so a new field that is left
	// out of FullHelp fails here.
	fields := 0
	rt := reflect.TypeFor[KeyMap]()
	for i := range rt.NumField() {
		if rt.Field(i).Type == reflect.TypeFor[key.Binding]() {
			fields++
		}
	}
	if seen != fields {
		t.Fatalf("FullHelp lists %d bindings, KeyMap has %d: a binding is missing from help", seen, fields)
	}
}

func TestReadOnlyDisablesMutations(t *testing.T) {
	k := Default()
	k.ReadOnly()
	for name, b := range map[string]key.Binding{"move": k.Move, "mark": k.Mark, "mark all": k.MarkAll} {
		if b.Enabled() {
			t.Errorf("%s still enabled in read-only mode", name)
		}
	}
	if !k.Refresh.Enabled() || !k.Open.Enabled() {
		t.Fatal("read-only disabled a read action")
	}
}

// The root sends esc to the focused screen as Back, so a binding that is
// shown for esc must use Back's keys; Close stands for confirm and cancel.
func TestAliasesShareKeys(t *testing.T) {
	k := Default()
	subset := func(name string, b key.Binding, of ...key.Binding) {
		t.Helper()
		for _, s := range b.Keys() {
			found := false
			for _, o := range of {
				for _, ok := range o.Keys() {
					found = found || ok == s
				}
			}
			if !found {
				t.Errorf("%s: key %q is not one of %v", name, s, of)
			}
		}
	}
	subset("clear filter", k.ClearFilter, k.Back)
	subset("close", k.Close, k.Confirm, k.Cancel)
}

func TestAsKeepsKeysAndState(t *testing.T) {
	k := Default()
	b := As(k.Confirm, "move now")
	if b.Help().Desc != "move now" || b.Help().Key != k.Confirm.Help().Key || !reflect.DeepEqual(b.Keys(), k.Confirm.Keys()) {
		t.Fatalf("As changed more than the description: %+v", b.Help())
	}
	if k.Confirm.Help().Desc != "confirm" {
		t.Fatal("As changed the original binding")
	}
	k.ReadOnly()
	if As(k.Move, "move").Enabled() {
		t.Fatal("As enabled a disabled binding")
	}
}

// n and N act on the lists (ladders, browser) next to every list and app
// key there, so no such key may share theirs. The dialog keys (Cancel and
// Close take n) act only while a dialog is on top, where n/N do not.
func TestMatchKeysFreeOnLists(t *testing.T) {
	k := Default()
	lists := []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Open, k.Back, k.Filter,
		k.Mark, k.MarkAll, k.Sort, k.Move, k.Group, k.Where, k.Dump, k.Replay, k.Refresh, k.Copy, k.Vhost,
		k.Help, k.Quit, k.ForceQuit}
	for _, m := range []key.Binding{k.NextMatch, k.PrevMatch} {
		for _, mk := range m.Keys() {
			for _, b := range lists {
				for _, bk := range b.Keys() {
					if mk == bk {
						t.Errorf("%q is both %q and %q", mk, m.Help().Desc, b.Help().Desc)
					}
				}
			}
		}
	}
	if reflect.DeepEqual(k.NextMatch.Keys(), k.PrevMatch.Keys()) {
		t.Fatal("next and previous match share keys")
	}
}

// Help names every key a binding answers to that users reach for.
func TestPageKeysHelpNamesCtrlUD(t *testing.T) {
	k := Default()
	for _, b := range []struct {
		keys, help string
	}{{strings.Join(k.PageUp.Keys(), " "), k.PageUp.Help().Key}, {strings.Join(k.PageDown.Keys(), " "), k.PageDown.Help().Key}} {
		for _, key := range strings.Fields(b.keys) {
			name := map[string]string{"pgdown": "pgdn", "ctrl+u": "^u", "ctrl+d": "^d"}[key]
			if name == "" {
				name = key
			}
			if !strings.Contains(b.help, name) {
				t.Errorf("help %q does not name %q", b.help, key)
			}
		}
	}
}
