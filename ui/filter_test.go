package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
)

// homeCursor is the queue under the home cursor, "" when none.
func homeCursor(h *harness) string {
	if r := h.m.home.selected(); r != nil {
		return r.name
	}
	return ""
}

// cursorLine is the frame's line with the cursor marker.
func cursorLine(h *harness) string {
	for _, l := range strings.Split(h.plain(), "\n") {
		if strings.HasPrefix(l, "▸") {
			return l
		}
	}
	return ""
}

// A filter that matches a tier lands the cursor on that tier, not on its
// ladder's main queue, and enter opens the tier. The ladder's other members
// stay for context, dimmed, and the cursor cannot reach them.
func TestHomeFilterLandsOnMatch(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("/")
	h.typeText("1m")
	if got := homeCursor(h); got != "orders.retry.1m" {
		t.Fatalf("cursor on %q after the filter, want orders.retry.1m", got)
	}
	h.mustContain("LADDERS (1)", "orders", "├─orders.retry.5s", "└─orders.dlq")
	h.mustNotContain("payments")
	if l := cursorLine(h); !strings.Contains(l, "orders.retry.1m") {
		t.Fatalf("cursor drawn on %q", l)
	}
	h.key("enter") // keep the filter
	// The other members of the ladder are context only.
	for _, k := range []string{"down", "up", "G", "home", "pgdown"} {
		h.key(k)
		if got := homeCursor(h); got != "orders.retry.1m" {
			t.Fatalf("%s moved the cursor to %q, which the filter does not match", k, got)
		}
	}
	for i, r := range h.m.home.rows {
		if r.kind != rowSection && r.name != "orders.retry.1m" && r.selectable() {
			t.Errorf("row %d %q is selectable but does not match", i, r.name)
		}
	}
	h.key("enter")
	if h.m.top() != h.m.browser || h.m.browser.queue != "orders.retry.1m" {
		t.Fatalf("enter opened %q", h.m.browser.queue)
	}
	if got := fc.peeked[len(fc.peeked)-1]; got != "orders.retry.1m" {
		t.Fatalf("peeked %q", got)
	}
}

// Dimmed rows are drawn in the Dimmed style, matches are not.
func TestHomeFilterDimsContext(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.key("/")
	h.typeText("dlq")
	h.key("enter", "esc") // keep, then clear: the cursor stays on the match
	if got := homeCursor(h); got != "orders.dlq" {
		t.Fatalf("clearing the filter moved the cursor to %q", got)
	}
	st := h.m.c.styles
	rows := buildHomeRows(h.m.home.snap, "dlq")
	var dim, lit []string
	for i := range rows {
		if rows[i].kind == rowSection {
			continue
		}
		line := renderHomeRow(&rows[i], broker.Trend{}, homeLayout(80), st, false, false)
		if rows[i].dim {
			dim = append(dim, rows[i].name)
			if plain := ansi.Strip(line); line == plain || line != st.Dimmed.Render(plain) {
				t.Errorf("%s not drawn dimmed: %q", rows[i].name, line)
			}
		} else {
			lit = append(lit, rows[i].name)
		}
	}
	if strings.Join(lit, ",") != "orders.dlq" || len(dim) != 4 {
		t.Fatalf("matched %v, dimmed %v", lit, dim)
	}
}

// n and N go to the next and previous match, across ladders and the other
// queues, wrapping around; enter opens the one reached.
func TestHomeNextPrevMatch(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.key("/")
	h.typeText("i") // payments.wait, audit, the evil queue
	h.key("enter")
	if got := homeCursor(h); got != "payments.wait" {
		t.Fatalf("cursor on %q, want the first match", got)
	}
	for _, step := range []struct{ key, want string }{
		{"n", "audit"}, {"n", evilQueue}, {"n", "payments.wait"}, {"N", evilQueue}, {"N", "audit"},
	} {
		h.key(step.key)
		if got := homeCursor(h); got != step.want {
			t.Fatalf("%s: cursor on %q, want %q", step.key, got, step.want)
		}
	}
	h.key("enter", "enter") // audit has a consumer: the peek is asked first
	if h.m.top() != h.m.browser || h.m.browser.queue != "audit" {
		t.Fatalf("enter opened %q", h.m.browser.queue)
	}
}

// n and N step only through a kept filter: typed, they are the filter's
// text; without a filter they do nothing.
func TestHomeMatchKeysNeedAKeptFilter(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.key("n", "N")
	if got := homeCursor(h); got != "orders" {
		t.Fatalf("n without a filter moved the cursor to %q", got)
	}
	h.key("/")
	h.typeText("payments.wain")
	h.key("backspace")
	h.typeText("t")
	if got := h.m.home.filter.Text(); got != "payments.wait" {
		t.Fatalf("filter %q: n was not typed", got)
	}
	if got := homeCursor(h); got != "payments.wait" {
		t.Fatalf("cursor on %q", got)
	}
}

