package ui

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

var sgrSeq = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// setsColour reports an SGR sequence that sets a colour (30–38, 40–48,
// 90–97, 100–107, 58); resets and attributes (bold, faint, reverse) do not.
func setsColour(s string) bool {
	for _, m := range sgrSeq.FindAllString(s, -1) {
		params := strings.FieldsFunc(m[2:len(m)-1], func(r rune) bool { return r == ';' || r == ':' })
		for _, p := range params {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) || n == 58 {
				return true
			}
		}
	}
	return false
}

// TestSanitisedEverywhere puts escape sequences in a queue name, a routing
// key, a header and a body, and checks that every frame shows them as text
// and contains no escape but our own SGR styling.
func TestSanitisedEverywhere(t *testing.T) {
	fc := newFake()
	msg := fixtureMessage(0)
	msg.RoutingKey = "rk\x1b[2J"
	msg.Properties.MessageID = "id\u009b31m" // a C1 CSI, valid UTF-8
	msg.Headers["x-evil\x1b]8;;http://x\x07"] = "v\x1b[31m"
	msg.Body = []byte("line1\x1b]0;pwned\x07 and then a long line of ordinary text, enough to read as text\nline2\r")
	msg.BodySize = len(msg.Body)
	fc.peeks[evilQueue] = &broker.PeekResult{Queue: evilQueue, Messages: []broker.Message{msg}, SideEffects: []string{"side\x1b[5meffect"}}
	h := newHarness(t, fc, Options{}, 100, 40).start()

	check := func(where string) {
		t.Helper()
		raw := h.raw()
		if rest := sgrSeq.ReplaceAllString(raw, ""); strings.ContainsAny(rest, "\x1b\x07") || strings.Contains(rest, "\u009b") {
			t.Fatalf("%s: a control byte reached the frame: %q", where, rest)
		}
	}
	check("home")
	h.mustContain(`evil\x1b]0;pwned\x07`)
	h.key("G") // the evil queue is the last row
	check("home, evil selected")
	h.key("enter")
	check("browser")
	h.mustContain(`rk\x1b[2J`, `id\u009b31m`, `side\x1b[5meffect`)
	h.key("enter")
	h.key("G")
	check("inspector")
	h.mustContain(`line1\x1b]0;pwned\x07`, `line2\r`)
	h.key("g", "pgdown")
	check("inspector headers")
}

// TestNoColor: no colour at all, yet the selection is visible.
func TestNoColor(t *testing.T) {
	h := newHarness(t, newFake(), Options{NoColor: true}, 80, 24).start()
	frames := map[string]string{"home": h.raw()}
	h.key("down", "down", "down", "enter")
	frames["browser"] = h.raw()
	h.key("m")
	frames["move"] = h.raw()
	h.key("enter")
	mv := h.m.move
	mv.SetRunning(broker.MoveProgress{}, nil)
	h.send(movedialog.ProgressMsg{ID: mv.ID(), Progress: broker.MoveProgress{Total: 4, Done: 1, Moved: 1, Elapsed: time.Second}})
	frames["progress"] = h.raw()
	if !strings.Contains(frames["progress"], "█") {
		t.Fatal("no progress bar drawn")
	}
	h.send(movedialog.DoneMsg{ID: mv.ID()}) // the summary
	h.key("esc", "enter", "G")
	frames["inspector"] = h.raw()
	h.key("?")
	frames["help"] = h.raw()
	for name, raw := range frames {
		if setsColour(raw) {
			t.Errorf("%s: NO_COLOR frame sets a colour: %q", name, raw)
		}
	}
	for _, name := range []string{"home", "browser"} {
		sel := ""
		for _, l := range strings.Split(frames[name], "\n") {
			if strings.Contains(l, "▸") {
				sel = l
			}
		}
		if sel == "" || !strings.Contains(sel, "\x1b[7") && !strings.Contains(sel, ";7") {
			t.Errorf("%s: selected row not marked with ▸ and reverse video: %q", name, sel)
		}
	}
	// The same screens in colour do set colours: the test can tell.
	hc := newHarness(t, newFake(), Options{}, 80, 24).start()
	if !setsColour(hc.raw()) {
		t.Fatal("colour frame sets no colour: setsColour is broken")
	}
}

