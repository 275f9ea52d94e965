package ui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// Keys that cannot hurt: q quits only from a screen, esc asks before it
// stops a running move, typed fields edit like a shell's line and help
// lists what works where it is opened.

// noQuit presses k and fails if it quit the program.
func noQuit(h *harness, k string) {
	h.t.Helper()
	_, cmd := h.m.Update(keyMsg(k))
	if isQuit(cmd) {
		h.t.Fatalf("%s quit the program from %T", k, h.m.top())
	}
	h.run(cmd)
}

// toMoveDialog opens the move dialog on orders.dlq's first message.
func toMoveDialog(h *harness) {
	h.t.Helper()
	h.key("down", "down", "down", "enter", "m")
	h.mustContain("Move / re-publish from orders.dlq")
}

// q inside the move dialog does nothing, at every step: the form, the dry
// run waiting for confirmation, the summary; esc then closes the dialog.
func TestQDoesNotQuitFromTheMoveDialog(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 100, 30).start()
	toMoveDialog(h)
	noQuit(h, "q")
	if h.m.top() != h.m.move || h.m.move.Step() != movedialog.StepForm {
		t.Fatalf("q on the form left it: %T step %d", h.m.top(), h.m.move.Step())
	}
	h.key("enter") // the dry run
	h.mustContain("Confirm move")
	noQuit(h, "q")
	if h.m.top() != h.m.move || h.m.move.Step() != movedialog.StepPreview || len(fc.moves) != 1 {
		t.Fatalf("q on the dry run acted: %T step %d, moves %d", h.m.top(), h.m.move.Step(), len(fc.moves))
	}
	h.key("enter") // the move: the fake moves at once
	h.mustContain("Summary")
	noQuit(h, "q")
	if h.m.top() != h.m.move {
		t.Fatal("q closed the summary")
	}
	h.key("esc")
	if h.m.top() != h.m.browser {
		t.Fatalf("esc did not close the dialog: %T", h.m.top())
	}
	// Back on a screen, q quits.
	if _, cmd := h.m.Update(keyMsg("q")); !isQuit(cmd) {
		t.Fatal("q did not quit from the browser")
	}
}

// q during a running move (in its dialog) neither quits nor stops it.
func TestQDoesNotQuitOrStopARunningMove(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 100, 30).start()
	toMoveDialog(h)
	h.key("enter")
	mv := runningMove(h)
	noQuit(h, "q")
	if mv.cancelled() || h.m.quitting || h.m.top() != h.m.move {
		t.Fatalf("q acted on a running move: cancelled %v, quitting %v, top %T", mv.cancelled(), h.m.quitting, h.m.top())
	}
}

// q in the pickers and on the help screen over a dialog does nothing, and
// their help does not list it; esc closes them. (Help over a screen lists
// that screen's keys, q included, and q quits from it as from the screen.)
func TestQDoesNothingInPickersAndHelp(t *testing.T) {
	opts := Options{Open: func(string) (broker.Client, error) { return newFake(), nil }}
	for name, open := range map[string]func(h *harness){
		"file picker": func(h *harness) {
			h.send(openPickerMsg{title: "Replay a dump file", items: []string{"a.jsonl"}, done: func(string) tea.Msg { return nil }})
		},
		"vhost switcher": func(h *harness) { h.key("v") },
		"help over the move dialog": func(h *harness) {
			toMoveDialog(h)
			h.key("?")
		},
	} {
		h := newHarness(t, newFake(), opts, 100, 30).start()
		open(h)
		top := h.m.top()
		if top == h.m.home {
			t.Fatalf("%s did not open", name)
		}
		noQuit(h, "q")
		if h.m.top() != top {
			t.Fatalf("%s: q changed the screen to %T", name, h.m.top())
		}
		for _, b := range flatHelp(h.m.top()) {
			if slices.Contains(b.Keys(), "q") {
				t.Errorf("%s lists q (%q), which does nothing there", name, b.Help().Desc)
			}
		}
		h.key("esc")
		if h.m.top() == top {
			t.Fatalf("%s: esc did not close it", name)
		}
	}
}

