package termtext

import (
	"unicode/utf16"
	"unicode/utf8"
)

// EscapeJSON rewrites the runes of encoded JSON that a terminal may act on
// although encoding/json leaves them raw — C1 controls (U+009B is a CSI),
// bidirectional overrides, separators, the BOM, the runes that draw nothing
// (see unsafeRune), and DEL — as \uXXXX escapes (a surrogate pair past
// U+FFFF): the same JSON value, safe to print. Outside strings JSON is ASCII, so every
// such rune is inside one. Output with none comes back unchanged.
func EscapeJSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		if b[i] == 0x7f {
			break
		}
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if unsafeRune(r) {
			break
		}
		i += size
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		if b[i] == 0x7f {
			out = append(out, `\u007f`...)
			i++
			continue
		}
		if b[i] < utf8.RuneSelf {
			out = append(out, b[i])
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if unsafeRune(r) {
			// Past U+FFFF (tag characters, variation selectors) JSON
			// takes the UTF-16 surrogate pair.
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				out = appendU(out, r1)
				r = r2
			}
			out = appendU(out, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// appendU appends \uXXXX for a rune of at most 16 bits.
func appendU(out []byte, r rune) []byte {
	return append(out, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