// TestReadOnly: m is gone from help and footer and does nothing.
func TestReadOnly(t *testing.T) {
	for _, ro := range []bool{false, true} {
		fc := newFake()
		h := newHarness(t, fc, Options{ReadOnly: ro}, 100, 30).start()
		h.key("down", "down", "down", "enter")
		footerHas := strings.Contains(h.plain(), "move/re-publish")
		h.key("?")
		helpHas := strings.Contains(h.plain(), "move/re-publish")
		h.key("esc", "m")
		opened := h.m.top() == h.m.move
		if ro && (footerHas || helpHas || opened) {
			t.Fatalf("read-only: footer lists move %v, help lists move %v, m opened the dialog %v", footerHas, helpHas, opened)
		}
		if !ro && !(footerHas && helpHas && opened) {
			t.Fatalf("read-write: footer lists move %v, help lists move %v, m opened the dialog %v", footerHas, helpHas, opened)
		}
		if ro {
			// Even a direct request is refused at the root.
			h.send(openMoveMsg{spec: movedialog.Spec{Queue: "orders.dlq", Depth: 3}})
			if h.m.top() == h.m.move || len(fc.moves) != 0 {
				t.Fatal("read-only: the root opened the move dialog")
			}
			h.mustContain("read-only")
		}
	}
	// A client that is read-only makes the UI read-only too.
	fc := newFake()
	fc.readOnly = true
	if m := New(Options{Client: fc}); !m.c.readOnly || m.c.keys.Move.Enabled() {
		t.Fatal("a read-only client left moves enabled")
	}
}

func TestTooSmall(t *testing.T) {
	for _, sz := range [][2]int{{79, 23}, {79, 24}, {80, 23}, {20, 5}} {
		h := newHarness(t, newFake(), Options{}, sz[0], sz[1]).start()
		h.mustContain("terminal too small")
		for _, l := range strings.Split(h.plain(), "\n") {
			if ansi.StringWidth(l) > sz[0] {
				t.Fatalf("%v: line %q is wider than the terminal", sz, l)
			}
		}
	}
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.mustNotContain("terminal too small")
}

// TestEveryFrameFits: at several sizes every screen draws exactly the
// terminal's height in lines no wider than its width.
func TestEveryFrameFits(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {81, 25}, {100, 30}, {120, 40}, {160, 48}, {240, 70}} {
		w, hgt := sz[0], sz[1]
		h := newHarness(t, newFake(), Options{}, w, hgt).start()
		check := func(where string) {
			t.Helper()
			lines := strings.Split(h.raw(), "\n")
			if len(lines) != hgt {
				t.Fatalf("%dx%d %s: %d lines", w, hgt, where, len(lines))
			}
			for i, l := range lines {
				if ansi.StringWidth(l) > w {
					t.Fatalf("%dx%d %s: line %d is %d wide: %q", w, hgt, where, i, ansi.StringWidth(l), ansi.Strip(l))
				}
			}
		}
		check("home")
		h.key("down", "down", "down", "down", "down")
		check("home finding")
		h.key("up", "up", "enter")
		check("browser")
		h.key("enter")
		check("inspector")
		h.key("G")
		check("inspector end")
		h.key("m")
		check("move")
		h.key("enter")
		check("preview")
		h.key("enter")
		check("summary")
		h.key("enter", "?")
		check("help")
	}
}

// TestStaleSnapshotDropped: an answer of an older generation never
// replaces newer data, and a stale tick does not poll.
func TestStaleSnapshotDropped(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	old := h.m.gen
	h.key("r") // a manual refresh starts generation old+1
	if h.m.gen != old+1 {
		t.Fatalf("refresh did not start a new generation: %d", h.m.gen)
	}
	stale := fixtureSnapshot()
	stale.Topology.Queues[0].Ready = 999_999
	stale.BrokerVersion = "STALE"
	h.send(snapshotMsg{gen: old, snap: stale, at: fixedNow})
	h.mustNotContain("STALE", "999999")
	h.send(snapshotMsg{gen: old, err: errors.New("late failure")})
	if h.m.c.conn.down {
		t.Fatal("a stale error marked the broker down")
	}
	n := fc.snaps
	h.send(pollMsg{gen: old})
	if fc.snaps != n {
		t.Fatal("a stale tick polled")
	}
	h.send(pollMsg{gen: h.m.gen})
	if fc.snaps != n+1 {
		t.Fatal("a current tick did not poll")
	}
}

