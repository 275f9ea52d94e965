package moveplan

import "strings"

// Scanners for normaliseError's masking stages. Each matches exactly what
// the regular expression in its comment matches (RE2, leftmost-first, as
// ReplaceAllString would; cause_test.go checks them against those
// expressions) at a fraction of the cost: grouping reads every message of
// a queue.

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHexDigit(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// runOf is how many bytes from i satisfy f.
func runOf(s string, i int, f func(byte) bool) int {
	n := 0
	for i+n < len(s) && f(s[i+n]) {
		n++
	}
	return n
}

// exactly reports n bytes from i that satisfy f.
func exactly(s string, i, n int, f func(byte) bool) bool {
	return i+n <= len(s) && runOf(s[:i+n], i, f) == n
}

// wordEnd is RE2's \b after a word character at j.
func wordEnd(s string, j int) bool { return j >= len(s) || !isWordByte(s[j]) }

// replaceWords replaces what match matches where a word starts (\b before
// a word character) with mask, or with what match returns for it when
// mask is "". match returns the end of its match, or -1.
func replaceWords(s string, match func(s string, i int) (int, string), mask string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) || i > 0 && isWordByte(s[i-1]) {
			continue
		}
		end, m := match(s, i)
		if end < 0 {
			continue
		}
		if mask != "" {
			m = mask
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:i])
		b.WriteString(m)
		last, i = end, end-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// matchUUID: \b[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\b
func matchUUID(s string, i int) (int, string) {
	p := i
	for k, n := range [...]int{8, 4, 4, 4, 12} {
		if k > 0 {
			if p >= len(s) || s[p] != '-' {
				return -1, ""
			}
			p++
		}
		if !exactly(s, p, n, isHexDigit) {
			return -1, ""
		}
		p += n
	}
	if !wordEnd(s, p) {
		return -1, ""
	}
	return p, maskUUID
}

// matchStamp: \b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2}\b)?)?
// masked <date>, or <time> with a time of day.
func matchStamp(s string, i int) (int, string) {
	if !exactly(s, i, 4, isDigit) || !sepDigits(s, i+4, '-', 2) || !sepDigits(s, i+7, '-', 2) {
		return -1, ""
	}
	p := i + 10
	if p >= len(s) || s[p] != 'T' && s[p] != ' ' || !exactly(s, p+1, 2, isDigit) || !sepDigits(s, p+3, ':', 2) {
		return p, maskDate
	}
	p += 6
	if sepDigits(s, p, ':', 2) {
		p += 3
		if p+1 < len(s) && (s[p] == '.' || s[p] == ',') && isDigit(s[p+1]) {
			p += 1 + runOf(s, p+1, isDigit)
		}
	}
	switch {
	case p < len(s) && s[p] == 'Z':
		p++
	case p < len(s) && (s[p] == '+' || s[p] == '-') && exactly(s, p+1, 2, isDigit):
		if sepDigits(s, p+3, ':', 2) && wordEnd(s, p+6) {
			p += 6
		} else if exactly(s, p+3, 2, isDigit) && wordEnd(s, p+5) {
			p += 5
		}
	}
	return p, maskTime
}

// sepDigits: the byte sep at i, then exactly n digits.
func sepDigits(s string, i int, sep byte, n int) bool {
	return i < len(s) && s[i] == sep && exactly(s, i+1, n, isDigit)
}

// matchIPv4: \b\d{1,3}(?:\.\d{1,3}){3}\b
func matchIPv4(s string, i int) (int, string) {
	p := i
	for k := range 4 {
		if k > 0 {
			if p >= len(s) || s[p] != '.' {
				return -1, ""
			}
			p++
		}
		n := runOf(s, p, isDigit)
		if n < 1 || n > 3 {
			return -1, ""
		}
		p += n
	}
	if !wordEnd(s, p) {
		return -1, ""
	}
	return p, maskIP
}