// In the browser the filter hides what it does not match, and n and N go
// from shown row to shown row, wrapping around.
func TestBrowserNextPrevMatch(t *testing.T) {
	fc := newFake()
	p := fixturePeek(4)
	p.Messages[1].RoutingKey = "billing.created"
	p.Messages[3].RoutingKey = "billing.created"
	fc.peeks["orders.dlq"] = p
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter", "/")
	h.typeText("billing")
	h.key("enter")
	h.mustContain("(of 4)")
	pos := func() int { return h.m.browser.rows[h.m.browser.current()].message.Position }
	for _, step := range []struct {
		key  string
		want int
	}{{"n", 3}, {"n", 1}, {"N", 3}, {"N", 1}, {"N", 3}} {
		h.key(step.key)
		if got := pos(); got != step.want {
			t.Fatalf("%s: on message %d, want %d", step.key, got, step.want)
		}
	}
	if l := cursorLine(h); !strings.Contains(l, "msg-0003") {
		t.Fatalf("cursor drawn on %q", l)
	}
	h.key("enter")
	if h.m.top() != h.m.inspector || h.m.inspector.message.Position != 3 {
		t.Fatal("enter did not open the match reached")
	}
}

// Help lists n and N where they act: on both lists once a filter is kept.
func TestHelpListsMatchKeys(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 120, 40).start()
	for _, where := range []string{"home", "browser"} {
		if strings.Contains(helpText(h), "next match") {
			t.Fatalf("%s: help lists n without a filter", where)
		}
		h.key("/")
		h.typeText("orders")
		h.key("enter")
		text := helpText(h)
		for _, s := range []string{"n       next match", "N       previous match"} {
			if !strings.Contains(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(s), " ")) {
				t.Errorf("%s: help lacks %q:\n%s", where, s, text)
			}
		}
		if f := footer(h); !strings.Contains(f, "n next match") {
			t.Errorf("%s: footer lacks n: %q", where, f)
		}
		h.key("esc") // clear the filter
		if where == "home" {
			h.key("/")
			h.typeText("dlq")
			h.key("enter", "esc", "enter") // open orders.dlq
		}
	}
}

// Each change of the filter puts the cursor on its first match, even when
// the row under the cursor still matches; clearing it keeps the cursor.
func TestHomeFilterMovesToFirstMatch(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.key("G") // the last queue, outside every ladder
	h.key("up")
	if got := homeCursor(h); got != "audit" {
		t.Fatalf("cursor on %q", got)
	}
	h.key("/")
	h.typeText("a") // orders.delayed (not a queue), payments, payments.wait, audit
	if got := homeCursor(h); got != "payments" {
		t.Fatalf("cursor on %q, want the first match payments", got)
	}
	h.typeText("u")
	if got := homeCursor(h); got != "audit" {
		t.Fatalf("cursor on %q, want the only match audit", got)
	}
	h.key("esc")
	if got := homeCursor(h); got != "audit" {
		t.Fatalf("clearing the filter moved the cursor to %q", got)
	}
}

// Sorting keeps the cursor on its message and scrolls the list to it,
// wherever the new order puts it, filtered or not.
func TestSortKeepsCursorVisible(t *testing.T) {
	fc := newFake()
	p := fixturePeek(60)
	for i := range p.Messages {
		p.Messages[i].BodySize = 100 + (i*37)%60 // sizes in another order than positions
		if i%2 == 1 {
			p.Messages[i].RoutingKey = "billing.created"
		}
	}
	fc.peeks["orders.dlq"] = p
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter")
	b := h.m.browser
	check := func(when string, want int) {
		t.Helper()
		if got := b.rows[b.current()].message.Position; got != want {
			t.Fatalf("%s: cursor on message %d, want %d", when, got, want)
		}
		if l := cursorLine(h); !strings.Contains(l, fmt.Sprintf("msg-%04d", want)) {
			t.Fatalf("%s: message %d not on screen under the cursor (line %q):\n%s", when, want, l, h.plain())
		}
	}
	for _, start := range []string{"G", "home"} {
		step := map[string]string{"G": "up", "home": "down"}[start]
		h.key(start, step, step, step)
		want := b.rows[b.current()].message.Position
		for k := sortPosition + 1; k <= sortKeys; k++ {
			h.key("s")
			check(fmt.Sprintf("from %s, sort %v", start, b.sortBy), want)
		}
	}
	h.key("/")
	h.typeText("billing")
	h.key("enter", "G", "up")
	want := b.rows[b.current()].message.Position
	for range sortKeys {
		h.key("s")
		check("filtered, sort "+b.sortBy.String(), want)
	}
}