// TestBrokerDown: the data stays, greyed; the title and summary say
// "reconnecting (n) in …" with the retry engine's backoff; it recovers.
func TestBrokerDown(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.mustContain("● live")
	fc.snapErr = errors.New("connection refused")
	h.send(pollMsg{gen: h.m.gen})
	h.mustContain("reconnecting (1) in 1s", "orders.retry.5s", "connection refused")
	h.mustNotContain("● live")
	// The rows are drawn faint (SGR 2) as a whole.
	for _, l := range strings.Split(h.raw(), "\n") {
		if strings.Contains(ansi.Strip(l), "orders.retry.5s") && !strings.Contains(l, "\x1b[2") && !strings.Contains(l, ";2m") {
			t.Fatalf("data row not greyed: %q", l)
		}
	}
	// Backoff doubles: 1s, 2s, 4s.
	for i, want := range []string{"reconnecting (2) in 2s", "reconnecting (3) in 4s"} {
		now := h.m.c.conn.retryAt
		h.m.c.now = func() time.Time { return now }
		before := fc.snaps
		h.send(countdownMsg{gen: h.m.gen})
		if fc.snaps != before+1 {
			t.Fatalf("attempt %d: the countdown did not poll when due", i+2)
		}
		h.mustContain(want)
	}
	// Halfway through the wait it counts down without polling.
	now := h.m.c.conn.retryAt.Add(-2 * time.Second)
	h.m.c.now = func() time.Time { return now }
	before := fc.snaps
	h.send(countdownMsg{gen: h.m.gen})
	if fc.snaps != before {
		t.Fatal("the countdown polled early")
	}
	h.mustContain("reconnecting (3) in 2s")
	fc.snapErr = nil
	h.key("r")
	h.mustContain("● live", "reconnected")
	h.mustNotContain("reconnecting")
}

func TestReconnectPolicyCaps(t *testing.T) {
	if d := reconnectPolicy.Nominal(20); d != 30*time.Second {
		t.Fatalf("backoff after 20 failures = %v, want the 30s cap", d)
	}
}

func TestStalePeekDropped(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter")
	id := h.m.browser.id
	h.send(peekMsg{id: id - 1, queue: "orders.dlq", res: &broker.PeekResult{Queue: "orders.dlq", Messages: []broker.Message{{Position: 0, Properties: broker.Properties{MessageID: "STALE"}}}}})
	h.mustNotContain("STALE")
	h.mustContain("msg-0002")
}

func TestFilterKeepsSelectionAndSecondEnterOpens(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter", "/")
	h.typeText("0002q") // q is typed, not quit
	if !h.m.browser.filter.Capturing() || !strings.Contains(h.plain(), "0002q") {
		t.Fatalf("filter did not take q:\n%s", h.plain())
	}
	h.key("backspace")
	h.mustContain("1/1 (of 3)")
	h.mustNotContain("msg-0001")
	h.key("enter") // leave the filter, keep it and the selection
	if h.m.browser.filter.Capturing() || h.m.top() != h.m.browser {
		t.Fatal("first enter did not just leave the filter")
	}
	h.mustContain("msg-0002", "1/1 (of 3)")
	h.key("enter")
	if h.m.top() != h.m.inspector || h.m.inspector.message.Position != 2 {
		t.Fatal("second enter did not open the selected message")
	}
	h.key("esc", "esc") // back to the browser, then clear the filter
	h.mustContain("msg-0001", "3/3")
	if h.m.browser.current() != 2 {
		t.Fatalf("clearing the filter lost the selection: row %d", h.m.browser.current())
	}
}

func TestEscLeavesFilterWhileTyping(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter", "/")
	h.typeText("zzz")
	h.mustContain("0/0 (of 3)")
	h.key("esc")
	if h.m.browser.filter.Capturing() || h.m.browser.filter.Text() != "" || h.m.top() != h.m.browser {
		t.Fatal("esc did not clear the filter (or left the browser)")
	}
	h.mustContain("msg-0001", "1/3")
}

