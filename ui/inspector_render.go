package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/ui/style"
	"github.com/ladder-tui/ladder/ui/styled"
)

// Pure renderers of the message inspector: one document of lines, each at
// most width cells, that the inspector scrolls.

// amqpType names a header value's type as AMQP does, with the Go type for
// numbers, because the width is what a consumer's decoder trips over: an
// int32 count and an int64 count are different headers to many clients.
func amqpType(v any) string {
	switch x := v.(type) {
	case nil:
		return "void"
	case bool:
		return "bool"
	case int8:
		return "byte (int8)"
	case uint8:
		return "ubyte (uint8)"
	case int16:
		return "short (int16)"
	case uint16:
		return "ushort (uint16)"
	case int32:
		return "int (int32)"
	case uint32:
		return "uint (uint32)"
	case int64:
		return "long (int64)"
	case int:
		return "long (int)"
	case uint64:
		return "ulong (uint64)"
	case float32:
		return "float (float32)"
	case float64:
		return "double (float64)"
	case string:
		return "longstr"
	case []byte:
		return "bytes"
	case time.Time:
		return "timestamp"
	case []any:
		return "array[" + strconv.Itoa(len(x)) + "]"
	case map[string]any:
		return "table"
	case retry.Headers:
		return "table"
	case retry.Decimal:
		return "decimal"
	}
	// broker promises plain values only (wire.PlainHeaderValue).
	return fmt.Sprintf("%T", v)
}

// asTable and asArray read nested values: plain maps and slices, as broker
// hands them over.
func asTable(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case retry.Headers:
		return x, true
	}
	return nil, false
}

func asArray(v any) ([]any, bool) {
	x, ok := v.([]any)
	return x, ok
}

// scalarText writes a scalar header value, sanitised.
func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return "(void)"
	case string:
		return termtext.Sanitize(x)
	case []byte:
		if utf8.Valid(x) {
			return termtext.Sanitize(string(x))
		}
		return hexInline(x, 32)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case bool:
		return strconv.FormatBool(x)
	}
	return termtext.Sanitize(fmt.Sprint(v))
}

func hexInline(b []byte, limit int) string {
	var s strings.Builder
	for i, c := range b {
		if i == limit {
			s.WriteString(" …")
			break
		}
		if i > 0 {
			s.WriteByte(' ')
		}
		s.WriteString(strconv.FormatUint(uint64(c)|0x100, 16)[1:])
	}
	return s.String()
}

// headerCols are the name and type column widths of the header table:
// the name column as wide as the longest (indented) name, up to 45% of the
// width, so names are cut only when the value column would starve.
func headerCols(h retry.Headers, width int) (name, typ int) {
	longest := len("NAME")
	var walk func(name string, v any, depth int)
	walk = func(name string, v any, depth int) {
		longest = max(longest, 2*depth+termtext.Width(termtext.Sanitize(name)))
		if depth >= maxHeaderDepth {
			return
		}
		if tbl, ok := asTable(v); ok {
			for k, e := range tbl {
				walk(k, e, depth+1)
			}
		} else if arr, ok := asArray(v); ok {
			for i, e := range arr {
				walk("["+strconv.Itoa(i)+"]", e, depth+1)
			}
		}
	}
	for k, v := range h {
		walk(k, v, 0)
	}
	return max(4, min(longest, width*45/100)), 16
}

// maxHeaderDepth is how deep nested header tables and arrays are shown.
const maxHeaderDepth = 6

// headerValueLines is how many lines a header value gets in the document;
// the rest is one enter away (renderHeaderValue).
const headerValueLines = 3

// renderHeaders lists every header, sorted by name, nested tables and
// arrays indented below their parent, each with its AMQP type; a value
// longer than headerValueLines lines is cut.
func renderHeaders(h retry.Headers, width int, st *style.Styles) []string {
	return renderHeaderTable(h, width, headerValueLines, st)
}

