package moveplan

import (
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A message's cause is what --group-by error groups on: the error's type
// and its message with the values that differ from message to message (ids,
// numbers, quoted values, addresses, times) masked, so "Order A-1 rejected"
// and "Order A-2 rejected" are one cause. Pure functions of the headers.

// Cause is why a message failed, as its headers say.
type Cause struct {
	// Type is the error's type ("java.net.SocketTimeoutException",
	// "TypeError"); empty when nothing names one.
	Type string `json:"type,omitempty"`
	// TypeFrom is where Type was read: a header's name, or "text" when the
	// error text itself began with it.
	TypeFrom string `json:"type_from,omitempty"`
	// Text is the error text as read (RetryState.LastError).
	Text string `json:"text,omitempty"`
	// Key is the type and the normalised message ("" when the message
	// names no error at all): equal keys are one cause.
	Key string `json:"key"`
}

// Headers naming an error's type, as each framework writes them.
const (
	hdrSpringStack = "x-exception-stacktrace"                  // Spring AMQP RepublishMessageRecoverer, Spring Cloud Stream republishToDlq
	hdrMTType      = "MT-Fault-ExceptionType"                  // MassTransit
	hdrNSBType     = "NServiceBus.ExceptionInfo.ExceptionType" // NServiceBus recoverability
)

// CauseOf is the cause of a message with headers h and retry state st
// (ReadState of the same headers): the type from the framework's type header
// when it has one (MassTransit, NServiceBus, the first "Caused by" of a
// Spring stack trace, whose message x-exception-message is), else from the
// type the conventions table read (RetryState.ErrorType: Sneakers'
// error_class, rascal's error code), else from the text when it reads
// "pkg.Type: message"; the key from both. errorCause does the rest.
func CauseOf(h retry.Headers, st retry.RetryState) Cause {
	typ, from := errorTypeIn(h)
	if typ == "" && strings.TrimSpace(st.ErrorType) != "" {
		// The conventions table's type field (Sneakers' error_class,
		// rascal's error code, …).
		typ, from = st.ErrorType, st.ErrorTypeSource
	}
	return errorCause(st.LastError, typ, from)
}

// errorCause is the cause of an error text whose type, when typeFrom names
// where it was read, is typ; without one the text's own "Type: " prefix is
// the type.
func errorCause(text, typ, typeFrom string) Cause {
	c := Cause{Text: text}
	msg := text
	if typ = strings.TrimSpace(typ); typ != "" {
		c.Type, c.TypeFrom = typ, typeFrom
		// A message that repeats its type ("System.Exception: boom") is
		// keyed once.
		if t, rest, ok := SplitErrorType(text); ok && t == typ {
			msg = rest
		}
	} else if t, rest, ok := SplitErrorType(text); ok {
		c.Type, c.TypeFrom, msg = t, "text", rest
	}
	c.Key = joinKey(c.Type, normaliseError(msg))
	return c
}

// errorKey is the cause key of an error text alone: its "Type: " prefix, if
// any, and its normalised message. errorKey(errorKey(s)) == errorKey(s).
func errorKey(text string) string { return errorCause(text, "", "").Key }

func joinKey(typ, msg string) string {
	switch {
	case typ == "":
		return msg
	case msg == "":
		return typ
	}
	return typ + ": " + msg
}

// errorTypeIn reads the type header a framework writes, and its name.
func errorTypeIn(h retry.Headers) (typ, from string) {
	for _, k := range [...]string{hdrMTType, hdrNSBType} {
		if s, err := amqpfield.Text(h[k]); err == nil && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s), k
		}
	}
	if s, err := amqpfield.Text(h[hdrSpringStack]); err == nil {
		if t := stackTraceType(s); t != "" {
			return t, hdrSpringStack
		}
	}
	return "", ""
}