func TestHomeFilter(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.key("/")
	h.typeText("pay")
	h.mustContain("payments.wait", "LADDERS (1)")
	h.mustNotContain("orders.retry.5s")
	h.key("enter", "enter", "enter") // keep the filter, open, confirm the peek
	if h.m.top() != h.m.browser || h.m.browser.queue != "payments" {
		t.Fatalf("filter then enter opened %q", h.m.browser.queue)
	}
}

func TestSortCycles(t *testing.T) {
	fc := newFake()
	p := fixturePeek(3)
	p.Messages[1].BodySize = 5000
	p.Messages[2].Retry.Count = 9
	fc.peeks["orders.dlq"] = p
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter")
	order := func() []int {
		var out []int
		for _, i := range h.m.browser.view {
			out = append(out, h.m.browser.rows[i].message.Position)
		}
		return out
	}
	want := map[sortKey][]int{
		sortPosition: {0, 1, 2},
		sortAge:      {2, 1, 0}, // oldest timestamp first
		sortRetries:  {2, 0, 1},
		sortDue:      {0, 1, 2},
		sortSize:     {1, 0, 2},
	}
	for k := sortPosition; k < sortKeys; k++ {
		if got := order(); !slices.Equal(got, want[k]) {
			t.Fatalf("sort %v: order %v, want %v", k, got, want[k])
		}
		h.mustContain("sort: " + k.String())
		h.key("s")
	}
}

// TestMoveMarked: marks, target and delay reach Client.Move, after a dry
// run and a confirmation, and the browser re-peeks afterwards.
func TestMoveMarked(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 120, 30).start()
	h.key("down", "down", "down", "enter", "space", "down", "space", "m")
	// Target: main queue orders; delay: the 5s tier's TTL; reset retries.
	h.key("tab", "right", "tab", "right", "tab", "space", "enter")
	if len(fc.moves) != 1 || !fc.moves[0].DryRun {
		t.Fatalf("enter did not ask for a dry run first: %+v", fc.moves)
	}
	h.mustContain("Confirm move", "Move 2 messages", "from orders.dlq to queue orders", "delay 5s", "reset to 0", "#0 msg-0000", "#2 msg-0002")
	peeks := len(fc.peeked)
	h.key("y")
	got := fc.moves[1]
	want := broker.MoveRequest{From: "orders.dlq", To: moveplan.Target{Kind: moveplan.TargetQueue, Name: "orders"}, Delay: 5 * time.Second, Positions: []int{0, 2}, ResetRetries: true}
	if got.DryRun || got.From != want.From || got.To != want.To || got.Delay != want.Delay || !slices.Equal(got.Positions, want.Positions) || !got.ResetRetries {
		t.Fatalf("move request %+v, want %+v", got, want)
	}
	// The ids the peek saw go along, so a changed queue is caught.
	if !slices.Equal(got.PositionIDs, []string{"msg-0000", "msg-0002"}) {
		t.Fatalf("position ids %v", got.PositionIDs)
	}
	h.mustContain("Summary", "moved 2", "duplicates possible: no")
	h.key("enter")
	if h.m.top() != h.m.browser || len(fc.peeked) != peeks+1 {
		t.Fatal("closing the summary did not return to a re-peeked browser")
	}
	if len(h.m.browser.marks) != 0 {
		t.Fatal("marks survived a re-peek that renumbers positions")
	}
}

func TestMoveTypedTargetAndDelay(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter", "m", "tab", "left")
	h.typeText("exchange:orders-x:orders.created")
	h.key("tab", "left")
	h.typeText("1m30s")
	h.key("enter")
	if len(fc.moves) != 1 {
		t.Fatalf("no dry run: %+v", fc.moves)
	}
	got := fc.moves[0]
	if got.To != (moveplan.Target{Kind: moveplan.TargetExchange, Name: "orders-x", RoutingKey: "orders.created", HasKey: true}) || got.Delay != 90*time.Second || !slices.Equal(got.Positions, []int{0}) {
		t.Fatalf("request %+v", got)
	}
	// A bad typed target is refused in the form, before any call.
	h.key("esc", "shift+tab", "shift+tab") // from the delay's text to the target's
	if h.m.move.Focus() != movedialog.FieldTargetText {
		t.Fatalf("focus %d, want the target's text", h.m.move.Focus())
	}
	h.key("ctrl+a", "ctrl+k")
	h.typeText("nonsense")
	h.key("enter")
	h.mustContain("type queue:NAME or exchange:NAME[:KEY]")
	if len(fc.moves) != 1 {
		t.Fatal("an invalid form reached the broker")
	}
}