// renderHeaderTable is renderHeaders with at most maxLines lines a value
// (0: every line).
func renderHeaderTable(h retry.Headers, width, maxLines int, st *style.Styles) []string {
	if len(h) == 0 {
		return []string{st.Muted.Render("  (no headers)")}
	}
	nw, tw := headerCols(h, width)
	lines := []string{st.Header.Render(termtext.Truncate("  "+termtext.Fit("NAME", nw)+" "+termtext.Fit("TYPE", tw)+" VALUE", width))}
	var walk func(name string, v any, depth int)
	walk = func(name string, v any, depth int) {
		indent := strings.Repeat("  ", depth+1)
		nameCell := termtext.Fit(indent[2:]+termtext.Sanitize(name), nw)
		val := ""
		tbl, isTbl := asTable(v)
		arr, isArr := asArray(v)
		switch {
		case isTbl:
			val = present.Plural(len(tbl), "field", "fields")
		case isArr:
			val = ""
		default:
			val = scalarText(v)
		}
		prefix := "  " + nameCell + " " + st.Muted.Render(termtext.Fit(amqpType(v), tw)) + " "
		vw := max(8, width-2-nw-1-tw-1)
		wrapped := termtext.Wrap(val, vw)
		if maxLines > 0 && len(wrapped) > maxLines {
			// One ellipsis: Truncate would add its own to a full line.
			wrapped = append(wrapped[:maxLines-1], ansi.Truncate(wrapped[maxLines-1], vw-1, "")+termtext.Ellipsis)
		}
		for i, w := range wrapped {
			if i == 0 {
				lines = append(lines, prefix+w)
			} else {
				lines = append(lines, strings.Repeat(" ", 2+nw+1+tw+1)+w)
			}
		}
		if depth >= maxHeaderDepth {
			return // deep nesting: the type says enough
		}
		switch {
		case isTbl:
			for _, k := range slices.Sorted(maps.Keys(tbl)) {
				walk(k, tbl[k], depth+1)
			}
		case isArr:
			for i, e := range arr {
				walk("["+strconv.Itoa(i)+"]", e, depth+1)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(h)) {
		walk(k, h[k], 0)
	}
	return lines
}

// kv renders "  label      value" lines, wrapping the value.
func kv(lines []string, label, value string, width int, st *style.Styles) []string {
	const lw = 16
	ws := termtext.Wrap(value, max(8, width-lw-2))
	for i, w := range ws {
		if i == 0 {
			lines = append(lines, "  "+st.Label.Render(termtext.Fit(label, lw))+w)
		} else {
			lines = append(lines, strings.Repeat(" ", lw+2)+w)
		}
	}
	return lines
}

// seenSource says where a message's best time known was read, for a
// message without a timestamp property.
func seenSource(from, framework string) string {
	switch from {
	case broker.SeenXDeath:
		return "x-death's earliest death, no timestamp"
	case broker.SeenErrorTime:
		if framework != "" {
			return framework + "'s fault time, no timestamp"
		}
		return "the recorded error time, no timestamp"
	}
	return from
}

// renderProperties lists the basic properties that are set, plus how the
// message arrived.
func renderProperties(m *broker.Message, at time.Time, width int, st *style.Styles) []string {
	p := m.Properties
	var lines []string
	add := func(label, v string) {
		if v != "" {
			lines = kv(lines, label, termtext.Sanitize(v), width, st)
		}
	}
	add("message-id", p.MessageID)
	if p.Timestamp != nil {
		lines = kv(lines, "timestamp", p.Timestamp.UTC().Format(time.RFC3339)+" ("+present.Age(*p.Timestamp, at)+" before the peek)", width, st)
	}
	if p.TimestampRaw != 0 {
		// Seconds past year 9999: most likely a JavaScript client's
		// Date.now(), but shown as sent, not read as milliseconds.
		lines = kv(lines, "timestamp", strconv.FormatInt(p.TimestampRaw, 10)+" (as sent; as seconds, past year 9999: milliseconds?)", width, st)
	}
	// Without a timestamp, AGE ("~") comes from elsewhere: name it.
	if seen, from := m.BestTime(); from != "" && from != broker.SeenTimestamp {
		lines = kv(lines, "seen", seen.UTC().Format(time.RFC3339)+" ("+present.Age(seen, at)+" before the peek; "+seenSource(from, m.Retry.Framework)+")", width, st)
	}
	add("content-type", p.ContentType)
	add("content-encoding", p.ContentEncoding)
	switch p.DeliveryMode {
	case 1:
		add("delivery-mode", "1 (transient)")
	case 2:
		add("delivery-mode", "2 (persistent)")
	}
	if p.Priority > 0 {
		add("priority", strconv.Itoa(int(p.Priority)))
	}
	add("expiration", p.Expiration)
	add("correlation-id", p.CorrelationID)
	add("reply-to", p.ReplyTo)
	add("type", p.Type)
	add("user-id", p.UserID)
	add("app-id", p.AppID)
	ex := m.Exchange
	if ex == "" {
		ex = "(default)"
	}
	add("exchange", ex)
	add("routing-key", m.RoutingKey)
	if m.Redelivered {
		add("redelivered", "yes")
	}
	return lines
}

// renderRetrySummary is the retry state, origin, last error and HoL verdict.
func renderRetrySummary(m *broker.Message, at time.Time, width int, st *style.Styles) []string {
	var lines []string
	r := m.Retry
	count := present.RetryCount(r)
	switch from := present.RetryFrom(r, len(m.Deaths)); {
	case from != "":
		// x-death (which queues count, and why), or none recorded.
		count += " (" + termtext.Sanitize(from) + ")"
	case r.IsGuessed(retry.GuessedCount):
		// Read from a name alone: say where, and that it is a guess.
		count += " (from " + termtext.Sanitize(retry.SourceWhere(r.Source)) + ", " + r.SourceHow(retry.GuessedCount) + ")"
	case r.Kind != "":
		count += " (from " + r.Source + ", " + amqpTypeName(r.Kind) + ")"
	default:
		count += " (from " + r.Source + ")"
	}
	lines = kv(lines, "retries", count, width, st)
	if v, ok := m.Headers[moveplan.HeaderMoves]; ok {
		moved := movedTimes(scalarText(v)) + " by ladder (" + moveplan.HeaderMoves + "; --max-moves stops a loop)"
		lines = kv(lines, "moved", moved, width, st)
	}
	if r.LastError != "" {
		e := termtext.Sanitize(r.LastError) + " (" + termtext.Sanitize(r.ErrorSource)
		if r.IsGuessed(retry.GuessedError) {
			e += ", guessed"
		}
		if !r.LastErrorTime.IsZero() {
			e += ", " + r.LastErrorTime.UTC().Format(time.RFC3339)
		}
		lines = kv(lines, "last error", e+")", width, st)
	}
	if r.LastDelay > 0 {
		lines = kv(lines, "last delay", retry.FormatDelay(r.LastDelay), width, st)
	}
	switch {
	case m.Origin != nil:
		o := "exchange " + exName(m.Origin.Exchange) + ", key " + strconv.Quote(termtext.Sanitize(m.Origin.RoutingKey))
		if m.Origin.By != "" {
			o += " (" + m.Origin.By + ")" // a framework's record, not the broker's
		}
		lines = kv(lines, "origin", o, width, st)
	default:
		lines = kv(lines, "origin", "unknown (no x-death history)", width, st)
	}
	if r.FailedQueue != "" {
		lines = kv(lines, "failed in", termtext.Sanitize(r.FailedQueue), width, st)
	}
	if h := m.HoL; h != nil || !r.DueTime.IsZero() {
		// As of the peek: the time does not count down on screen.
		lines = kv(lines, "due", "as of "+present.Clock(at)+", "+termtext.Sanitize(present.DueOf(h, r.DueTime, r.DueSource, at, present.DueSentence)), width, st)
	}
	for _, e := range append(slices.Clone(r.Invalid), m.DeathErrors...) {
		lines = append(lines, styled.Wrap(st.Warning, "  unreadable "+termtext.Sanitize(e.Error()), width)...)
	}
	return lines
}

// movedTimes is the x-ladder-moves count in words: "once", "3 times"; a
// value that is not a count is shown as it is.
func movedTimes(v string) string {
	v = termtext.Sanitize(v)
	switch n, err := strconv.ParseInt(v, 10, 64); {
	case err != nil:
		return v + " times"
	case n == 1:
		return "once"
	default:
		return v + " times"
	}
}

func exName(s string) string {
	if s == "" {
		return "(default)"
	}
	return termtext.Sanitize(s)
}

// amqpTypeName maps a Go kind name from RetryState.Kind to the AMQP name.
func amqpTypeName(kind string) string {
	switch kind {
	case "int8":
		return "byte (int8)"
	case "int16":
		return "short (int16)"
	case "int32":
		return "int (int32)"
	case "int64":
		return "long (int64)"
	case "float32":
		return "float (float32)"
	case "float64":
		return "double (float64)"
	case "string":
		return "longstr"
	case "[]byte":
		return "bytes"
	}
	return kind
}

// carriedMark flags, in the first column, a death ladder carried in
// x-ladder-deaths across a move or replay (4.x restarts x-death on a
// re-published message). A glyph explained once below the table: a word
// per line would not fit 80 columns.
const carriedMark = "*"

// deathsTitle is the timeline's section title. The order is the broker's:
// a repeated {queue, reason} moves to the front (3.x) and 4.x sorts by each
// entry's last death, so the first row is where the message died last; the
// ladder's carried history follows, older still (see TestXDeathIsLatestDeathFirst).
const deathsTitle = "x-death timeline (latest death first)"

// renderDeaths is the x-death timeline, latest death first as the broker
// keeps it, then the deaths ladder carried. An entry's time is its first
// death (x-death keeps no later one), so a repeated entry can show an
// older time than the one below it: a note says so.
func renderDeaths(ds []retry.Death, width int, st *style.Styles) []string {
	if len(ds) == 0 {
		return []string{st.Muted.Render("  (never dead-lettered)")}
	}
	qw := min(max(14, width/4), 40)
	lines := []string{st.Header.Render(termtext.Truncate("  "+termtext.Fit("QUEUE", qw)+" "+termtext.Fit("REASON", 14)+" "+
		termtext.FitRight("COUNT", 5)+"  "+termtext.Fit("FIRST DEATH", 20)+" ORIG EXP", width))}
	carried := false
	for _, d := range ds {
		lead := "  "
		if d.Carried {
			lead, carried = carriedMark+" ", true
		}
		reason := string(d.Reason)
		if d.Reason == retry.ReasonOther && d.RawReason != "" {
			reason = termtext.Sanitize(d.RawReason)
		}
		t := present.NoValue
		if !d.Time.IsZero() {
			t = d.Time.UTC().Format("2006-01-02 15:04:05")
		}
		exp := present.NoValue
		if d.HasOriginalExpiration {
			exp = retry.FormatDelay(d.OriginalExpiration)
		}
		line := lead + termtext.Fit(termtext.Sanitize(d.Queue), qw) + " " + termtext.Fit(reason, 14) + " " +
			termtext.FitRight(strconv.FormatInt(d.Count, 10), 5) + "  " + termtext.Fit(t, 20) + " " + exp
		lines = append(lines, termtext.Truncate(line, width))
		if width >= 100 {
			keys := make([]string, len(d.RoutingKeys))
			for i, k := range d.RoutingKeys {
				keys[i] = strconv.Quote(termtext.Sanitize(k))
			}
			lines = append(lines, st.Muted.Render(termtext.Truncate("    via exchange "+exName(d.Exchange)+", keys "+strings.Join(keys, ", "), width)))
		}
	}
	if carried {
		lines = append(lines, st.Muted.Render(termtext.Truncate(carriedMark+" carried by ladder across a move or replay (in x-ladder-deaths)", width)))
	}
	if repeated(ds) {
		for _, l := range termtext.Wrap("FIRST DEATH is each queue and reason's first (x-death keeps no later time)", max(8, width-2)) {
			lines = append(lines, st.Muted.Render("  "+l))
		}
	}
	return lines
}

// repeated: some entry counts more than one death (its time is the first).
func repeated(ds []retry.Death) bool {
	for _, d := range ds {
		if d.Count > 1 {
			return true
		}
	}
	return false
}

// bodyKind is how a body is shown.
type bodyKind int

const (
	bodyEmpty bodyKind = iota
	bodyJSON
	bodyText
	bodyBinary
)

func (k bodyKind) String() string { return [...]string{"empty", "JSON", "text", "binary"}[k] }

// classifyBody decides between JSON (valid and announced or shaped like it),
// text (valid UTF-8, few controls) and binary.
func classifyBody(b []byte, contentType string) bodyKind {
	if len(b) == 0 {
		return bodyEmpty
	}
	t := bytes.TrimSpace(b)
	if (strings.Contains(contentType, "json") || len(t) > 0 && (t[0] == '{' || t[0] == '[')) && json.Valid(t) {
		return bodyJSON
	}
	if !utf8.Valid(b) {
		return bodyBinary
	}
	ctl := 0
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			ctl++
		}
	}
	if ctl*20 > len(b) {
		return bodyBinary
	}
	return bodyText
}

