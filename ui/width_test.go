package ui

import (
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// invisibleName holds a soft hyphen, a zero-width space and joiner, a BOM
// and a variation selector: runes terminals draw in 0, 1 or 2 cells, so
// drawn as they are they shift the columns after them.
const invisibleName = "pay\u00adments\u200b.dlq\u200d\ufeff\ufe0f"

// drawsNothing: a rune whose width a terminal decides for itself.
func drawsNothing(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r)
}

// checkColumns: no such rune reaches the frame (they are written out, so
// the cells Width counts are the cells drawn), every line fits, and the
// row of the name ends its READY column where the header does.
func checkColumns(t *testing.T, h *harness, header, ready string) {
	t.Helper()
	frame := h.plain()
	for _, r := range frame {
		if drawsNothing(r) {
			t.Fatalf("%U reached the frame:\n%s", r, frame)
		}
	}
	var head, row string
	for _, l := range strings.Split(frame, "\n") {
		if ansi.StringWidth(l) > h.m.w {
			t.Errorf("line of %d cells at %d: %q", ansi.StringWidth(l), h.m.w, l)
		}
		if head == "" && strings.Contains(l, header) {
			head = l
		}
		if strings.Contains(l, `pay\u00ad`) { // its start: a cut name keeps it
			row = l
		}
	}
	if head == "" || row == "" {
		t.Fatalf("no header %q or no row of the name:\n%s", header, frame)
	}
	end := func(l, sub string) int { i := strings.Index(l, sub); return ansi.StringWidth(l[:i+len(sub)]) }
	if i := strings.Index(row, ready); i < 0 || end(row, ready) != end(head, header) {
		t.Fatalf("the name's row ends READY at cell %d, the header at %d:\n%s\n%s", end(row, ready), end(head, header), head, row)
	}
}

// The home table keeps its columns with such a name.
func TestInvisibleRunesKeepHomeColumns(t *testing.T) {
	fc := newFake()
	fc.snap.Topology.Queues = append(fc.snap.Topology.Queues, queue(invisibleName, 7, 0, 0, 0, 0))
	h := newHarness(t, fc, Options{NoColor: true}, 80, 24).start()
	checkColumns(t, h, "READY", " 7")
}

// The browser keeps its columns with such a routing key, and its banner
// with such a queue name.
func TestInvisibleRunesKeepBrowserColumns(t *testing.T) {
	fc := newFake()
	fc.snap.Topology.Queues = append(fc.snap.Topology.Queues, queue(invisibleName, 3, 0, 0, 0, 0))
	p := fixturePeek(3)
	p.Queue = invisibleName
	for i := range p.Messages {
		p.Messages[i].RoutingKey = invisibleName
	}
	fc.peeks[invisibleName] = p
	h := newHarness(t, fc, Options{NoColor: true}, 80, 24).start()
	h.send(openQueueMsg{queue: invisibleName, confirmed: true})
	h.mustContain("peeked 3")
	frame := h.plain()
	for _, r := range frame {
		if drawsNothing(r) {
			t.Fatalf("%U reached the frame:\n%s", r, frame)
		}
	}
	lines := strings.Split(frame, "\n")
	var rows []string
	for _, l := range lines {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("line of %d cells: %q", ansi.StringWidth(l), l)
		}
		if strings.Contains(l, "msg-000") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 3 || !strings.Contains(frame, `pay\u00adments`) {
		t.Fatalf("rows %q in:\n%s", rows, frame)
	}
	for _, r := range rows[1:] {
		if ansi.StringWidth(r) != ansi.StringWidth(rows[0]) {
			t.Fatalf("rows of %d and %d cells:\n%s\n%s", ansi.StringWidth(rows[0]), ansi.StringWidth(r), rows[0], r)
		}
	}
}
