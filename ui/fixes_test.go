package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// Tests for the defects an exploratory tester found, one block a defect.

// 1. While the frame says "terminal too small" no key acts on the hidden
// screen; only q and ctrl+c quit, and data messages are still applied.
func TestTooSmallOnlyQuitActs(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter") // the browser of orders.dlq
	peeks := len(fc.peeked)
	h.send(tea.WindowSizeMsg{Width: 79, Height: 23})
	h.mustContain("terminal too small")
	h.key("space", "a", "m", "enter", "y", "enter", "y", "r", "s", "/", "?", "esc", "esc")
	h.send(tea.PasteMsg{Content: "pasted"})
	if h.m.top() != h.m.browser || len(h.m.stack) != 2 {
		t.Fatalf("a key changed the screen while too small: top %T, %d screens", h.m.top(), len(h.m.stack))
	}
	if len(fc.moves) != 0 || len(fc.peeked) != peeks || len(h.m.browser.marks) != 0 || h.m.browser.filter.Capturing() || h.m.browser.sortBy != sortPosition {
		t.Fatalf("keys acted while too small: moves %v, peeks %d→%d, marks %v, filtering %v, sort %v",
			fc.moves, peeks, len(fc.peeked), h.m.browser.marks, h.m.browser.filter.Capturing(), h.m.browser.sortBy)
	}
	// Data still arrives: a snapshot taken while too small is shown later.
	s := fixtureSnapshot()
	s.BrokerVersion = "9.9.9"
	h.send(snapshotMsg{gen: h.m.gen, snap: s, at: fixedNow})
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.mustContain("RabbitMQ 9.9.9", "msg-0000")
	h.mustNotContain("marked")

	// On home too, and quitting still works.
	h2 := newHarness(t, newFake(), Options{}, 79, 23).start()
	h2.key("down", "down", "down", "enter", "m", "v")
	if len(h2.m.stack) != 1 || len(h2.m.home.rows) == 0 {
		t.Fatalf("keys acted on home while too small (%d screens), or the snapshot was not applied", len(h2.m.stack))
	}
	for _, k := range []string{"q", "ctrl+c"} {
		if _, cmd := h2.m.Update(keyMsg(k)); !isQuit(cmd) {
			t.Fatalf("%s did not quit while too small", k)
		}
	}
}

// openInspector goes home → orders.dlq → message at the cursor.
func openInspector(h *harness, keys ...string) {
	h.key("down", "down", "down", "enter")
	h.key(keys...)
	h.key("enter")
	if h.m.top() != h.m.inspector {
		h.t.Fatalf("not in the inspector: %T", h.m.top())
	}
}

// 2. After a move from the inspector the stale inspector closes: the
// browser shows, re-peeked. A move that skipped everything changed nothing,
// so the inspector stays.
func TestMoveFromInspectorReturnsToBrowser(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	openInspector(h, "down")
	h.key("m")
	h.mustContain("this message (#1)")
	h.key("enter", "enter") // dry run, then the move
	h.mustContain("Summary", "moved 1")
	h.key("enter")
	if h.m.top() != h.m.browser {
		t.Fatalf("closing the summary went to %T, want the browser", h.m.top())
	}
	if got := strings.Join(fc.peeked, ","); got != "orders.dlq,orders.dlq" {
		t.Fatalf("the browser was not re-peeked: %q", got)
	}
	if len(fc.moves) != 2 || !slices.Equal(fc.moves[1].Positions, []int{1}) {
		t.Fatalf("moves %+v", fc.moves)
	}

	// Every message skipped: nothing changed, back to the same inspector.
	fc = newFake()
	fc.skipNote = "no x-death origin"
	h = newHarness(t, fc, Options{}, 80, 24).start()
	openInspector(h)
	h.key("m", "enter", "enter", "esc")
	if h.m.top() != h.m.inspector || len(fc.peeked) != 1 {
		t.Fatalf("after an all-skipped move: %T, peeks %v", h.m.top(), fc.peeked)
	}

	// From the browser, back to the browser as before.
	fc = newFake()
	h = newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter", "m", "enter", "enter", "enter")
	if h.m.top() != h.m.browser || len(fc.peeked) != 2 {
		t.Fatalf("from the browser: %T, peeks %v", h.m.top(), fc.peeked)
	}
}