// renderBody pretty-prints a body: JSON indented, text as is, binary as a
// hex dump; everything sanitised, long lines wrapped.
func renderBody(b []byte, contentType string, width int) ([]string, bodyKind) {
	kind := classifyBody(b, contentType)
	var text string
	switch kind {
	case bodyEmpty:
		return []string{"(empty body)"}, kind
	case bodyJSON:
		var out bytes.Buffer
		if err := json.Indent(&out, bytes.TrimSpace(b), "", "  "); err == nil {
			text = termtext.SanitizeMultiline(out.String(), 4)
		} else {
			text = termtext.SanitizeMultiline(string(b), 4)
		}
	case bodyText:
		text = termtext.SanitizeMultiline(string(b), 4)
	case bodyBinary:
		return hexDump(b, width), kind
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if termtext.Width(l) <= width {
			lines = append(lines, l)
			continue
		}
		lines = append(lines, termtext.Wrap(l, width)...)
	}
	return lines, kind
}

// hexDump is hexdump -C: 16 bytes a line when the width allows, else 8.
func hexDump(b []byte, width int) []string {
	per := 16
	if width < 78 {
		per = 8
	}
	var lines []string
	for off := 0; off < len(b); off += per {
		chunk := b[off:min(off+per, len(b))]
		var s strings.Builder
		s.WriteString(fmt.Sprintf("%08x  ", off))
		for i := range per {
			if i < len(chunk) {
				s.WriteString(fmt.Sprintf("%02x ", chunk[i]))
			} else {
				s.WriteString("   ")
			}
			if i == per/2-1 {
				s.WriteByte(' ')
			}
		}
		s.WriteString(" |")
		for _, c := range chunk {
			if c >= 0x20 && c < 0x7f {
				s.WriteByte(c)
			} else {
				s.WriteByte('.')
			}
		}
		s.WriteByte('|')
		lines = append(lines, s.String())
	}
	return lines
}

