package termtext

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzSanitize: whatever bytes come from the broker, what reaches the
// terminal is valid UTF-8 with no control character at all (Sanitize) or
// only newlines (SanitizeMultiline).
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"orders.dlq", "evil\x1b]0;pwned\x07", "\x9b31m", "a\u202eb", "\xff\xfe", "日本語\t\r\n", "\x1bP+q\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check := func(out string, newlines bool) {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 from %q: %q", s, out)
			}
			for _, r := range out {
				if r == '\n' && newlines {
					continue
				}
				if unicode.IsControl(r) || r == '\u202e' || r == '\u202d' {
					t.Fatalf("control %U reached the output of %q: %q", r, s, out)
				}
			}
		}
		check(Sanitize(s), false)
		check(SanitizeMultiline(s, 4), true)
		if strings.ContainsRune(Sanitize(s), '\n') {
			t.Fatalf("Sanitize kept a newline: %q", s)
		}
	})
}