func TestMoveFirstNFromHome(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "m") // orders.dlq on the home screen
	if h.m.top() != h.m.move {
		t.Fatal("m on home did not open the dialog")
	}
	h.mustContain("the first N")
	h.key("tab") // to N
	h.key("backspace", "backspace")
	h.typeText("2")
	h.key("enter")
	if len(fc.moves) != 1 || fc.moves[0].Limit != 2 || fc.moves[0].Positions != nil {
		t.Fatalf("first-N request %+v", fc.moves)
	}
	h.key("esc", "up", "left", "enter") // back, up to the scope, whole queue
	// The whole queue's dry run stops at the commands' cap.
	if fc.moves[1].Limit != usecase.PreviewCap || fc.moves[1].Positions != nil {
		t.Fatalf("whole-queue request %+v", fc.moves[1])
	}
}

func TestMoveProgressThenCancel(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter", "m", "enter")
	mv := h.m.move
	// Pretend the real move is running (its command is not executed here).
	cancelled := false
	mv.SetRunning(broker.MoveProgress{}, func() { cancelled = true })
	h.send(movedialog.ProgressMsg{ID: mv.ID(), Progress: broker.MoveProgress{Total: 10, Done: 4, Moved: 4, Elapsed: 2 * time.Second}})
	h.mustContain("4 of 10", "2.0 msg/s", "ETA 3s")
	h.send(movedialog.ProgressMsg{ID: mv.ID() - 1, Progress: broker.MoveProgress{Total: 10, Done: 9}})
	h.mustNotContain("9 of 10")
	// esc asks first; enter stops the move, which the dialog then shows
	// stopping (keys_test.go has the question's other answers).
	h.key("esc")
	h.mustContain("Stop the move?")
	h.key("enter")
	if !cancelled || h.m.top() != h.m.move {
		t.Fatal("stopping a move did not cancel it (or closed the dialog before it stopped)")
	}
	h.mustContain("cancelling")
	h.send(movedialog.DoneMsg{ID: mv.ID(), Report: &broker.MoveReport{Requested: 10, Moved: 5, Target: "queue orders"}, Err: fmt.Errorf("move from orders.dlq: %w: %w", context.Canceled, broker.ErrPartial)})
	h.mustContain("moved 5", "move stopped by you: 5 moved, 5 stay in orders.dlq")
	h.mustNotContain("context canceled")
}

// ctrl+c during a move stops it and quits only once it has stopped (q
// inside the dialog does nothing: keys_test.go).
func TestQuitWaitsForRunningMove(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter", "m", "enter")
	mv := h.m.move
	cancelled := false
	mv.SetRunning(broker.MoveProgress{}, func() { cancelled = true })
	_, cmd := h.m.Update(keyMsg("ctrl+c"))
	if isQuit(cmd) || !cancelled {
		t.Fatal("ctrl+c quit in the middle of a move")
	}
	_, cmd = h.m.Update(movedialog.DoneMsg{ID: mv.ID(), Report: &broker.MoveReport{}})
	if !isQuit(cmd) {
		t.Fatal("the UI did not quit once the move stopped")
	}
	// Without a move q quits at once.
	h2 := newHarness(t, newFake(), Options{}, 80, 24).start()
	if _, cmd := h2.m.Update(keyMsg("q")); !isQuit(cmd) {
		t.Fatal("q did not quit")
	}
	if _, cmd := h2.m.Update(keyMsg("ctrl+c")); !isQuit(cmd) {
		t.Fatal("ctrl+c did not quit")
	}
}

// isQuit runs cmd (and batches) looking for tea.Quit.
func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		switch msg := msg.(type) {
		case tea.QuitMsg:
			return true
		case tea.BatchMsg:
			return slices.ContainsFunc(msg, isQuit)
		}
	case <-time.After(100 * time.Millisecond):
	}
	return false
}

func TestCopyBody(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter", "enter", "c")
	if len(h.clipboard) != 1 || h.clipboard[0] != string(fixtureMessage(0).Body) {
		t.Fatalf("clipboard got %q", h.clipboard)
	}
	h.mustContain("copied 80B to the clipboard")
}