// In a prompt q is a letter; in a yes/no question it does nothing. (This
// already worked: prompts take every key.)
func TestQIsALetterInPrompts(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 100, 30).start()
	h.key("down", "down", "down", "enter", "w")
	h.mustContain("Choose messages (--where)")
	noQuit(h, "q")
	if h.m.top() != h.m.prompt || h.m.prompt.text.String() != "q" {
		t.Fatalf("q in a prompt: top %T, text %q", h.m.top(), h.m.prompt.text.String())
	}
	h2 := newHarness(t, newFake(), Options{}, 100, 30).start()
	h2.key("enter") // orders has consumers: the peek asks first
	if h2.m.top() != h2.m.prompt || !h2.m.prompt.ask.confirm {
		t.Fatalf("no question: %T", h2.m.top())
	}
	noQuit(h2, "q")
	if h2.m.top() != h2.m.prompt {
		t.Fatal("q answered the question")
	}
}

// fakeRun stands for a move in flight: runningMove puts the dialog in its
// running step with a cancel that is recorded.
type fakeRun struct {
	mu     sync.Mutex
	cancel bool
}

func (r *fakeRun) cancelled() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.cancel }

func runningMove(h *harness) *fakeRun {
	h.t.Helper()
	r := &fakeRun{}
	h.m.move.SetRunning(broker.MoveProgress{Total: 10, Done: 3, Moved: 3}, func() { r.mu.Lock(); r.cancel = true; r.mu.Unlock() })
	return r
}

// esc during a running move asks first: esc again keeps it going, enter
// stops it after the batch in flight, the dialog shows it stopping and
// then the summary. n asks the same. A question left open closes when the
// move ends first.
func TestEscDuringAMoveAsksFirst(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 100, 30).start()
	toMoveDialog(h)
	h.key("enter")
	run := runningMove(h)
	h.key("esc")
	h.mustContain("Stop the move?", "keep going")
	if run.cancelled() || h.m.top() != h.m.prompt {
		t.Fatalf("esc stopped the move without asking (top %T)", h.m.top())
	}
	noQuit(h, "q") // q does nothing in the question either
	h.key("esc")
	if run.cancelled() || h.m.top() != h.m.move || h.m.move.Step() != movedialog.StepRunning {
		t.Fatalf("esc on the question stopped the move or left the dialog: %T", h.m.top())
	}
	h.key("n") // Cancel's other key asks too
	h.mustContain("Stop the move?")
	h.key("enter")
	if !run.cancelled() || h.m.top() != h.m.move {
		t.Fatalf("enter on the question did not stop the move (top %T)", h.m.top())
	}
	h.mustContain("cancelling")
	mv := h.m.move
	h.send(movedialog.DoneMsg{ID: mv.ID(), Report: &broker.MoveReport{Requested: 10, Moved: 3}, Err: errTest("context canceled")})
	h.mustContain("moved 3")

	// A replay asks about the replay; a question outlived by its move goes.
	h2 := newHarness(t, newFake(), Options{}, 100, 30).start()
	h2.key("down", "down", "down", "enter")
	h2.send(openMoveMsg{spec: movedialog.Spec{Queue: "orders.dlq", ReplayFile: "x.jsonl"}})
	runningMove(h2)
	h2.key("esc")
	h2.mustContain("Stop the replay?")
	h2.send(movedialog.DoneMsg{ID: h2.m.move.ID(), Report: &broker.MoveReport{Requested: 10, Moved: 10}})
	if h2.m.top() != h2.m.move || h2.m.move.Step() != movedialog.StepSummary {
		t.Fatalf("the question outlived the replay: top %T", h2.m.top())
	}
}

// q on a screen while a move runs behind it asks first; esc keeps going,
// enter stops the move and quits once it has stopped.
func TestQOnAScreenWithAMoveRunningAsks(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 100, 30).start()
	toMoveDialog(h)
	h.key("enter")
	run := runningMove(h)
	h.m.stack = []screen{h.m.home} // the move runs in the background
	noQuit(h, "q")
	h.mustContain("A move is running", "stop and quit")
	if run.cancelled() || h.m.quitting {
		t.Fatal("q stopped the move without asking")
	}
	h.key("esc")
	if run.cancelled() || h.m.top() != h.m.home {
		t.Fatalf("esc on the question: cancelled %v, top %T", run.cancelled(), h.m.top())
	}
	noQuit(h, "q")
	_, cmd := h.m.Update(keyMsg("enter"))
	h.run(cmd)
	if !run.cancelled() || !h.m.quitting {
		t.Fatal("agreeing did not stop the move to quit")
	}
	_, cmd = h.m.Update(movedialog.DoneMsg{ID: h.m.move.ID(), Report: &broker.MoveReport{Requested: 10, Moved: 4}})
	if !isQuit(cmd) {
		t.Fatal("did not quit once the move stopped")
	}
}

