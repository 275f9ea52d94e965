package ui

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/termtext"
)

// sneakersRetryInfo is Sneakers' retry_info header (jondot/sneakers:
// lib/sneakers/handlers/maxretry.rb writes it as JSON text): one line,
// its backtrace an array of frames.
func sneakersRetryInfo(frames int) string {
	bt := make([]string, frames)
	for i := range bt {
		bt[i] = fmt.Sprintf(`"/srv/app/workers/registration_worker.rb:%d:in 'work_%d'"`, 10+i, i)
	}
	return `{"error":"boom","num_attempts":6,"failed_at":"2026-03-04T11:50:00+00:00","error_class":"RuntimeError",` +
		`"error_message":"registration 42 rejected","backtrace":[` + strings.Join(bt, ",") + `]}`
}

// nonSpace is s without its spaces: what wrapping may not lose.
func nonSpace(s string) string { return strings.Join(strings.Fields(s), "") }

// A long value opens whole: every line of a stack trace, none cut, none
// wider than the screen; JSON text indented, a frame a line.
func TestHeaderValueShownWhole(t *testing.T) {
	st := newStylesForTest()
	trace := longTrace()
	lines := renderHeaderValue("x-exception-stacktrace", trace, 80, st)
	doc := strings.Join(lines, "\n")
	for _, l := range strings.Split(strings.TrimRight(termtext.SanitizeMultiline(trace, 4), "\n"), "\n") {
		if !strings.Contains(nonSpace(doc), nonSpace(l)) {
			t.Errorf("line %q is not shown", l)
		}
	}
	if strings.Contains(doc, termtext.Ellipsis) {
		t.Errorf("a line was cut:\n%s", doc)
	}
	for _, l := range lines {
		if termtext.Width(l) > 80 {
			t.Errorf("%d cells: %q", termtext.Width(l), l)
		}
	}
	// The document keeps its 3 lines a value, the last ending in one
	// ellipsis, also when the value fills its lines (JSON has no spaces).
	for _, v := range []string{trace, sneakersRetryInfo(40), strings.Repeat("x", 300)} {
		cut := renderHeaders(map[string]any{"t": v}, 80, st)
		last := cut[len(cut)-1]
		if len(cut) != 1+headerValueLines || !strings.HasSuffix(last, termtext.Ellipsis) || strings.HasSuffix(last, termtext.Ellipsis+termtext.Ellipsis) || termtext.Width(last) > 80 {
			t.Errorf("the document shows %q", cut)
		}
	}

	info := sneakersRetryInfo(40)
	lines = renderHeaderValue("retry_info", info, 80, st)
	if lines[0] != "{" || !strings.Contains(strings.Join(lines, "\n"), "\n  \"backtrace\": [\n    \"/srv/app/workers/registration_worker.rb:10:in 'work_0'\",\n") {
		t.Errorf("JSON not indented:\n%s", strings.Join(lines, "\n"))
	}
	if nonSpace(strings.Join(lines, "")) != nonSpace(info) {
		t.Error("the JSON lost text")
	}
	if !headerIsJSON(info) || !headerIsJSON([]byte(info)) || headerIsJSON("{not json") || headerIsJSON("12") || headerIsJSON([]byte{'{', 0xff, '}'}) {
		t.Error("headerIsJSON")
	}
	// Sanitised: an escape inside a JSON string stays text.
	for _, l := range renderHeaderValue("j", `{"a":"x\u001b]0;pwned\u0007","b":"`+"\x1b[2J"+`"}`, 80, st) {
		if strings.ContainsAny(l, "\x1b\x07") {
			t.Fatalf("control reached the view: %q", l)
		}
	}
}