// stackTraceType is the type of the exception a Java stack trace is about:
// that of its first "Caused by:" line when it has one (Spring's
// x-exception-message is the message of the cause, the outer exception being
// ListenerExecutionFailedException), else that of its first line; "" when
// that line does not begin with a type.
func stackTraceType(trace string) string {
	line := ""
	for i, l := range strings.Split(trace, "\n") {
		l = strings.TrimSpace(l)
		if i == 0 {
			line = l
		}
		if rest, ok := strings.CutPrefix(l, "Caused by: "); ok {
			line = rest
			break
		}
		if i > 200 {
			break // a cause is near the top or not there
		}
	}
	if t, _, ok := SplitErrorType(line); ok {
		return t
	}
	return ""
}

// maxTypeName bounds what is taken for a type name.
const maxTypeName = 256

// SplitErrorType splits "pkg.SomeException: message" (Java, .NET, Python's
// "requests.exceptions.ConnectionError: …", JavaScript's "TypeError: …")
// into the type and the message. A text that is a type name alone
// ("java.lang.NullPointerException") is a type with no message. ok is false
// when the text does not begin with something shaped like a type.
func SplitErrorType(text string) (typ, msg string, ok bool) {
	text = strings.TrimSpace(text)
	head, rest, found := strings.Cut(text, ": ")
	if !found {
		head, rest = text, ""
		if h, ok := strings.CutSuffix(text, ":"); ok {
			head = h
		}
	}
	if !isTypeName(head) {
		return "", "", false
	}
	return head, strings.TrimSpace(rest), true
}

// isTypeName reports whether s is shaped like an exception type: a
// qualified name whose last part is capitalised ("java.io.IOException",
// "Outer$Inner", "Ns.Outer+Inner"), or one capitalised word that ends like
// an error type ("TypeError", "KeyError", "TimeoutException").
func isTypeName(s string) bool {
	if s == "" || len(s) > maxTypeName {
		return false
	}
	parts := 0
	last := 0 // start of the last part
	start := true
	for i, r := range s {
		switch {
		case r == '.' || r == '$' || r == '+':
			if start {
				return false // empty part
			}
			start, last = true, i+1
			parts++
		case start:
			if !(r == '_' || r == '$' || r < utf8.RuneSelf && unicode.IsLetter(r)) {
				return false
			}
			start = false
		case !(r == '_' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))):
			return false
		}
	}
	if start {
		return false // ends with a separator
	}
	tail := s[last:]
	if tail[0] < 'A' || tail[0] > 'Z' {
		return false
	}
	if parts > 0 {
		return true
	}
	for _, suffix := range typeSuffixes {
		if strings.HasSuffix(tail, suffix) {
			return true
		}
	}
	return false
}

// typeSuffixes end the unqualified type names taken as types.
var typeSuffixes = [...]string{"Error", "Exception", "Fault", "Failure", "Warning", "Exit", "Interrupt", "Timeout", "Rejection", "Refused", "Exceeded"}

// maxKey bounds a normalised message, in bytes: longer ones are cut at a
// space (" …" marks the cut). Causes are told apart by their beginning.
const maxKey = 1024

// Masks.
const (
	maskNumber = "<n>"
	maskID     = "<id>"
	maskUUID   = "<uuid>"
	maskHex    = "<hex>"
	maskEmail  = "<email>"
	maskIP     = "<ip>"
	maskHost   = "<host>"
	maskTime   = "<time>"
	maskDate   = "<date>"
	quoteBody  = "…"
)