// stepClient is the fake whose moves take time, recording when each one
// has returned: a program that quits before its move returned may have
// left a message half moved.
type stepClient struct {
	*fakeClient
	mu       sync.Mutex
	returned []*broker.MoveReport
	errs     []error
}

func (c *stepClient) Move(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	rep, err := c.fakeClient.Move(ctx, req, progress)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !req.DryRun {
		c.returned = append(c.returned, rep)
		c.errs = append(c.errs, err)
	}
	return rep, err
}

// ctrl+c during a real running move (also with the stop question open)
// stops it cleanly: the program ends only after the move has returned,
// having moved part of the messages. (This already worked.)
func TestCtrlCDuringAMoveStopsItCleanly(t *testing.T) {
	for _, ask := range []bool{false, true} {
		fc := newFake()
		fc.peeks["orders.dlq"] = fixturePeek(8)
		fc.moveStep = 150 * time.Millisecond
		c := &stepClient{fakeClient: fc}
		tm := teatest.NewTestModel(t, New(Options{Client: c}), teatest.WithInitialTermSize(100, 30))
		waitText(t, tm, "● live")
		press(tm, "down", "down", "down", "enter")
		waitText(t, tm, "msg-0007")
		press(tm, "a", "m")
		waitText(t, tm, "marked messages (8)")
		press(tm, "enter")
		waitText(t, tm, "Confirm move")
		press(tm, "enter")
		waitText(t, tm, "2 of 8")
		if ask {
			press(tm, "esc")
			waitText(t, tm, "Stop the move?")
		}
		press(tm, "ctrl+c")
		tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
		c.mu.Lock()
		if len(c.returned) != 1 || c.returned[0] == nil || c.returned[0].Moved == 0 || c.returned[0].Moved == 8 || c.errs[0] == nil {
			t.Errorf("ask=%v: the move did not return stopped part-way before the program ended: %+v %v", ask, c.returned, c.errs)
		}
		c.mu.Unlock()
	}
}

// flatHelp is every enabled binding a screen's help lists.
func flatHelp(s screen) []key.Binding {
	var out []key.Binding
	for _, g := range s.FullHelp() {
		for _, b := range g {
			if b.Enabled() {
				out = append(out, b)
			}
		}
	}
	return out
}

// The move dialog's N: ←/→ move in the text, home/end and ctrl+a/ctrl+e go
// to its ends, typing inserts at the cursor, ctrl+u deletes to the start.
func TestMoveDialogCountEditsAtTheCursor(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 100, 30).start()
	toMoveDialog(h)
	h.key("right") // this message → the first N
	h.mustContain("the first N")
	h.key("tab") // N, "10"
	h.key("left")
	h.typeText("5")
	h.key("home")
	h.typeText("2")
	if got := h.m.move.Text(movedialog.FieldCount); got != "2150" {
		t.Fatalf("N is %q after ← 5 home 2", got)
	}
	h.key("ctrl+e", "left", "ctrl+u")
	if got := h.m.move.Text(movedialog.FieldCount); got != "0" {
		t.Fatalf("N is %q after ctrl+e ← ctrl+u", got)
	}
	h.key("ctrl+a")
	h.typeText("3")
	h.key("end", "backspace")
	h.key("enter")
	if len(fc.moves) != 1 || fc.moves[0].Limit != 3 {
		t.Fatalf("dry run %+v, want the first 3", fc.moves)
	}
}