// matchClock: \b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b
func matchClock(s string, i int) (int, string) {
	n := runOf(s, i, isDigit)
	if n < 1 || n > 2 || !sepDigits(s, i+n, ':', 2) {
		return -1, ""
	}
	p := i + n + 3
	if sepDigits(s, p, ':', 2) {
		q := p + 3
		if q+1 < len(s) && (s[q] == '.' || s[q] == ',') && isDigit(s[q+1]) {
			if e := q + 1 + runOf(s, q+1, isDigit); wordEnd(s, e) {
				return e, maskTime
			}
		}
		if wordEnd(s, q) {
			return q, maskTime
		}
	}
	if wordEnd(s, p) {
		return p, maskTime
	}
	return -1, ""
}

// matchIPv6: \b(?:[0-9A-Fa-f]{1,4}:){2,7}[0-9A-Fa-f]{1,4}\b
func matchIPv6(s string, i int) (int, string) {
	var ends [7]int
	g, p := 0, i
	for g < 7 {
		n := runOf(s, p, isHexDigit)
		if n < 1 || n > 4 || p+n >= len(s) || s[p+n] != ':' {
			break
		}
		p += n + 1
		ends[g] = p
		g++
	}
	for k := g; k >= 2; k-- {
		start := ends[k-1]
		if n := runOf(s, start, isHexDigit); n >= 1 && n <= 4 && wordEnd(s, start+n) {
			return start + n, maskIP
		}
	}
	return -1, ""
}

func isLabelByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '-' }

// matchHostPort: \b[A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)+:\d{1,5}\b,
// masked <host>:PORT unless the host is a source file (a stack frame's
// OrderService.java:42), which stays as it is.
func matchHostPort(s string, i int) (int, string) {
	if !isLetter(s[i]) {
		return -1, ""
	}
	p := i + runOf(s, i, isLabelByte)
	labels := 1
	for p+1 < len(s) && s[p] == '.' && isLabelByte(s[p+1]) {
		p += 1 + runOf(s, p+1, isLabelByte)
		labels++
	}
	if labels < 2 || p >= len(s) || s[p] != ':' {
		return -1, ""
	}
	n := runOf(s, p+1, isDigit)
	if n < 1 || n > 5 || !wordEnd(s, p+1+n) {
		return -1, ""
	}
	end := p + 1 + n
	if sourceFile(s[i:p]) {
		return end, s[i:end]
	}
	return end, maskHost + s[p:end]
}

// matchHex0x: \b0[xX][0-9A-Fa-f]+\b
func matchHex0x(s string, i int) (int, string) {
	if i+2 >= len(s) || s[i] != '0' || s[i+1] != 'x' && s[i+1] != 'X' {
		return -1, ""
	}
	n := runOf(s, i+2, isHexDigit)
	if n < 1 || !wordEnd(s, i+2+n) {
		return -1, ""
	}
	return i + 2 + n, maskHex
}

func isLocalByte(c byte) bool  { return isWordByte(c) || c == '.' || c == '+' || c == '-' }
func isDomainByte(c byte) bool { return isWordByte(c) || c == '-' }

// maskEmails: [A-Za-z0-9_.+-]+@[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+
func maskEmails(s string) string {
	if strings.IndexByte(s, '@') < 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for k := 0; k < len(s); k++ {
		if s[k] != '@' {
			continue
		}
		a := k
		for a > last && isLocalByte(s[a-1]) {
			a--
		}
		p := k + 1 + runOf(s, k+1, isDomainByte)
		if a == k || p == k+1 {
			continue
		}
		labels := 0
		for p+1 < len(s) && s[p] == '.' && isDomainByte(s[p+1]) {
			p += 1 + runOf(s, p+1, isDomainByte)
			labels++
		}
		if labels == 0 {
			continue
		}
		b.WriteString(s[last:a])
		b.WriteString(maskEmail)
		last, k = p, p-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