// q quits from every screen: ladders, browser, inspector, and help over
// one (from dialogs, prompts, pickers and help over a dialog it does not:
// keys_test.go).
func TestQuitFromEveryScreen(t *testing.T) {
	for _, path := range [][]string{{}, {"down", "down", "down", "enter"}, {"down", "down", "down", "enter", "enter"}, {"?"}} {
		h := newHarness(t, newFake(), Options{}, 80, 24).start()
		h.key(path...)
		if _, cmd := h.m.Update(keyMsg("q")); !isQuit(cmd) {
			t.Fatalf("q did not quit after %v", path)
		}
	}
}

func TestEscGoesBack(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter", "enter")
	for _, want := range []screen{h.m.browser, h.m.home, h.m.home} {
		h.key("esc")
		if h.m.top() != want {
			t.Fatalf("esc went to %T", h.m.top())
		}
	}
}

func TestVhostSwitch(t *testing.T) {
	first := newFake()
	second := newFake()
	second.vhost = "staging"
	second.snap = fixtureSnapshot()
	second.snap.Ladders = nil
	var opened []string
	opts := Options{Open: func(v string) (broker.Client, error) {
		opened = append(opened, v)
		if v == "staging" {
			return second, nil
		}
		return nil, errors.New("no such vhost")
	}}
	h := newHarness(t, first, opts, 80, 24).start()
	h.key("v")
	h.mustContain("Switch vhost", "staging")
	h.key("down", "enter")
	if !slices.Equal(opened, []string{"staging"}) || h.m.client != second || h.m.top() != h.m.home {
		t.Fatalf("switch: opened %v", opened)
	}
	h.mustContain("vhost staging", "LADDERS (0)")
	if first.closed {
		t.Fatal("closed the caller's client; it belongs to the caller")
	}
	// Without Open there is no switcher.
	h2 := newHarness(t, newFake(), Options{}, 80, 24).start()
	h2.key("v")
	if h2.m.top() != h2.m.home || strings.Contains(h2.plain(), "vhost") && strings.Contains(h2.plain(), "Switch") {
		t.Fatal("v opened a switcher without Options.Open")
	}
}

// The home screen draws each queue's trend as the analysis gave it (the
// analysis's own tests read it from the history): the sparkline and the
// drain cell of orders.dlq's row.
func TestHomeDrawsTheSnapshotsTrend(t *testing.T) {
	fc := newFake()
	s := fixtureSnapshot()
	s.Trends = map[string]broker.Trend{"orders.dlq": {Depths: []int64{12, 0, 10, 20, 40}, Net: 10, NetKnown: true, Drain: broker.Drain{Kind: broker.DrainGrowing}}}
	fc.snap = s
	h := newHarness(t, fc, Options{}, 80, 24).start()
	for _, line := range strings.Split(h.plain(), "\n") {
		if strings.Contains(line, "orders.dlq") {
			if !strings.Contains(line, "▃▁▂▄█") || !strings.Contains(line, "grow") {
				t.Fatalf("orders.dlq's row %q: want the trend's sparkline and grow", line)
			}
			return
		}
	}
	t.Fatalf("no orders.dlq row:\n%s", h.plain())
}

func TestHeaderFindingShownForSelectedQueue(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.mustContain("no findings")
	h.key("down", "down", "down", "down", "down") // payments.wait
	h.mustContain("✖ stuck: 7 messages here never return")
}

func TestRetryStateShown(t *testing.T) {
	m := fixtureMessage(1)
	m.Retry = retry.RetryState{Count: 2, Source: retry.SourceXDeath}
	lines := ansi.Strip(strings.Join(renderRetrySummary(&m, fixedNow, 80, newStylesForTest()), "\n"))
	if !strings.Contains(lines, "2 (from x-death)") {
		t.Fatalf("retry summary:\n%s", lines)
	}
}