// 3. The inspector opens the dialog on the browser's spec: depth, ladder,
// marks and their ids, with the message first.
func TestInspectorMoveSpec(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter", "space", "space", "up", "up", "enter", "m")
	h.mustContain("this message (#0)")
	mv := h.m.move
	scopes, _ := mv.Choices(movedialog.FieldScope)
	if got := strings.Join(scopes, "|"); got != "this message (#0)|marked messages (2)|the first N|the whole queue (3 ready)" {
		t.Fatalf("scopes %q", got)
	}
	if mv.Spec().Ladder == nil || mv.Spec().Ladder.Main != "orders" || !slices.Contains(first(mv.Choices(movedialog.FieldTarget)), "main queue orders") {
		t.Fatal("the inspector's spec lacks the ladder")
	}
	h.key("right", "enter") // marked messages, dry run
	if len(fc.moves) != 1 || !slices.Equal(fc.moves[0].Positions, []int{0, 1}) || !slices.Equal(fc.moves[0].PositionIDs, []string{"msg-0000", "msg-0001"}) {
		t.Fatalf("marked move from the inspector: %+v", fc.moves)
	}
}

// helpText opens help on the current screen and returns it.
func helpText(h *harness) string {
	h.key("?")
	if h.m.top() != h.m.helpView {
		h.t.Fatal("? did not open help")
	}
	// Without the title bar and the footer: the keys of the help screen.
	lines := strings.Split(h.plain(), "\n")
	h.key("?")
	return strings.Join(lines[1:len(lines)-1], "\n")
}

// footer is the frame's last line.
func footer(h *harness) string {
	lines := strings.Split(h.plain(), "\n")
	return lines[len(lines)-1]
}

// 4. Help, the ? screen and the footer, lists only what acts where it is.
func TestHelpIsPerScreen(t *testing.T) {
	opts := Options{Open: func(string) (broker.Client, error) { return newFake(), nil }}
	h := newHarness(t, newFake(), opts, 100, 40).start()
	check := func(where, text string, has, hasNot []string) {
		t.Helper()
		for _, s := range has {
			if !strings.Contains(text, s) {
				t.Errorf("%s: help lacks %q:\n%s", where, s, text)
			}
		}
		for _, s := range hasNot {
			if strings.Contains(text, s) {
				t.Errorf("%s: help lists %q, which does nothing there:\n%s", where, s, text)
			}
		}
	}
	check("home", helpText(h), []string{"Keys: ladders", "open", "filter", "move/re-publish", "refresh", "vhost", "quit", "sort by depth", "hide empty"},
		[]string{"mark", "copy body", "space", "next field", "clear filter", "esc"})
	h.key("down", "down", "down", "enter")
	check("browser", helpText(h), []string{"Keys: queue browser", "sort", "mark all/none", "move/re-publish", "refresh", "esc", "vhost"},
		[]string{"copy body", "next field", "clear filter"})
	h.key("enter")
	check("inspector", helpText(h), []string{"Keys: message inspector", "copy body", "move/re-publish", "page down"},
		[]string{"refresh", "sort", "filter", "mark", "next field"})
	h.key("m")
	check("move form", helpText(h), []string{"preview", "next field", "previous choice"}, []string{"copy body", "vhost", "refresh"})

	// The filter's own keys while one is typed; esc clears a kept filter.
	h.key("esc", "esc", "/")
	f := footer(h)
	check("typing a filter", f, []string{"enter keep filter", "esc clear filter"}, []string{"enter open", "esc back"})
	h.typeText("0001")
	h.key("enter")
	check("filter kept", footer(h), []string{"enter open", "esc clear filter"}, []string{"esc back"})
	h.key("esc")
	check("filter cleared", footer(h), []string{"esc back"}, []string{"clear filter"})

	// Read-only still removes mutations, per screen too.
	ro := newHarness(t, newFake(), Options{ReadOnly: true}, 100, 40).start()
	ro.key("down", "down", "down", "enter")
	check("read-only browser", helpText(ro)+footer(ro), []string{"sort"}, []string{"move/re-publish", "mark"})
}