// messageBody is the bytes the inspector shows and copies.
func messageBody(m *broker.Message) []byte {
	if m.Body != nil {
		return m.Body
	}
	return []byte(m.BodyPreview)
}

// renderInspector builds the whole document for one message; open is the
// key that shows a header in full (keymap's Open).
func renderInspector(m *broker.Message, at time.Time, width int, open string, st *style.Styles) []string {
	var lines []string
	section := func(title string) {
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, st.Section.Render(termtext.Truncate(title, width)))
	}
	section("Properties")
	lines = append(lines, renderProperties(m, at, width, st)...)
	section("Retry")
	lines = append(lines, renderRetrySummary(m, at, width, st)...)
	section(deathsTitle)
	lines = append(lines, renderDeaths(m.Deaths, width, st)...)
	title := "Headers (" + strconv.Itoa(len(m.Headers)) + ")"
	if len(m.Headers) > 0 {
		title += " · " + open + " shows one in full"
	}
	section(title)
	lines = append(lines, renderHeaders(m.Headers, width, st)...)
	body := messageBody(m)
	bl, kind := renderBody(body, m.Properties.ContentType, width)
	title = "Body · " + kind.String() + " · " + present.Bytes(m.BodySize)
	if m.BodyTruncated || len(body) < m.BodySize {
		title += " · showing the first " + present.Bytes(len(body))
	}
	section(title)
	return append(lines, bl...)
}