// TestLoginRefusedWaitsForR: a refused login is said in the header, and the
// UI stops polling (each attempt would be refused, and logged by the
// broker) until r.
func TestLoginRefusedWaitsForR(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24)
	var ticks int
	h.m.c.tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { ticks++; return nil }
	h.start()
	h.mustContain("● live")
	fc.snapErr = fmt.Errorf("overview: %w", &broker.ConnError{
		Msg: "login refused for user guest at 127.0.0.1:5672", Kind: broker.ErrLoginRefused,
	})
	ticks = 0
	h.send(pollMsg{gen: h.m.gen})
	h.mustContain("○ login refused · r retries", "login refused for user guest at 127.0.0.1:5672")
	h.mustNotContain("reconnecting", "● live", "overview:")
	if ticks != 0 {
		t.Fatalf("a refused login scheduled %d tick(s): it must wait for r", ticks)
	}
	// However long it waits, nothing polls by itself.
	before := fc.snaps
	later := fixedNow.Add(time.Hour)
	h.m.c.now = func() time.Time { return later }
	h.send(countdownMsg{gen: h.m.gen})
	if fc.snaps != before || ticks != 0 {
		t.Fatalf("polled %d time(s) without r", fc.snaps-before)
	}
	h.mustContain("login refused")
	// r retries once; still refused, it waits again.
	h.key("r")
	if fc.snaps != before+1 || ticks != 0 {
		t.Fatalf("r: %d poll(s), %d tick(s); want one poll, no tick", fc.snaps-before, ticks)
	}
	h.mustContain("○ login refused · r retries")
	// Fixed on the broker side: r brings it back, and polling resumes.
	fc.snapErr = nil
	h.key("r")
	h.mustContain("● live", "reconnected")
	h.mustNotContain("login refused")
	if ticks != 1 {
		t.Fatalf("after recovery %d tick(s), want the poll tick", ticks)
	}
}

// A plain sentinel in the chain is enough: the UI does not depend on the
// broker's wording.
func TestMissingVhostWaitsForR(t *testing.T) {
	fc := newFake()
	fc.snapErr = fmt.Errorf("list queues in vhost x: %w", broker.ErrVhostNotFound)
	h := newHarness(t, fc, Options{}, 80, 24)
	var ticks int
	h.m.c.tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { ticks++; return nil }
	h.start()
	h.mustContain("○ vhost not found · r retries")
	if ticks != 0 {
		t.Fatalf("%d tick(s): a missing vhost must wait for r", ticks)
	}
}

// The context switcher (x) opens a client for another named broker: the
// title names it, and its read-only is the UI's, both ways — a read-only
// context takes the mutating keys away, a context that may change the
// broker gives them back. A context that cannot be opened leaves all as
// it was.
func TestContextSwitch(t *testing.T) {
	prod := newFake()
	prod.readOnly = true
	staging := newFake()
	staging.snap = fixtureSnapshot()
	staging.snap.Ladders = nil
	var opened []string
	opts := Options{Contexts: []string{"prod", "qa", "staging"}, Context: "prod", Title: "prod",
		OpenContext: func(name string) (broker.Client, error) {
			opened = append(opened, name)
			switch name {
			case "staging":
				return staging, nil
			case "prod":
				return prod, nil
			}
			return nil, errors.New("context qa: $QA_PW (its password-env) is not set")
		}}
	h := newHarness(t, prod, opts, 80, 24).start()
	h.mustContain("ladder · prod", "read-only")
	if h.m.c.keys.Move.Enabled() {
		t.Fatal("move key enabled in a read-only context")
	}
	h.key("x")
	h.mustContain("Switch context", "* prod", "  qa", "  staging")
	h.key("down", "enter") // qa: cannot be opened
	h.mustContain("$QA_PW (its password-env) is not set")
	if h.m.client != prod || !h.m.c.readOnly {
		t.Fatal("a context that failed to open changed the client or lifted read-only")
	}
	h.key("esc", "x", "down", "down", "enter") // staging
	if !slices.Equal(opened, []string{"qa", "staging"}) || h.m.client != staging || h.m.top() != h.m.home {
		t.Fatalf("switch: opened %v", opened)
	}
	h.mustContain("ladder · staging", "switched to context staging", "LADDERS (0)")
	h.mustNotContain("read-only")
	if h.m.c.readOnly || !h.m.c.keys.Move.Enabled() {
		t.Fatal("a context that may change the broker is still read-only")
	}
	h.key("x")
	h.mustContain("* staging") // the cursor starts on the one in use
	h.key("up", "up", "enter")
	if h.m.client != prod || !h.m.c.readOnly || h.m.c.keys.Move.Enabled() {
		t.Fatal("back in the read-only context: not read-only")
	}
	h.mustContain("ladder · prod")
	// Without contexts there is no switcher.
	h2 := newHarness(t, newFake(), Options{}, 80, 24).start()
	h2.key("x")
	if h2.m.top() != h2.m.home {
		t.Fatal("x opened a switcher without contexts")
	}
}