// 4. The dialog's hints and the footer say the same at every step.
func TestMoveHintsMatchFooter(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 120, 40).start()
	h.key("down", "down", "down", "enter", "m")
	steps := []struct {
		name string
		keys []string
		want string
	}{
		{"form", nil, "enter/y preview"},
		{"preview", []string{"enter"}, "enter/y move now"},
		{"summary", []string{"enter"}, "enter/esc close"},
	}
	for _, st := range steps {
		h.key(st.keys...)
		f := footer(h)
		body := strings.Join(strings.Split(h.plain(), "\n")[1:], "\n")
		if !strings.Contains(f, st.want) || !strings.Contains(body, st.want) {
			t.Fatalf("%s: footer %q and dialog should both say %q:\n%s", st.name, f, st.want, h.plain())
		}
		for _, b := range h.m.move.ShortHelp() {
			hint := b.Help().Key + " " + b.Help().Desc
			if !strings.Contains(body, hint) {
				t.Fatalf("%s: the footer's %q is not in the dialog", st.name, hint)
			}
		}
	}
	if strings.Contains(footer(h), "confirm") || strings.Contains(footer(h), "cancel") {
		t.Fatalf("summary footer still says confirm/cancel: %q", footer(h))
	}
	// While a field is typed, y and n are text: the hints say enter and esc.
	h2 := newHarness(t, newFake(), Options{}, 120, 40).start()
	h2.key("down", "down", "down", "m", "tab") // the N field
	if f := footer(h2); !strings.Contains(f, "enter preview") || strings.Contains(f, "enter/y") || strings.Contains(f, "esc/n") || strings.Contains(f, "change") {
		t.Fatalf("typing footer %q", f)
	}
}

// Every binding a screen's help lists is enabled in the keymap or dropped,
// and the help screen only ever shows its screen's bindings.
func TestHelpScreenShowsFromScreen(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 100, 40).start()
	h.key("down", "down", "down", "enter", "enter", "?")
	got := h.m.helpView.FullHelp()
	want := h.m.inspector.FullHelp()
	flat := func(gs [][]key.Binding) (out []string) {
		for _, g := range gs {
			for _, b := range g {
				out = append(out, b.Help().Key)
			}
		}
		return out
	}
	if !slices.Equal(flat(got), flat(want)) {
		t.Fatalf("help shows %v, the inspector's keys are %v", flat(got), flat(want))
	}
}

// 8. Fixing a wrong N clears its error.
func TestFirstNErrorClearsOnEdit(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "m", "tab") // orders.dlq from home, to N
	h.typeText("x")
	h.key("enter")
	h.mustContain(`not "10x"`)
	h.key("backspace")
	h.mustNotContain(`not "10x"`, "must be a positive number")
	h.typeText("y")
	h.key("enter")
	h.mustContain(`not "10y"`)
	h.send(tea.PasteMsg{Content: "0"})
	h.mustNotContain("must be a positive number")
	if len(fc.moves) != 0 {
		t.Fatal("an invalid N reached the broker")
	}
}

// 9. An empty peek shows no side effects (nothing was delivered).
func TestEmptyPeekHidesSideEffects(t *testing.T) {
	fc := newFake()
	fc.peeks["orders.dlq"] = &broker.PeekResult{Queue: "orders.dlq", Type: "classic",
		SideEffects: []string{"every browsed message was requeued: its redelivered flag is now set"}}
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter")
	h.mustContain("no messages ready")
	h.mustNotContain(present.GlyphWarning, "redelivered flag")
	// Released messages did leave the queue: that is shown.
	fc.peeks["orders.dlq"].Released = 2
	h.key("r")
	h.mustContain("▲ every browsed message was requeued")
}

