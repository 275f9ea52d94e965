package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// A stack trace of 40 frames, its cause on the 30th line.
func longTrace() string {
	var b strings.Builder
	b.WriteString("org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener threw exception\n")
	for i := range 28 {
		fmt.Fprintf(&b, "\tat com.acme.Frame%d.run(Frame%d.java:%d)\n", i, i, 10+i)
	}
	b.WriteString("Caused by: com.acme.billing.CardDeclinedException: card declined for order ORD-17\n")
	for i := range 10 {
		fmt.Fprintf(&b, "\tat com.acme.Deep%d.run(Deep%d.java:%d)\n", i, i, 10+i)
	}
	return b.String()
}

// The inspector cuts a long header at 3 lines; enter offers the headers,
// the one chosen opens in full (its own line breaks kept, scrolling to its
// last line), c copies it whole, esc goes back to the message where it was.
func TestInspectorOpensAHeaderInFull(t *testing.T) {
	fc := newFake()
	m := fixtureMessage(0)
	trace := longTrace()
	m.Headers["x-exception-stacktrace"] = trace
	m.Headers["x-nested"] = []any{map[string]any{"k": "v"}, "second"}
	fc.peeks["orders.dlq"] = &broker.PeekResult{Queue: "orders.dlq", Type: "classic", Total: 1, Ready: 1, Messages: []broker.Message{m}, PeekedAt: fixedNow}
	h := newHarness(t, fc, Options{NoColor: true}, 80, 24).start()
	h.send(openQueueMsg{queue: "orders.dlq", confirmed: true})
	h.key("enter") // the message
	for range 6 {
		h.key("pgdown")
	}
	if strings.Contains(h.plain(), "Caused by") {
		t.Fatal("the document shows the whole trace: nothing to open")
	}
	at := h.m.inspector.vp.YOffset()
	h.key("enter") // the picker of headers
	h.mustContain("Show a header of message #0 in full", "x-exception-stacktrace")
	for h.m.picker.ask.items[h.m.picker.nav.Cursor] != "x-exception-stacktrace" {
		h.key("down")
	}
	h.key("enter")
	h.mustContain("header x-exception-stacktrace (longstr, 42 lines) of message #0", "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException")
	h.key("G")
	h.mustContain("Caused by: com.acme.billing.CardDeclinedException: card declined for order ORD-", "Deep9.java:19")
	h.key("c")
	if n := len(h.clipboard); n == 0 || !strings.Contains(h.clipboard[n-1], "Deep9.java:19") {
		t.Fatalf("copied %q", h.clipboard)
	}
	h.key("esc")
	if h.m.top() != screen(h.m.inspector) || h.m.inspector.header != "" || h.m.inspector.vp.YOffset() != at {
		t.Fatalf("esc: top %T, header %q, offset %d (was %d)", h.m.top(), h.m.inspector.header, h.m.inspector.vp.YOffset(), at)
	}
	h.mustContain("enter full header")
	if doc := strings.Join(renderInspector(h.m.inspector.message, fixedNow, 80, "enter", newStylesForTest()), "\n"); !strings.Contains(doc, "Headers (12) · enter shows one in full") {
		t.Fatal("the document does not say enter shows a header in full")
	}
	// A nested value opens as the table shows it, every element.
	h.send(headerChosenMsg{message: h.m.inspector.message, name: "x-nested"})
	h.mustContain("header x-nested (array[2]", "[0]", "[1]", "second")
}

func TestRenderHeaderValue(t *testing.T) {
	st := newStylesForTest()
	lines := renderHeaderValue("t", "line one\n\tindented\x1b[2J\n", 40, st)
	if len(lines) != 2 || lines[0] != "line one" || lines[1] != `    indented\x1b[2J` {
		t.Fatalf("text: %q", lines)
	}
	if got := renderHeaderValue("b", []byte{0xff, 0x00}, 80, st); len(got) != 1 || !strings.HasPrefix(got[0], "00000000  ff 00") {
		t.Fatalf("binary: %q", got)
	}
	long := strings.Repeat("word ", 100)
	for _, l := range renderHeaderValue("w", long, 30, st) {
		if len(l) > 30 {
			t.Fatalf("line %q wider than 30", l)
		}
	}
	if got := renderHeaderValue("n", retry.Headers{"a": int32(1)}, 80, st); len(got) < 3 {
		t.Fatalf("table: %q", got)
	}
}
