package termtext

import "unicode/utf8"

// EscapeJSON rewrites the runes of encoded JSON that a terminal may act on
// although encoding/json leaves them raw — C1 controls (U+009B is a CSI),
// bidirectional overrides, separators, the BOM, and DEL — as \uXXXX escapes: the
// same JSON value, safe to print. Outside strings JSON is ASCII, so every
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
			out = append(out, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}
