package termtext

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"orders", "orders"},
		{"evil\x1b]0;pwned\x07", `evil\x1b]0;pwned\x07`},
		{"a\rb\nc\td", `a\rb\nc\td`},
		{"del\x7f", `del\x7f`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"bidi\u202eevil", `bidi\u202eevil`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{"日本語 ✓ 🐇", "日本語 ✓ 🐇"},
		{"", ""},
		// Runes that draw nothing, whose width terminals disagree on.
		{"pay\u00adments", `pay\u00adments`},
		{"a\u200bb\u200cc\u200dd\u2060e\ufeff", `a\u200bb\u200cc\u200dd\u2060e\ufeff`},
		{"ok\ufe0f \u034f \u3164", `ok\ufe0f \u034f \u3164`},
		{"tag\U000E0041 vs\U000E0100", `tag\U000e0041 vs\U000e0100`},
		{"café ñ \u0301", "café ñ \u0301"}, // combining marks draw on what precedes
	} {
		if got := Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Sanitize(tc.in); strings.ContainsAny(got, "\x1b\x07\r\n\t\x7f") {
			t.Errorf("Sanitize(%q) kept a control byte: %q", tc.in, got)
		}
	}
}

// Sanitised text takes the cells Width says: every rune left is one a
// terminal draws, so a name cannot shift the columns after it.
func TestSanitizedWidthIsWhatIsDrawn(t *testing.T) {
	for _, name := range []string{"pay\u00adments.dlq", "a\u200b\u200b\u200bb", "\ufeffq", "x\ufe0fy", "emoji\u200djoin", "tag\U000E0041"} {
		s := Sanitize(name)
		visible := 0
		for _, r := range s {
			if r < 0x20 || unsafeRune(r) {
				t.Fatalf("Sanitize(%q) kept %U", name, r)
			}
			visible++
		}
		if Width(s) != visible {
			t.Errorf("Sanitize(%q) = %q: %d cells, %d runes drawn", name, s, Width(s), visible)
		}
	}
}

func TestSanitizeMultiline(t *testing.T) {
	got := SanitizeMultiline("a\tb\r\nline2\x1b[31m\rx", 4)
	want := "a   b\nline2\\x1b[31m\\rx"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestWidthHelpers(t *testing.T) {
	if w := Width("日本"); w != 4 {
		t.Fatalf("Width(日本) = %d, want 4", w)
	}
	if got := Truncate("orders.retry.5s", 8); got != "orders.…" {
		t.Fatalf("Truncate = %q", got)
	}
	// A wide character is never split: 5 cells of "日本語" hold two of them.
	if got := Truncate("日本語", 5); got != "日本…" || Width(got) != 5 {
		t.Fatalf("Truncate wide = %q (%d cells)", got, Width(got))
	}
	if got := Truncate("short", 10); got != "short" {
		t.Fatalf("Truncate short = %q", got)
	}
	if got := Fit("ab", 4); got != "ab  " {
		t.Fatalf("Fit = %q", got)
	}
	if got := FitRight("12", 4); got != "  12" {
		t.Fatalf("FitRight = %q", got)
	}
	if got := Fit("日本語", 4); Width(got) != 4 {
		t.Fatalf("Fit wide = %q (%d cells)", got, Width(got))
	}
	if got := TruncateLeft("orders.retry.5s", 6); got != "…ry.5s" {
		t.Fatalf("TruncateLeft = %q", got)
	}
	lines := Wrap("messages here never return to the main queue", 20)
	for _, l := range lines {
		if Width(l) > 20 {
			t.Fatalf("Wrap line %q is wider than 20", l)
		}
	}
	if lines[0] != "messages here never" {
		t.Fatalf("Wrap cut mid-word: %q", lines)
	}
}

func BenchmarkSanitizePlain(b *testing.B) {
	for b.Loop() {
		Sanitize("orders.retry.5s")
	}
}

func TestEscapeJSON(t *testing.T) {
	in := []byte(`{"a":"x` + "\u009b31m\u202e\u2028\x7f" + `y","b":"日本 🐇"}`)
	got := string(EscapeJSON(in))
	if want := `{"a":"x\u009b31m\u202e\u2028\u007fy","b":"日本 🐇"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	plainJSON := []byte(`{"a":"日本 🐇"}`)
	if out := EscapeJSON(plainJSON); &out[0] != &plainJSON[0] {
		t.Fatal("safe JSON was copied")
	}
}

// Escaped JSON reads back as the same text, runes past U+FFFF included.
func TestEscapeJSONRoundTrips(t *testing.T) {
	in := "pay\u00adments \U000E0041 \U000E0100 \ufeff \u202e 🐇"
	b, _ := json.Marshal(in)
	esc := EscapeJSON(b)
	var back string
	if err := json.Unmarshal(esc, &back); err != nil || back != in {
		t.Fatalf("%s read back as %q (%v)", esc, back, err)
	}
	if strings.ContainsRune(string(esc), 0xad) || strings.ContainsRune(string(esc), 0xE0041) {
		t.Fatalf("kept a rune that draws nothing: %s", esc)
	}
}