// 5. At 80 columns ages and due times fit their columns whole.
func TestBrowserCellsFitAt80(t *testing.T) {
	c := browserLayout(80)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{46*time.Minute + 30*time.Second, "46m"},
		{9*time.Minute + 59*time.Second, "9m59s"},
		{2*time.Hour + 5*time.Minute + 30*time.Second, "2h5m"},
		{76 * time.Hour, "3d4h"},
		{23*time.Hour + 59*time.Minute, "23h59m"},
	} {
		if got := present.Age(fixedNow.Add(-tc.d), fixedNow); got != tc.want {
			t.Errorf("present.Age(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
	for _, d := range []time.Duration{45 * time.Second, 9*time.Minute + 59*time.Second, 46*time.Minute + 30*time.Second, 23*time.Hour + 59*time.Minute, 99 * 24 * time.Hour} {
		if got := present.Age(fixedNow.Add(-d), fixedNow); termtext.Width(got) > c.age {
			t.Errorf("age %q is wider than its column (%d)", got, c.age)
		}
		if got := present.Age(fixedNow.Add(d), fixedNow); termtext.Width(got) > c.age {
			t.Errorf("future age %q is wider than its column (%d)", got, c.age)
		}
		for _, long := range []bool{false, true} {
			w := c.due
			if long {
				w = browserLayout(160).due
			}
			for _, h := range []*topology.HoLMark{{Overdue: d}, {DueAt: fixedNow.Add(d)}} {
				got := present.Due(h, fixedNow, dueForm(long))
				if termtext.Width(got) > w {
					t.Errorf("due %q (long %v) is wider than its column (%d)", got, long, w)
				}
				if h.Overdue > 0 && strings.HasPrefix(got, "+") {
					t.Errorf("overdue shown as %q, which reads like a time to come", got)
				}
			}
		}
	}
	// A whole row: no cell is cut (no ellipsis) for a plain message.
	msg := fixtureMessage(1)
	msg.Properties.Timestamp = ts(46*time.Minute + 30*time.Second)
	msg.HoL = &topology.HoLMark{Overdue: 8*time.Minute + 24*time.Second}
	row := renderBrowserRow(&msg, c, fixedNow)
	if !strings.Contains(row, " 46m ") || !strings.Contains(row, "late 8m") {
		t.Fatalf("row %q", row)
	}
}

// 5. The header-name column is as wide as the longest name (up to 45%).
func TestHeaderNameColumn(t *testing.T) {
	st := newStylesForTest()
	h := retry.Headers{"x-first-death-exchange": "orders-x", "x-first-death-queue": "orders", "a": int32(1)}
	out := ansi.Strip(strings.Join(renderHeaders(h, 80, st), "\n"))
	if !strings.Contains(out, "x-first-death-exchange ") || strings.Contains(out, "…") {
		t.Fatalf("names cut at 80 columns:\n%s", out)
	}
	long := retry.Headers{strings.Repeat("n", 60): "v"}
	for _, l := range renderHeaders(long, 80, st) {
		if w := ansi.StringWidth(l); w > 80 {
			t.Fatalf("line %d wide", w)
		}
	}
	if nw, _ := headerCols(long, 80); nw != 36 {
		t.Fatalf("a 60-cell name takes %d columns at 80, want 45%% (36)", nw)
	}
	if nw, _ := headerCols(retry.Headers{"x": retry.Headers{"nested-name": 1}}, 200); nw != len("  nested-name") {
		t.Fatalf("nested names: column %d", nw)
	}
}

// 5. Home details wrap at words instead of cutting a queue name.
func TestHomeDetailsWrap(t *testing.T) {
	s := fixtureSnapshot()
	s.Ladders[0].Main = "payments.process.settlements"
	rows := buildHomeRows(s, "")
	var tier *homeRow
	for i := range rows {
		if rows[i].kind == rowTier && rows[i].ladder == 0 {
			tier = &rows[i]
			break
		}
	}
	lines := renderRowDetails(tier, s, 80, 6, newStylesForTest(), "more")
	text := ansi.Strip(strings.Join(lines, "\n"))
	if !strings.Contains(strings.ReplaceAll(text, "\n", " "), "returns to payments.process.settlements") || strings.Contains(text, "…") {
		t.Fatalf("details cut a name:\n%s", text)
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 80 {
			t.Fatalf("details line too wide: %q", l)
		}
	}
}

// 6. Singular and plural, scope, via names, rate, retries.
func TestWording(t *testing.T) {
	s := fixtureSnapshot()
	s.Ladders = s.Ladders[:1]
	s.Topology.Queues = s.Topology.Queues[:1]
	fc := newFake()
	fc.snap = s
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.mustContain("1 ladder · 1 queue · ")
	h.mustNotContain("1 ladders", "1 queues")

	st := newStylesForTest()
	m := fixtureMessage(0)
	m.Retry = retry.RetryState{Source: retry.SourceNone}
	text := ansi.Strip(strings.Join(renderRetrySummary(&m, fixedNow, 80, st), "\n"))
	if !strings.Contains(text, "0 (no retry recorded)") || strings.Contains(text, "first delivery") {
		t.Errorf("dead-lettered message without a count:\n%s", text)
	}
	m.Deaths = nil
	text = ansi.Strip(strings.Join(renderRetrySummary(&m, fixedNow, 80, st), "\n"))
	if !strings.Contains(text, "a first delivery") {
		t.Errorf("never dead-lettered, no count:\n%s", text)
	}
}

// 7. End to end: an all-skipped move from the browser reads as a result.
func TestSkippedMoveFlow(t *testing.T) {
	fc := newFake()
	fc.skipNote = "no x-death origin: it was never dead-lettered"
	h := newHarness(t, fc, Options{}, 100, 40).start()
	h.key("down", "down", "down", "enter", "a", "m", "enter")
	h.mustContain("Nothing would move", "#0 msg-0000: skipped: no x-death origin")
	h.key("enter")
	h.mustContain("Nothing moved: all 3 messages stay in orders.dlq", "#2 msg-0002: no x-death origin")
	h.mustNotContain("move stopped", "some messages were not moved")
}

// A finding's full text is on the screen at 80×24: the details grow for a
// row with long findings instead of cutting them with "…".
func TestFindingsReadInFullAt80x24(t *testing.T) {
	fc := newFake()
	long := "messages wait here for a very long time because the head of the queue holds a delay far longer than every message behind it, and nothing expires until it does"
	fc.snap.Findings = append(fc.snap.Findings,
		topology.Finding{Code: topology.CodeHoLRisk, Severity: topology.SeverityWarning, Queue: "orders.retry.1m", Message: long},
		topology.Finding{Code: topology.CodeRequeueStorm, Severity: topology.SeverityWarning, Queue: "orders.retry.1m", Message: "second " + long})
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down")
	out := h.plain()
	if strings.Contains(out, "… …") || !strings.Contains(out, "nothing expires") || strings.Count(out, "until it does") != 2 {
		t.Fatalf("findings cut:\n%s", out)
	}
	h.mustContain("▸ ├─orders.retry.1m")
}

// The browser's footer at 80 columns keeps what esc does.
func TestBrowserFooterKeepsEscAt80(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.send(openQueueMsg{queue: "orders.dlq"})
	lines := strings.Split(h.plain(), "\n")
	if foot := lines[len(lines)-1]; !strings.Contains(foot, "esc back") {
		t.Fatalf("footer %q", foot)
	}
}

// The browser shows a snapshot: the title says when it was taken.
func TestBrowserTitleSaysSnapshotTime(t *testing.T) {
	fc := newFake()
	fc.peeks["orders.dlq"].PeekedAt = fixedNow.Add(-3 * time.Second)
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.mustContain("● live")
	h.send(openQueueMsg{queue: "orders.dlq"})
	title := strings.Split(h.plain(), "\n")[0]
	if !strings.Contains(title, "snapshot "+present.Clock(fixedNow.Add(-3*time.Second))) || strings.Contains(title, "live") {
		t.Fatalf("title %q", title)
	}
	h.key("esc")
	h.mustContain("● live")
}

// At 80 columns a long vhost name is what the title cuts: rates, read-only
// and the connection are never the part cut off.
func TestTitleCutsTheVhostNotItsFlags(t *testing.T) {
	fc := newFake()
	fc.vhost = "ladder-test.TestSomethingWithAVeryLongName-1764604800123"
	fc.snap.Topology.RatesFrom = topology.RatesFromPrometheus
	h := newHarness(t, fc, Options{ReadOnly: true}, 80, 24).start()
	title := strings.Split(h.plain(), "\n")[0]
	for _, want := range []string{"vhost ladder-t", "4.1.0", "rates: prometheus", "read-only", "● live"} {
		if !strings.Contains(title, want) {
			t.Errorf("title %q lacks %q", title, want)
		}
	}
	if termtext.Width(title) > 80 || strings.Contains(title, fc.vhost) {
		t.Errorf("title %q: want the vhost cut to fit 80 columns", title)
	}
	// With room, nothing is cut.
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	title = strings.Split(h.plain(), "\n")[0]
	if !strings.Contains(title, "vhost "+fc.vhost+" · RabbitMQ 4.1.0 · rates: prometheus · read-only") {
		t.Errorf("title at 160: %q", title)
	}
}

// first is the first of two results.
func first[T, U any](t T, _ U) T { return t }

// The ? screen of the ladders screen says what each column means (the
// docs/tui.md's columns, from the same list), in the room the keys
// leave; at 80×24 it points to docs/tui.md for what does not fit.
func TestHelpOfTheLaddersScreenSaysWhatColumnsMean(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 120, 50).start()
	h.key("?")
	h.mustContain("Columns", "IN/s", "arrivals a second", "DRAIN", "~time to empty at the net rate")
	small := newHarness(t, newFake(), Options{}, 80, 24).start()
	small.key("?")
	small.mustContain("Columns", "docs/tui.md")
	// Another screen's help has no columns.
	h.key("esc", "enter", "?")
	h.mustNotContain("Columns")
}