// Wrapped to 80 columns (or fewer) a value loses nothing but spaces at
// the breaks: long words (class names, URLs, wide runes) break at their
// dots or where they must, indentation stays and a frame's continuation
// is indented deeper.
func TestHeaderValueWrapLosesNoText(t *testing.T) {
	st := newStylesForTest()
	rng := rand.New(rand.NewPCG(3, 5))
	words := []string{"at", "com.acme.billing.CardDeclinedException:", "card", "declined", "https://example.com/a/very/long/path/that/goes/on/and/on/and/on/for/ever/and/ever",
		"注文サービス", "🐇", "\t", "    ", "x", "AbstractMessageListenerContainer$AsyncMessageProcessingConsumer.run(AbstractMessageListenerContainer.java:1234)", "\x1b[31m", "-"}
	for range 500 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(8) == 0 {
				b.WriteString("\n")
			} else {
				b.WriteString(" ")
			}
		}
		text := b.String()
		if strings.TrimSpace(text) == "" {
			continue
		}
		w := 20 + rng.IntN(61)
		lines := renderHeaderValue("v", text, w, st)
		for _, l := range lines {
			if termtext.Width(l) > w {
				t.Fatalf("width %d: a line of %d cells %q\n%q", w, termtext.Width(l), l, text)
			}
		}
		want := strings.TrimRight(termtext.SanitizeMultiline(text, 4), "\n")
		if got := strings.Join(lines, ""); nonSpace(got) != nonSpace(want) {
			t.Fatalf("width %d: lost text\nwant %q\ngot  %q", w, nonSpace(want), nonSpace(got))
		}
	}
	frame := "    at org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter.invokeHandler(MessagingMessageListenerAdapter.java:123)"
	lines := wrapIndented(frame, 80)
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "    at org.springframework.") {
		t.Errorf("frame wrapped as %q", lines)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "      ") || strings.HasPrefix(l, "       ") {
			t.Errorf("continuation %q not indented 6 (the frame's 4, and 2)", l)
		}
	}
	// It breaks after a dot, not in the middle of a name.
	if !strings.HasSuffix(lines[0], ".") {
		t.Errorf("first line %q", lines[0])
	}
}

// The header view at 80×24: enter, the header picked, opens Sneakers'
// retry_info indented and scrolls with the arrows, page keys, home and
// end; esc returns to the message; help lists the keys.
func TestInspectorScrollsAHeaderAt80x24(t *testing.T) {
	fc := newFake()
	m := fixtureMessage(0)
	m.Headers["retry_info"] = sneakersRetryInfo(60)
	m.Headers["NServiceBus.ExceptionInfo.StackTrace"] = "System.Exception: boom\r\n   at Sales.Handle() in C:\\src\\Sales.cs:line 12\r\n   at NServiceBus.Pipeline.Invoke()"
	fc.peeks["orders.dlq"] = &broker.PeekResult{Queue: "orders.dlq", Type: "classic", Total: 1, Ready: 1, Messages: []broker.Message{m}, PeekedAt: fixedNow}
	h := newHarness(t, fc, Options{NoColor: true}, 80, 24).start()
	h.send(openQueueMsg{queue: "orders.dlq", confirmed: true})
	h.key("enter")
	h.key("enter") // the picker
	pick := func(name string) {
		t.Helper()
		for i := 0; h.m.picker.ask.items[h.m.picker.nav.Cursor] != name; i++ {
			if i > len(h.m.picker.ask.items) {
				t.Fatalf("no %s in the picker", name)
			}
			h.key("down")
		}
		h.key("enter")
	}
	pick("retry_info")
	in := h.m.inspector
	h.mustContain("header retry_info (longstr, JSON, 69 lines) of message #0", `  "error_message": "registration 42 rejected",`, `"backtrace": [`, "work_0'")
	h.mustNotContain("work_59'")
	frame := func() string { return h.plain() }
	top := frame()
	h.key("down")
	if in.vp.YOffset() != 1 {
		t.Fatalf("down: offset %d", in.vp.YOffset())
	}
	h.key("up")
	h.key("pgdown")
	if in.vp.YOffset() != in.vp.Height() || frame() == top {
		t.Fatalf("page down: offset %d, height %d", in.vp.YOffset(), in.vp.Height())
	}
	h.mustNotContain(`"error_class"`)
	h.key("pgup")
	if in.vp.YOffset() != 0 {
		t.Fatalf("page up: offset %d", in.vp.YOffset())
	}
	h.key("end")
	h.mustContain("work_59'", "100%")
	h.mustNotContain("work_0'")
	h.key("home")
	if frame() != top {
		t.Fatalf("home: not the top:\n%s", frame())
	}
	for _, l := range strings.Split(frame(), "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("a line of %d cells: %q", ansi.StringWidth(l), l)
		}
	}
	h.key("?")
	for _, keyDesc := range [][2]string{{"home", "first"}, {"G/end", "last"}, {"pgup/^u", "page up"}, {"c", "copy value"}, {"esc", "message"}} {
		if !regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(keyDesc[0]) + ` +` + keyDesc[1]).MatchString(h.plain()) {
			t.Errorf("help lacks %q:\n%s", keyDesc, h.plain())
		}
	}
	h.key("esc")
	h.key("esc")
	if h.m.top() != screen(in) || in.header != "" {
		t.Fatalf("esc: top %T, header %q", h.m.top(), in.header)
	}
	// A Windows trace's CRLF lines read as lines, nothing escaped.
	h.key("enter")
	pick("NServiceBus.ExceptionInfo.StackTrace")
	h.mustContain("\nSystem.Exception: boom ", "\n   at Sales.Handle() in C:\\src\\Sales.cs:line 12 ", "\n   at NServiceBus.Pipeline.Invoke() ")
	h.mustNotContain(`\r`)
}
