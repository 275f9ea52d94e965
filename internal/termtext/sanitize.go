// Package termtext makes untrusted text safe to draw on a terminal and fits
// it into columns. Everything ladder draws or prints that came from a broker
// or a file (queue names, headers, bodies, routing keys) goes through
// Sanitize first, so an escape sequence in a queue name shows up as text
// instead of retitling the window or moving the cursor.
package termtext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Sanitize returns s with every control character, escape sequence and
// invalid byte written out as visible text: ESC becomes `\x1b`, CR `\r`, BEL
// `\x07`, a C1 control or a bidirectional override `\u202e`, an invalid
// UTF-8 byte `\xff`. Printable Unicode (wide characters, emoji) is kept.
// The result is a single line: newlines and tabs are escaped too.
func Sanitize(s string) string {
	if plain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	write(&b, s)
	return b.String()
}

// SanitizeMultiline is Sanitize for text shown over several lines (message
// bodies): newlines are kept (CRLF counts as one), tabs expand to spaces up to
// the next multiple of tabWidth, everything else is escaped as Sanitize does.
func SanitizeMultiline(s string, tabWidth int) string {
	if plain(s) {
		return s
	}
	if tabWidth <= 0 {
		tabWidth = 4
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	col := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			b.WriteByte('\n')
			col = 0
			i++
			continue
		case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			i++ // CRLF: the LF ends the line
			continue
		case c == '\t':
			n := tabWidth - col%tabWidth
			b.WriteString(strings.Repeat(" ", n))
			col += n
			i++
			continue
		}
		// One rune (or invalid byte) at a time; col only matters for tabs,
		// so counting runes is close enough.
		r, size := utf8.DecodeRuneInString(s[i:])
		writeRune(&b, s[i:i+size], r, size)
		col++
		i += size
	}
	return b.String()
}

// plain reports whether s is printable ASCII only: the common case, which
// needs no copy.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

func write(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		writeRune(b, s[i:i+size], r, size)
		i += size
	}
}

// writeRune writes one decoded rune (raw is its bytes) safely.
func writeRune(b *strings.Builder, raw string, r rune, size int) {
	switch {
	case r == utf8.RuneError && size <= 1:
		if size == 1 {
			writeHexByte(b, raw[0])
		}
	case r < 0x20 || r == 0x7f:
		switch r {
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			writeHexByte(b, byte(r))
		}
	case unsafeRune(r):
		// As Go quotes it: \u and 4 hex digits, \U and 8 past U+FFFF.
		esc, n := `\u`, 4
		if r > 0xffff {
			esc, n = `\U`, 8
		}
		b.WriteString(esc)
		s := strconv.FormatInt(int64(r), 16)
		for range n - len(s) {
			b.WriteByte('0')
		}
		b.WriteString(s)
	default:
		b.WriteString(raw)
	}
}

func writeHexByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

// unsafeRune reports runes that are valid UTF-8 yet act on the terminal or
// on how text reads: C1 controls (a terminal may take U+009B as CSI), the
// bidirectional overrides and isolates (text that reads differently from
// what it is), line and paragraph separators, and the BOM; and the runes
// that draw nothing, whose width terminals disagree on (and with Width):
// format characters such as the soft hyphen U+00AD, the zero-width space,
// joiners and word joiner (U+200B–U+200D, U+2060), variation selectors,
// the combining grapheme joiner and the Hangul fillers. Written out, a name
// holding one takes the cells Width counts and shows what it holds.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e || r == 0x200f || r == 0x061c:
		return true
	case r == 0x2028 || r == 0x2029 || r == 0xfeff:
		return true
	case r < 0xad:
		return false
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Variation_Selector, r):
		return true
	case r == 0x034f, r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0:
		return true
	}
	return false
}