// normaliseError masks what differs between messages of one cause: UUIDs,
// e-mail addresses, dates and times, IP addresses, dotted hosts with a port,
// hex, numbers (with a sign, decimals, units), ids (A-1, ORD-2024-0001,
// #123, words mixing letters and digits) and quoted values ('…', "…", `…`,
// “…”). Runs of white space read as one space. HTTP status codes after
// "HTTP", "status" or "code", or opening the message, are kept: they tell
// causes apart. normaliseError(normaliseError(s)) == normaliseError(s).
func normaliseError(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return ""
	}
	// In order; each stage is what the regular expression beside its
	// scanner (cause_scan.go) matches. None matches a mask, and all but the
	// e-mail need a digit, which no mask has: masking the output again
	// changes nothing.
	s = maskEmails(s)
	s = replaceWords(s, matchUUID, maskUUID)
	s = replaceWords(s, matchStamp, "")
	s = replaceWords(s, matchIPv4, maskIP)
	s = replaceWords(s, matchClock, maskTime)
	s = replaceWords(s, matchIPv6, maskIP)
	s = replaceWords(s, matchHostPort, "")
	s = replaceWords(s, matchHex0x, maskHex)
	s = maskWords(s)
	s = maskQuotes(s)
	return cutKey(s)
}

// sourceFile: "OrderService.java" and the like, whose ":42" is a line.
func sourceFile(name string) bool {
	switch strings.ToLower(name[strings.LastIndexByte(name, '.')+1:]) {
	case "java", "kt", "scala", "groovy", "cs", "fs", "vb", "go", "py", "rb", "js", "mjs", "cjs", "ts", "php", "ex", "exs", "erl", "rs", "c", "cc", "cpp", "h", "swift":
		return true
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isWordRune is a letter, digit or underscore of any script: what a quote
// must not touch to open or close.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// maskWords masks every token that holds a digit. A token is a run of word
// characters joined by single '-' or '.' ("ORD-2024-0001", "27.87",
// "db-7.internal"); '#' before one ("#123") and a sign before a number
// belong to it.
func maskWords(s string) string {
	out := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) || (i > 0 && isWordByte(s[i-1])) {
			out = append(out, s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		for j+1 < len(s) && (s[j] == '-' || s[j] == '.') && isWordByte(s[j+1]) {
			j++
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
		}
		tok := s[i:j]
		i = j
		if !strings.ContainsAny(tok, "0123456789") {
			out = append(out, tok...)
			continue
		}
		mask := tokenMask(tok)
		if mask == maskNumber && keptStatus(s, j-len(tok), tok) {
			out = append(out, tok...)
			continue
		}
		// The sign of a number, or the '#' of an id, just before it (and
		// after no word: "A-1" is an id, "x-5" one token).
		if n := len(out); n > 0 {
			p, before := out[n-1], byte(' ')
			if n > 1 {
				before = out[n-2]
			}
			loose := !isWordByte(before) && before != '>' && before != '-' && before != '+' && before != '#'
			switch {
			case (p == '-' || p == '+') && mask == maskNumber && loose:
				out = out[:n-1]
			case p == '#' && loose:
				out, mask = out[:n-1], maskID
			}
		}
		out = append(out, mask...)
	}
	return string(out)
}

// tokenMask is the mask of a token that holds a digit.
func tokenMask(tok string) string {
	if isNumber(tok) {
		return maskNumber
	}
	if isHexRun(tok) {
		return maskHex
	}
	// A dotted token ("db-7.internal", "com.acme.v2.Handler"): only its
	// parts with digits are masked, so the words around stay readable.
	if strings.Contains(tok, ".") {
		parts := strings.Split(tok, ".")
		for i, p := range parts {
			if strings.ContainsAny(p, "0123456789") {
				parts[i] = tokenMask(p)
			}
		}
		return strings.Join(parts, ".")
	}
	return maskID
}

// isNumber: digits with an optional fraction, exponent and unit ("27.87",
// "250ms", "1e-3", "10MB", "1.2.3" as a version).
func isNumber(tok string) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if digits() == 0 {
		return false
	}
	for i+1 < len(tok) && tok[i] == '.' && tok[i+1] >= '0' && tok[i+1] <= '9' {
		i++
		digits()
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		k := i
		i++
		if i < len(tok) && (tok[i] == '-' || tok[i] == '+') {
			i++
		}
		if digits() == 0 {
			i = k
		}
	}
	// A unit: up to five letters (ms, s, MB, KiB, bytes, µs is not ASCII).
	u := 0
	for i < len(tok) && (tok[i] >= 'a' && tok[i] <= 'z' || tok[i] >= 'A' && tok[i] <= 'Z') && u < 5 {
		i++
		u++
	}
	return i == len(tok)
}

// isHexRun: 6 or more hex digits with at least one letter and one digit
// (a digest, an object id); all digits is a number.
func isHexRun(tok string) bool {
	if len(tok) < 6 {
		return false
	}
	letter, digit := false, false
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			letter = true
		default:
			return false
		}
	}
	return letter && digit
}

