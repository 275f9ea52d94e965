package keymap

import (
	"reflect"
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