// The typed target: choosing "typed" focuses its text; ←/→ and space edit
// the text there and never change the choice; ctrl+w deletes a word back,
// ctrl+k to the end; a paste goes in at the cursor.
func TestMoveDialogTypedTargetEditsAndKeepsItsChoice(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 100, 30).start()
	toMoveDialog(h)
	h.key("tab", "left") // target → typed
	mv := h.m.move
	targets, typed := mv.Choices(movedialog.FieldTarget)
	if targets[typed] != "typed" || mv.Focus() != movedialog.FieldTargetText {
		t.Fatalf("choosing typed did not focus its text (focus %d)", mv.Focus())
	}
	h.typeText("exchange:orders-x")
	h.key("ctrl+w")
	h.typeText("retry")
	h.key("left", "left", "left", "left", "left", "right", "space", "left", "right", "right")
	if _, at := mv.Choices(movedialog.FieldTarget); at != typed {
		t.Fatal("←/→/space in the typed target changed the choice")
	}
	if got := mv.Text(movedialog.FieldTargetText); got != "exchange:r etry" {
		t.Fatalf("target %q", got)
	}
	h.key("ctrl+a", "ctrl+k")
	h.send(tea.PasteMsg{Content: "queue:orders"})
	h.key("left", "left", "left", "left", "left", "left")
	h.send(tea.PasteMsg{Content: "my-"})
	if got := mv.Text(movedialog.FieldTargetText); got != "queue:my-orders" {
		t.Fatalf("target %q after ctrl+a ctrl+k paste ←×6 paste", got)
	}
	h.key("tab") // delay: a choice field, where space changes the choice
	_, before := mv.Choices(movedialog.FieldDelay)
	h.key("space")
	if _, at := mv.Choices(movedialog.FieldDelay); at == before {
		t.Fatal("space on a choice field did not change it")
	}
	h.key("enter")
	if len(fc.moves) != 1 || fc.moves[0].To != (moveplan.Target{Kind: moveplan.TargetQueue, Name: "my-orders"}) {
		t.Fatalf("dry run %+v", fc.moves)
	}
	// shift+tab from the typed text goes back to its choice, where ← and →
	// change it again.
	h.key("esc", "up")
	if mv.Focus() != movedialog.FieldTargetText {
		t.Fatalf("focus %d, want the target's text", mv.Focus())
	}
	h.key("shift+tab")
	if mv.Focus() != movedialog.FieldTarget {
		t.Fatalf("shift+tab: focus %d, want the target's choice", mv.Focus())
	}
	h.key("right")
	if _, at := mv.Choices(movedialog.FieldTarget); at == typed {
		t.Fatal("→ on the target's choice did not change it")
	}
}

// The typed delay edits alike; its text shows a cursor (reverse video,
// without colour too).
func TestMoveDialogTypedDelayShowsACursorWithoutColour(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{NoColor: true}, 100, 30).start()
	toMoveDialog(h)
	h.key("tab", "tab", "left") // delay → typed
	h.typeText("90s")
	h.key("left")
	st := h.m.c.styles
	if !st.NoColor || !strings.Contains(st.Cursor.Render("s"), "\x1b[7m") {
		t.Fatal("the cursor style is not reverse video under NO_COLOR")
	}
	if !strings.Contains(h.raw(), "90"+st.Cursor.Render("s")) {
		t.Fatalf("no cursor on the s of 90s:\n%q", h.raw())
	}
	h.key("home", "delete", "delete", "delete")
	h.typeText("2m")
	h.key("enter")
	if len(fc.moves) != 1 || fc.moves[0].Delay != 2*time.Minute {
		t.Fatalf("dry run %+v, want a 2m delay", fc.moves)
	}
}

// A filter edits at the cursor too, and ctrl+u there deletes rather than
// paging up.
func TestFilterEditsAtTheCursor(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 100, 30).start()
	h.key("/")
	h.typeText("ordrs.dlq")
	h.key("home", "right", "right", "right")
	h.typeText("e")
	if got := h.m.home.filter.Text(); got != "orders.dlq" {
		t.Fatalf("filter %q", got)
	}
	h.key("end", "ctrl+w")
	if got := h.m.home.filter.Text(); got != "orders." {
		t.Fatalf("filter %q after end ctrl+w", got)
	}
	h.key("ctrl+u")
	if got := h.m.home.filter.Text(); got != "" || !h.m.home.filter.Capturing() {
		t.Fatalf("filter %q after ctrl+w ctrl+u (still typing: %v)", got, h.m.home.filter.Capturing())
	}
}

// A prompt's text (a file name) edits at the cursor.
func TestPromptEditsAtTheCursor(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 100, 30).start()
	h.key("down", "down", "down", "enter", "d")
	h.mustContain("Dump orders.dlq to a file")
	h.key("ctrl+u")
	h.typeText("dlq.jsonl")
	h.key("ctrl+a")
	h.typeText("today-")
	h.key("ctrl+e", "left", "left", "left", "left", "left", "left", "ctrl+k")
	if got := h.m.prompt.text.String(); got != "today-dlq" {
		t.Fatalf("file name %q", got)
	}
}