// renderHeaderValue is the value of header name in full, for the
// inspector's header view: text with its own line breaks (a stack trace
// reads as one), JSON text indented (Sneakers' retry_info: its backtrace a
// frame a line), long lines wrapped keeping their indentation; binary as a
// hex dump; a table or an array as the header table shows it, uncut.
func renderHeaderValue(name string, v any, width int, st *style.Styles) []string {
	switch x := v.(type) {
	case string:
		return wrapText(valueText(x), width)
	case []byte:
		if utf8.Valid(x) {
			return wrapText(valueText(string(x)), width)
		}
		return hexDump(x, width)
	}
	_, isTbl := asTable(v)
	_, isArr := asArray(v)
	if isTbl || isArr {
		return renderHeaderTable(retry.Headers{name: v}, width, 0, st)
	}
	return wrapText(scalarText(v), width)
}

// jsonValue is a text header's value indented when it is a JSON object or
// array (frameworks keep records in a header as JSON text: Sneakers'
// retry_info); ok is false for any other text.
func jsonValue(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '{' && t[0] != '[' || !json.Valid([]byte(t)) {
		return s, false
	}
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(t), "", "  "); err != nil {
		return s, false
	}
	return b.String(), true
}

// valueText is a text header's value as the header view shows it: JSON
// indented, other text as it is.
func valueText(s string) string {
	t, _ := jsonValue(s)
	return t
}