// keptStatus: a 3-digit HTTP status (100–599) at the start of the message
// or right after the word HTTP, status, statusCode or code (separated by
// spaces, ':' or '='). Only what comes before decides, so the masking of
// what follows cannot change it.
func keptStatus(s string, at int, tok string) bool {
	if len(tok) != 3 || tok[0] < '1' || tok[0] > '5' || strings.Trim(tok, "0123456789") != "" {
		return false
	}
	j := at
	for j > 0 && (s[j-1] == ' ' || s[j-1] == ':' || s[j-1] == '=') {
		j--
	}
	if j == 0 {
		return true
	}
	k := j
	for k > 0 && (s[k-1] >= 'a' && s[k-1] <= 'z' || s[k-1] >= 'A' && s[k-1] <= 'Z') {
		k--
	}
	if k > 0 && (isWordByte(s[k-1]) || s[k-1] == '-' || s[k-1] == '.') {
		return false // part of a longer token
	}
	switch strings.ToLower(s[k:j]) {
	case "http", "status", "statuscode", "code":
		return true
	}
	return false
}

// quotePairs are the quotes whose contents are masked: opening, closing.
var quotePairs = [...][2]rune{{'\'', '\''}, {'"', '"'}, {'`', '`'}, {'“', '”'}, {'‘', '’'}, {'«', '»'}}

// maskQuotes replaces what is quoted with '…'. A quote opens only after a
// non-word character (so "can't" stays) and closes at the first closing
// quote followed by a non-word character.
func maskQuotes(s string) string {
	if !strings.ContainsAny(s, "'\"`“‘«") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := rune(' ')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		end := -1
		var closeQ rune
		if !isWordRune(prev) {
			for _, q := range quotePairs {
				if r == q[0] {
					closeQ = q[1]
					end = closingQuote(s, i+size, q[1])
					break
				}
			}
		}
		if end < 0 {
			b.WriteString(s[i : i+size])
			prev = r
			i += size
			continue
		}
		b.WriteString(s[i : i+size])
		b.WriteString(quoteBody)
		b.WriteRune(closeQ)
		prev = closeQ
		i = end
	}
	return b.String()
}

// closingQuote is the index just past the first q at or after from that is
// followed by a non-word character or the end, or -1.
func closingQuote(s string, from int, q rune) int {
	for j := from; j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		if r != q {
			continue
		}
		if j == len(s) {
			return j
		}
		if next, _ := utf8.DecodeRuneInString(s[j:]); !isWordRune(next) {
			return j
		}
	}
	return -1
}

// cutKey bounds a key at maxKey bytes, cutting at a space when there is one
// in its last quarter, and never just after a quote (which would let it
// close where it did not).
func cutKey(s string) string {
	const more = " …"
	if len(s) <= maxKey {
		return s
	}
	cut := maxKey - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > maxKey*3/4 {
		cut = sp
	}
	// Never in a kept number (what is left of it would be masked again)
	// nor just after a quote or a space.
	for cut > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:cut])
		if !isQuote(r) && r != ' ' && (r < '0' || r > '9') {
			break
		}
		cut -= size
	}
	return s[:cut] + more
}

func isQuote(r rune) bool {
	for _, q := range quotePairs {
		if r == q[0] || r == q[1] {
			return true
		}
	}
	return false
}