// A client that reads every vhost at once makes the vhost switcher an
// overview: each vhost's ladders, what its DLQs hold, how much they grew
// since the last listing, its worst finding — the vhost on fire first.
func TestVhostSwitcherIsAnOverview(t *testing.T) {
	fc := newFake()
	dlq := int64(5)
	fc.allVhosts = func(v topology.Vhost) []topology.Vhost {
		fire := v
		fire.Name = "payments"
		fire.Queues = slices.Clone(v.Queues)
		for i := range fire.Queues {
			if fire.Queues[i].Name == "orders.dlq" {
				fire.Queues[i].Messages = dlq
			}
		}
		// Dead-lettering to an exchange that does not exist: an error.
		fire.Queues = append(fire.Queues, topology.Queue{Name: "lost", Type: topology.QueueClassic, Arguments: map[string]any{"x-dead-letter-exchange": "nowhere"}})
		return []topology.Vhost{{Name: "/"}, {Name: "quiet"}, fire}
	}
	h := newHarness(t, fc, Options{Open: func(string) (broker.Client, error) { return nil, errors.New("no") }}, 100, 24).start()
	h.key("v")
	h.mustContain("Switch vhost", "payments          1 ladder · DLQ 5 · error unroutable-dead-letter lost", "* /                 0 ladders · DLQ 0 · no findings")
	if got := h.m.vhosts.vhosts; len(got) != 3 || got[0] != "payments" {
		t.Fatalf("order %q: the vhost on fire first", got)
	}
	dlq = 42
	h.key("esc", "v")
	h.mustContain("DLQ 42 (+37)")
	// A client that cannot list every vhost: the names alone.
	fc.mu.Lock()
	fc.allVhosts = nil
	fc.mu.Unlock()
	h.key("esc", "v")
	h.mustContain("Switch vhost", "* /", "  staging")
	h.mustNotContain("ladders ·")
}

// A cluster in the title: its nodes up of all (the name where there is
// room), an alarm; a queue's details say where it lives.
func TestClusterInTheTitleAndDetails(t *testing.T) {
	fc := newFake()
	fc.snap.Topology.ClusterName = "rabbit@prod"
	fc.snap.Topology.Nodes = []topology.Node{{Name: "rabbit@a", Running: false}, {Name: "rabbit@b", Running: true, MemAlarm: true}, {Name: "rabbit@c", Running: true}}
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.mustContain("2/3 nodes · ALARM")
	h.mustNotContain("rabbit@prod") // no room at 80 columns
	wide := newHarness(t, fc, Options{}, 160, 40).start()
	wide.mustContain("ladder · rabbit@prod · vhost / · RabbitMQ 4.1.0 · 2/3 nodes · ALARM")

	q := topology.Queue{Name: "orders.dlq", Type: topology.QueueQuorum, Messages: 2, Node: "rabbit@b",
		Members: []string{"rabbit@a", "rabbit@b", "rabbit@c"}, Online: []string{"rabbit@b", "rabbit@c"}}
	lines := renderRowDetails(&homeRow{kind: rowOther, name: q.Name, ladder: -1, q: &q}, fc.snap, 80, 5, newStylesForTest(), "")
	if got := ansi.Strip(strings.Join(lines, " ")); !strings.Contains(got, "quorum · 2 messages · leader rabbit@b, 2 of 3 members") {
		t.Errorf("quorum details: %q", got)
	}
	c := topology.Queue{Name: "audit", Type: topology.QueueClassic, Node: "rabbit@a"}
	lines = renderRowDetails(&homeRow{kind: rowOther, name: c.Name, ladder: -1, q: &c}, fc.snap, 80, 5, newStylesForTest(), "")
	if got := ansi.Strip(strings.Join(lines, " ")); !strings.Contains(got, "classic · 0 messages · on rabbit@a") {
		t.Errorf("classic details: %q", got)
	}
}