// headerIsJSON: v is text holding a JSON object or array (the header view
// says so in its title).
func headerIsJSON(v any) bool {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		if !utf8.Valid(x) {
			return false
		}
		s = string(x)
	default:
		return false
	}
	_, ok := jsonValue(s)
	return ok
}

// wrapText is untrusted text over lines: its line breaks kept, tabs
// expanded, everything else made visible, each line wrapped to width
// (wrapIndented).
func wrapText(s string, width int) []string {
	if s == "" {
		return []string{"(empty)"}
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(termtext.SanitizeMultiline(s, 4), "\n"), "\n") {
		lines = append(lines, wrapIndented(l, width)...)
	}
	return lines
}

// valueBreaks are where a word longer than a line may break besides spaces
// and hyphens: after the dots, slashes, colons and parentheses of class
// names, paths and URLs, so a long stack frame breaks between its parts.
const valueBreaks = `./\:,;(`

// wrapIndented wraps one line to width keeping its indentation (up to
// half the width), the lines it goes on to indented two cells more, so a
// wrapped stack frame still reads as one frame below the one before.
// Only spaces are lost, at the breaks.
func wrapIndented(l string, width int) []string {
	if termtext.Width(l) <= width {
		return []string{l}
	}
	body := strings.TrimLeft(l, " ")
	lead := min(len(l)-len(body), width/2)
	hang := min(lead+2, width/2)
	// The first line takes all the room after its indent, the rest the room
	// after the deeper one.
	first := wrapAt(body, max(1, width-lead))[0]
	rest := strings.TrimLeft(strings.TrimPrefix(body, first), " ")
	if !strings.HasPrefix(body, first) {
		first, rest = "", body // not a start of body: wrap it all as the rest
	}
	var lines []string
	if first != "" {
		lines = append(lines, strings.Repeat(" ", lead)+first)
	}
	if rest != "" {
		for _, r := range wrapAt(rest, max(1, width-hang)) {
			lines = append(lines, strings.Repeat(" ", hang)+r)
		}
	}
	return lines
}

// wrapAt wraps s to width at spaces and valueBreaks. ansi.Wrap can leave a
// line one cell over when a break character ends it (charmbracelet/x
// ansi/wrap.go, v0.11.9: "com.acme.X: com.acme.Y:" at its limit): such a
// line is cut again where it must be.
func wrapAt(s string, width int) []string {
	var lines []string
	for _, l := range strings.Split(ansi.Wrap(s, width, valueBreaks), "\n") {
		if termtext.Width(l) > width {
			lines = append(lines, strings.Split(ansi.Hardwrap(l, width, true), "\n")...)
			continue
		}
		lines = append(lines, l)
	}
	return lines
}