// f1 opens help from a typed field, where ? is a letter: it lists the
// editing keys, and neither q nor ? (letters there); esc goes back to the
// field, still typing.
func TestHelpFromATypedFieldListsTheEditingKeys(t *testing.T) {
	k := newHarness(t, newFake(), Options{}, 100, 30).m.c.keys
	for name, to := range map[string]func(h *harness){
		"move dialog's N": func(h *harness) { toMoveDialog(h); h.key("right", "tab") },
		"typed target":    func(h *harness) { toMoveDialog(h); h.key("tab", "left") },
		"filter":          func(h *harness) { h.key("/") },
		"prompt":          func(h *harness) { h.key("down", "down", "down", "enter", "w") },
	} {
		h := newHarness(t, newFake(), Options{}, 120, 40).start()
		to(h)
		from := h.m.top()
		if !from.Capturing() {
			t.Fatalf("%s: not typing", name)
		}
		h.key("f1")
		if h.m.top() != h.m.helpView {
			t.Fatalf("%s: f1 did not open help", name)
		}
		h.mustContain("cursor left", "start of text", "end of text", "delete word", "delete to start", "delete to end")
		listed := flatHelp(h.m.helpView)
		for _, b := range k.EditKeys() {
			if !slices.ContainsFunc(listed, func(l key.Binding) bool { return slices.Equal(l.Keys(), b.Keys()) }) {
				t.Errorf("%s: help lacks %s", name, b.Help().Key)
			}
		}
		for _, b := range listed {
			if slices.Contains(b.Keys(), "q") || slices.Contains(b.Keys(), "?") || slices.Contains(b.Keys(), "space") {
				t.Errorf("%s: help lists %v %q, a letter while typing", name, b.Keys(), b.Help().Desc)
			}
		}
		h.key("esc")
		if h.m.top() != from || !from.Capturing() {
			t.Fatalf("%s: esc did not go back to the field", name)
		}
	}
}

// Help over the move dialog's choices (? works there) lists no q, which
// does nothing in a dialog.
func TestMoveDialogHelpListsNoQ(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 120, 40).start()
	toMoveDialog(h)
	h.key("?")
	if h.m.top() != h.m.helpView {
		t.Fatal("? did not open help")
	}
	for _, b := range flatHelp(h.m.helpView) {
		if slices.Contains(b.Keys(), "q") {
			t.Errorf("help lists q %q", b.Help().Desc)
		}
	}
}

// The program's context ending during a real running move (SIGTERM, in
// the CLI) stops the move through its context and ends the program only
// once the move has returned and written its audit line. (ui.Run sends
// stopMsg when its context ends; the CLI's process test sends the signal.)
func TestProgramContextEndingStopsAMoveCleanly(t *testing.T) {
	fc := newFake()
	fc.peeks["orders.dlq"] = fixturePeek(8)
	fc.moveStep = 150 * time.Millisecond
	c := &stepClient{fakeClient: fc}
	var audit brokertest.SyncBuffer
	m := New(Options{Client: gate.New(c, gate.Options{Principal: gate.Local("", false), Broker: "amqp://guest@localhost/", Log: gate.NewLog(&audit)})})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.c.ctx = ctx
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitText(t, tm, "● live")
	press(tm, "down", "down", "down", "enter")
	waitText(t, tm, "msg-0007")
	press(tm, "a", "m")
	waitText(t, tm, "marked messages (8)")
	press(tm, "enter")
	waitText(t, tm, "Confirm move")
	press(tm, "enter")
	waitText(t, tm, "2 of 8")
	cancel()
	tm.Send(stopMsg{})
	tm.WaitFinished(t, teatest.WithFinalTimeout(20*time.Second))
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.returned) != 1 || c.returned[0] == nil || c.returned[0].Moved == 0 || c.returned[0].Moved == 8 || !errors.Is(c.errs[0], context.Canceled) {
		t.Fatalf("the move did not return cancelled part-way before the program ended: %+v %v", c.returned, c.errs)
	}
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"phase":"start"`) || !strings.Contains(lines[1], `"phase":"done"`) ||
		!strings.Contains(lines[1], context.Canceled.Error()) {
		t.Fatalf("the audit log has no final line saying the move was cancelled:\n%s", audit.String())
	}
}
