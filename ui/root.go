package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/movedialog"
	"github.com/ladder-tui/ladder/ui/styled"
)

// Layout limits: below them the screen says so instead of drawing a
// broken layout.
const (
	minWidth  = 80
	minHeight = 24
	// chrome is the title bar, the status line and the help line.
	chrome = 3
	// maxStatusLines bounds a wrapped status message: its whole text stays
	// visible (a cut cause loses the point), taking rows from the body.
	maxStatusLines = 3
)

// reconnectPolicy is how long the UI waits between failed snapshots: the
// retry engine's own exponential backoff, 1 s doubling to 30 s.
var reconnectPolicy = retry.Policy{Backoff: retry.BackoffExponential, Base: time.Second, Factor: 2, Cap: 30 * time.Second}

// Model is the root model: it owns the screen stack, global keys, the
// polling loop and the chrome (title bar, status line, help line).
type Model struct {
	c *common
	// client is the broker shown: the composition root holds every role
	// and hands each screen the ones it uses, through closures that read
	// this field, so a vhost switch (which swaps it) reaches them all.
	client broker.Client
	open   func(string) (broker.Client, error)
	owned  []io.Closer // clients opened by the switchers, closed on exit
	title  string
	// openContext opens a client for a context (Options.OpenContext);
	// context is the one shown.
	openContext func(string) (broker.Client, error)
	context     string
	// snapBound bounds a snapshot (see snapshotBound); pollDone is closed
	// when the snapshot in flight returns (it ends pendingCmd's wait).
	snapBound time.Duration
	pollDone  chan struct{}
	w, h      int

	gen int // polling generation: answers and ticks of older ones are dropped

	home      *homeModel
	browser   *browserModel
	inspector *inspectorModel
	move      *movedialog.Model
	helpView  *helpModel
	findings  *findingsModel
	vhosts    *vhostModel
	contexts  *vhostModel
	prompt    *promptModel
	picker    *pickerModel
	stack     []screen

	status    string
	statusErr bool
	quitting  bool // q pressed during a move: quit when it has stopped
	helpBar   help.Model

	// seenCounts: the delivery counts the last peek of each queue saw, by
	// vhost and queue (see peekconsent.go).
	seenCounts map[string]*broker.PeekResult
}

// newModel builds the root model; now is the clock (tests pass a fixed one).
func newModel(opts Options, c *common) *Model {
	m := &Model{
		c:         c,
		client:    opts.Client,
		open:      opts.Open,
		title:     opts.Title,
		context:   opts.Context,
		snapBound: snapshotBound(opts.APITimeout),
	}
	if m.open == nil {
		c.keys.Vhost.SetEnabled(false)
	}
	if opts.OpenContext != nil && len(opts.Contexts) > 0 {
		m.openContext = opts.OpenContext
	} else {
		c.keys.Context.SetEnabled(false)
	}
	m.home = newHome(c)
	m.browser = newBrowser(c, func() usecase.DumpSource { return m.client })
	m.browser.scans, m.browser.context = opts.Scans, func() string { return m.context }
	m.inspector = newInspector(c)
	m.move = movedialog.New(movedialog.Env{
		Keys: c.keys, Styles: c.styles, Policy: c.policy,
		Client:  func() movedialog.Mover { return m.client },
		Context: func() context.Context { return c.ctx },
		AppKeys: func() []key.Binding { return appKeys(c, false) },
	})
	m.helpView = newHelp(c)
	m.findings = newFindings(c, m.home)
	m.vhosts = newVhosts(c, func() vhostSource { return m.client })
	m.contexts = newContexts(c, opts.Contexts, func() string { return m.context })
	m.prompt = newPrompt(c)
	m.picker = newPicker(c)
	m.stack = []screen{m.home}
	m.helpBar = help.New()
	m.helpBar.Styles = c.styles.Help
	return m
}

func (m *Model) screens() []screen {
	return []screen{m.home, m.browser, m.inspector, m.move, m.helpView, m.vhosts, m.contexts, m.prompt, m.picker, m.findings}
}

func (m *Model) top() screen { return m.stack[len(m.stack)-1] }

func (m *Model) push(s screen) {
	if m.top() != s {
		m.stack = append(m.stack, s)
	}
}

func (m *Model) pop() {
	if len(m.stack) > 1 {
		m.stack = m.stack[:len(m.stack)-1]
	}
}

// Init takes the first snapshot at once.
func (m *Model) Init() tea.Cmd { return m.poll() }

// poll asks for a snapshot, and ticks each second while it is in flight
// (see pending).
func (m *Model) poll() tea.Cmd {
	cs := &m.c.conn
	cs.polling, cs.probed = m.c.now(), false
	m.pollDone = make(chan struct{})
	return tea.Batch(snapshotCmd(m.c.ctx, m.client, m.gen, m.snapBound, m.c.now, m.pollDone),
		pendingCmd(m.pollDone, m.gen, time.Second))
}

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	return m, m.update(msg)
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	if cmd, handled := m.readConsent(msg); handled {
		return cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.helpBar.SetWidth(m.w)
		m.layout()
		return nil
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	case tea.PasteMsg:
		if m.tooSmall() {
			return nil // input, like a key: nothing acts on a screen not shown
		}
		return m.top().Update(msg)
	case pollMsg:
		if msg.gen != m.gen {
			return nil
		}
		return m.poll()
	case countdownMsg:
		return m.countdown(msg)
	case pendingMsg:
		return m.pending(msg)
	case probeMsg:
		return m.probed(msg)
	case snapshotMsg:
		return m.snapshot(msg)
	case refreshMsg:
		m.gen++ // any tick or answer of the old loop is now stale
		return m.poll()
	case openQueueMsg:
		if why := m.peekRefused(msg.queue); why != "" {
			return m.setStatus(why, true)
		}
		if ask, ok := m.peekQuestion(msg); ok {
			m.prompt.open(ask)
			m.push(m.prompt)
			return nil
		}
		m.browser.force = msg.force
		cmd := m.browser.open(msg.queue)
		m.push(m.browser)
		return cmd
	case peekConsentMsg:
		return m.peekConsented(msg)
	case peekMsg:
		if msg.err == nil {
			m.rememberCounts(msg.queue, msg.res)
		}
		if cmd, handled := m.peekNeedsConsent(msg); handled {
			return cmd
		}
	case openMessageMsg:
		m.inspector.open(msg)
		m.push(m.inspector)
		return nil
	case openMoveMsg:
		// The one place mutations are allowed or refused.
		if m.c.readOnly {
			return m.setStatus(m.c.refused(string(gate.Move)), true)
		}
		cmd := m.move.Open(msg.spec)
		m.push(m.move)
		return cmd
	case openPromptMsg:
		m.prompt.open(msg)
		m.push(m.prompt)
		return nil
	case openFindingsMsg:
		m.findings.open(msg)
		m.push(m.findings)
		return nil
	case openPickerMsg:
		m.picker.open(msg)
		m.push(m.picker)
		return nil
	case backMsg, movedialog.BackMsg:
		m.pop()
		return nil
	case movedialog.AskMsg:
		answer := msg.Answer
		return navCmd(openPromptMsg{
			title: msg.Title, confirm: true, yes: msg.Yes, no: msg.No, aboutMove: true,
			done: func(string) tea.Msg { return answer },
		})
	case quitAfterMoveMsg:
		return m.quitAfterMove()
	case stopMsg:
		// The program's context ended (SIGTERM): quit as an agreed q does,
		// a running move stopped cleanly first (its context, derived from
		// the program's, is already cancelled).
		return m.quitAfterMove()
	case movedialog.ClosedMsg:
		// The inspector under the dialog shows a message that may have left
		// its position: go back to the browser, which re-peeks.
		if msg.Changed && m.top() == m.inspector && m.inspector.queue == msg.Queue {
			m.pop()
		}
	case statusMsg:
		return m.setStatus(msg.text, msg.err)
	case switchVhostMsg:
		if m.open == nil {
			return nil
		}
		return openCmd(m.open, msg.vhost)
	case switchContextMsg:
		if m.openContext == nil || m.move.Running() {
			return nil
		}
		return openContextCmd(m.openContext, msg.name)
	case clientOpenedMsg:
		return m.switchClient(msg)
	case unblockReadyMsg:
		// Asked from home, it opens a dialog only if home is still in
		// front (the user may have opened a queue meanwhile).
		if msg.home && m.top() != screen(m.home) {
			return m.browser.Update(msg) // the browser read it ran as ends
		}
	}
	// Data messages go to every screen; each keeps what concerns it.
	var cmds []tea.Cmd
	for _, s := range m.screens() {
		cmds = append(cmds, s.Update(msg))
	}
	if _, ok := msg.(movedialog.DoneMsg); ok && !m.move.Running() {
		if m.quitting {
			cmds = append(cmds, tea.Quit)
		}
		// A question about the move that has just ended has no answer.
		if m.top() == m.prompt && m.prompt.ask.aboutMove {
			m.pop()
		}
	}
	return tea.Batch(cmds...)
}

func (m *Model) setStatus(text string, isErr bool) tea.Cmd {
	wasLines := len(m.statusLines())
	m.status, m.statusErr = text, isErr
	if len(m.statusLines()) != wasLines {
		m.layout()
	}
	return nil
}

// statusLines is the status message wrapped to the width, at most
// maxStatusLines (the last one cut only past that); one empty line when
// there is none.
func (m *Model) statusLines() []string {
	if m.status == "" || m.w <= 0 {
		return []string{""}
	}
	lines := termtext.Wrap(m.status, m.w)
	if len(lines) > maxStatusLines {
		rest := strings.Join(lines[maxStatusLines-1:], " ")
		lines = append(lines[:maxStatusLines-1], termtext.Truncate(rest, m.w))
	}
	return lines
}

// bodyHeight is what the chrome leaves, a wrapped status taking its rows.
func (m *Model) bodyHeight() int {
	return max(0, m.h-chrome-(len(m.statusLines())-1))
}

// layout gives every screen, hidden ones too (so going back shows the
// right size), the body's size.
func (m *Model) layout() {
	for _, s := range m.screens() {
		s.SetSize(m.w, m.bodyHeight())
	}
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	top := m.top()
	if key.Matches(msg, k.ForceQuit) {
		if m.quitting || !m.move.Running() {
			return tea.Quit
		}
		return m.quitAfterMove()
	}
	// "terminal too small" shows no screen, so no key may act on one: only
	// quitting, which the message offers (with no room to ask, a running
	// move is stopped cleanly first). Data messages still arrive.
	if m.tooSmall() {
		if key.Matches(msg, k.Quit) {
			if m.move.Running() {
				return m.quitAfterMove()
			}
			return tea.Quit
		}
		return nil
	}
	// esc goes to Back even while typing: it is how a filter is left.
	if key.Matches(msg, k.Back) {
		handled, cmd := top.Back()
		if !handled {
			m.pop()
		}
		return cmd
	}
	// f1 is help in a typed field too, where ? is a letter: opened there,
	// help lists the editing keys.
	if key.Matches(msg, k.TypingHelp) && top != m.helpView {
		m.openHelp(top)
		return nil
	}
	if top.Capturing() {
		return top.Update(msg)
	}
	// A key read-only took away says why it does nothing, on a screen
	// (a dialog or picker has keys of its own).
	if action, ok := k.Withheld(msg.String()); ok && m.isScreen(top) {
		return m.setStatus(m.c.refused(action), true)
	}
	switch {
	case key.Matches(msg, k.Quit):
		// q quits from a screen only: inside a dialog, prompt, picker or a
		// running action it does nothing (esc closes those), so a q
		// meant for a field that is not focused cannot end the program.
		// Help over a screen lists that screen's keys, q among them, and q
		// acts as it does there.
		if m.isScreen(top) || top == m.helpView && m.helpView.quits {
			return m.quit()
		}
		return nil
	case key.Matches(msg, k.Help), key.Matches(msg, k.TypingHelp):
		if top == m.helpView {
			m.pop()
		} else {
			m.openHelp(top)
		}
		return nil
	case key.Matches(msg, k.Vhost) && m.vhostHere(top):
		m.push(m.vhosts)
		return m.vhosts.open()
	case key.Matches(msg, k.Context) && m.vhostHere(top):
		m.push(m.contexts)
		return m.contexts.open()
	}
	m.setStatus("", false) // a key press acknowledges the last message
	return top.Update(msg)
}

// peekQuestion is the question asked before opening a queue whose peek
// someone else feels: consumers that lose sight of the messages meanwhile
// (or may: the broker did not say), a quorum delivery limit the peek
// counts toward. None for a confirmed open, a queue the snapshot lacks (the
// peek will say what is wrong) or one whose peek costs only the redelivered
// flag. Re-peeks in the same browser (r, after a move or a dump) do not ask
// again, unless each peek counts a delivery toward a limit: then the peek
// is refused until the user says yes to that one (peekNeedsConsent). The
// answer is the question's y; there is no flag to pass here.
func (m *Model) peekQuestion(msg openQueueMsg) (openPromptMsg, bool) {
	s := m.home.snap
	if msg.confirmed || s == nil {
		return openPromptMsg{}, false
	}
	i := slices.IndexFunc(s.Topology.Queues, func(q topology.Queue) bool { return q.Name == msg.queue })
	if i < 0 {
		return openPromptMsg{}, false
	}
	q := s.Topology.Queues[i]
	cost := broker.ReadCostOf(s, q)
	if !cost.Felt() {
		return openPromptMsg{}, false
	}
	// The name is untrusted and may be long: it gets a share of the line,
	// the cost (the point of asking) is wrapped, never cut.
	name := termtext.Truncate(termtext.Sanitize(q.Name), max(16, m.w/3))
	queue, force := msg.queue, cost.NeedsConsent()
	return openPromptMsg{
		title:   present.PeekQuestion(name, m.c.peekLimit, q.Ready, cost),
		confirm: true, yes: "peek",
		done: func(string) tea.Msg { return openQueueMsg{queue: queue, confirmed: true, force: force} },
	}, true
}

// quit quits; while a move or replay runs it asks first, and quits once
// the move has stopped cleanly.
func (m *Model) quit() tea.Cmd {
	if m.move.Running() {
		what := m.move.Action()
		m.prompt.open(openPromptMsg{
			title:   "A " + what + " is running. Stop it after the batch in flight and quit? What has moved stays moved.",
			confirm: true, yes: "stop and quit", no: "keep going", aboutMove: true,
			done: func(string) tea.Msg { return quitAfterMoveMsg{} },
		})
		m.push(m.prompt)
		return nil
	}
	return tea.Quit
}

// openHelp shows help for the keys of from, the screen it is opened from.
func (m *Model) openHelp(from screen) {
	m.helpView.from, m.helpView.quits = from, m.isScreen(from)
	m.push(m.helpView)
}

// quitAfterMoveMsg: the user agreed to stop the running move and quit.
type quitAfterMoveMsg struct{}

// stopMsg: the program's context ended (ui.Run sends it).
type stopMsg struct{}

// isScreen says whether s is a screen (ladders, browser, inspector) rather
// than a dialog, prompt, picker or help over one: q quits only from these.
func (m *Model) isScreen(s screen) bool {
	return s == m.home || s == m.browser || s == m.inspector
}

// vhostHere says whether the vhost switcher opens from screen s (not over
// a dialog, help or itself), so the screens that list it agree.
func (m *Model) vhostHere(s screen) bool { return m.isScreen(s) }

// tooSmall is true below the minimum size, when the frame says so
// instead of drawing a screen.
func (m *Model) tooSmall() bool { return m.w < minWidth || m.h < minHeight }

// quitAfterMove stops a running move and quits when it has settled, so
// quitting never leaves a message half moved.
func (m *Model) quitAfterMove() tea.Cmd {
	if !m.move.Running() {
		return tea.Quit
	}
	m.quitting = true
	m.move.Stop()
	return m.setStatus("stopping the move before quitting (ctrl+c again to quit at once)…", false)
}

// snapshot applies a current snapshot or records the broker going away.
func (m *Model) snapshot(msg snapshotMsg) tea.Cmd {
	if msg.gen != m.gen {
		m.c.log.Printf("dropping snapshot of generation %d (current %d)", msg.gen, m.gen)
		return nil
	}
	cs := &m.c.conn
	cs.polling = time.Time{}
	if msg.err != nil || msg.snap == nil {
		cs.down = true
		cs.attempt++
		cs.err = msg.err
		cs.apiSlow = errors.Is(msg.err, broker.ErrAPISlow)
		if cs.waiting = broker.WaitsForUser(msg.err); cs.waiting {
			// Polling again would only be refused again (and a refused
			// login is logged by the broker each time): wait for r.
			m.c.log.Printf("snapshot failed (attempt %d), not retrying until r: %v", cs.attempt, msg.err)
			m.setStatus(termtext.Sanitize(broker.Describe(msg.err))+" · r retries", true)
			return nil
		}
		delay := reconnectPolicy.Nominal(cs.attempt)
		cs.retryAt = m.c.now().Add(delay)
		m.c.log.Printf("snapshot failed (attempt %d), retrying in %v: %v", cs.attempt, delay, msg.err)
		text := "broker unreachable"
		if msg.err != nil {
			text += ": " + termtext.Sanitize(broker.Describe(msg.err))
		}
		var probe tea.Cmd
		if cs.apiSlow {
			// Slow, not down: what AMQP can tell is shown meanwhile.
			text = termtext.Sanitize(broker.Describe(msg.err)) + m.amqpNote()
			probe = m.probe()
		}
		m.setStatus(text, true)
		return tea.Batch(m.tickCountdown(min(time.Second, delay)), probe)
	}
	if cs.down {
		m.setStatus("reconnected", false)
		if cs.apiSlow {
			m.setStatus("the management API answers again", false)
		}
	}
	cs.loaded, cs.down, cs.waiting, cs.attempt, cs.err = true, false, false, 0, nil
	cs.apiSlow, cs.amqpAt, cs.amqpErr = false, time.Time{}, nil
	cs.lastOK, cs.gotAt = msg.snap.TakenAt, msg.at
	if cs.lastOK.IsZero() {
		cs.lastOK = msg.at
	}
	var cmds []tea.Cmd
	for _, s := range m.screens() {
		cmds = append(cmds, s.Update(msg))
	}
	gen := m.gen
	cmds = append(cmds, m.c.tick(m.c.refreshEvery(m.home.snap), func(time.Time) tea.Msg { return pollMsg{gen: gen} }))
	return tea.Batch(cmds...)
}

// pending redraws the wait for a snapshot in flight each second; past
// slowAfter it asks AMQP for depths once (the management API may be slow,
// not the broker).
func (m *Model) pending(msg pendingMsg) tea.Cmd {
	cs := &m.c.conn
	if msg.gen != m.gen || cs.polling.IsZero() {
		return nil
	}
	var probe tea.Cmd
	if !cs.probed && cs.pendingFor(m.c.now()) >= slowAfter {
		probe = m.probe()
	}
	return tea.Batch(probe, pendingCmd(m.pollDone, m.gen, time.Second))
}

// maxProbe bounds the queues AMQP is asked about (one round trip each):
// the ladders' first.
const maxProbe = 300

// probe asks AMQP for the depths of the queues the last snapshot listed,
// when the client can (nil otherwise).
func (m *Model) probe() tea.Cmd {
	p, ok := m.client.(depthProber)
	if !ok {
		return nil
	}
	m.c.conn.probed = true
	var names []string
	if s := m.home.snap; s != nil {
		seen := map[string]bool{}
		add := func(q string) {
			if q != "" && !seen[q] && len(names) < maxProbe {
				seen[q] = true
				names = append(names, q)
			}
		}
		for _, l := range s.Ladders {
			add(l.Main)
			for _, t := range l.Tiers {
				add(t.Queue)
			}
			for _, w := range l.WaitQueues {
				add(w)
			}
			add(l.DLQ)
			for _, e := range l.ErrorQueues {
				add(e)
			}
		}
		for _, q := range s.Topology.Queues {
			add(q.Name)
		}
	}
	return probeCmd(m.c.ctx, p, m.gen, names, m.c.now)
}

// probed applies what AMQP told while the management API was slow: the
// depths it gave over the last snapshot's (rates unknown meanwhile), and
// that AMQP answers.
func (m *Model) probed(msg probeMsg) tea.Cmd {
	cs := &m.c.conn
	if msg.gen != m.gen {
		return nil
	}
	cs.amqpErr = msg.err
	if msg.err == nil {
		cs.amqpAt = msg.at
	}
	if cs.down && cs.apiSlow && !cs.waiting {
		m.setStatus(termtext.Sanitize(broker.Describe(cs.err))+m.amqpNote(), true)
	}
	if msg.err != nil || m.home.snap == nil || len(msg.depths) == 0 {
		return nil
	}
	part := snapshotMsg{gen: msg.gen, snap: withDepths(m.home.snap, msg.depths, msg.at), at: msg.at}
	var cmds []tea.Cmd
	for _, s := range m.screens() {
		cmds = append(cmds, s.Update(part))
	}
	return tea.Batch(cmds...)
}

// amqpNote says what AMQP told while the API is slow.
func (m *Model) amqpNote() string {
	cs := &m.c.conn
	switch {
	case cs.amqpErr != nil:
		return " · AMQP: " + termtext.Sanitize(broker.Describe(cs.amqpErr))
	case !cs.amqpAt.IsZero() && m.home.snap == nil:
		return " · AMQP answers (" + present.Clock(cs.amqpAt) + ")"
	case !cs.amqpAt.IsZero():
		return " · AMQP answers: depths from " + present.Clock(cs.amqpAt)
	}
	return " · retrying"
}

// withDepths is s with the depths AMQP gave at at: the ready counts
// replaced, rates unknown (the API's counters were not read).
func withDepths(s *broker.Snapshot, depths map[string]int64, at time.Time) *broker.Snapshot {
	c := *s
	c.TakenAt = at
	c.Topology.Queues = slices.Clone(s.Topology.Queues)
	for i := range c.Topology.Queues {
		q := &c.Topology.Queues[i]
		if d, ok := depths[q.Name]; ok {
			q.Ready, q.Messages = d, d+q.Unacked
		}
		q.Rates = topology.Rates{}
	}
	return &c
}

func (m *Model) tickCountdown(d time.Duration) tea.Cmd {
	gen := m.gen
	return m.c.tick(d, func(time.Time) tea.Msg { return countdownMsg{gen: gen} })
}

// countdown redraws the reconnect countdown each second and polls when due.
func (m *Model) countdown(msg countdownMsg) tea.Cmd {
	if msg.gen != m.gen || !m.c.conn.down || m.c.conn.waiting {
		return nil
	}
	left := m.c.conn.retryAt.Sub(m.c.now())
	if left <= 0 {
		return m.poll()
	}
	return m.tickCountdown(min(time.Second, left))
}

// switchClient replaces the broker client after the vhost switcher opened
// a new one, and starts afresh on the home screen.
func (m *Model) switchClient(msg clientOpenedMsg) tea.Cmd {
	if msg.err != nil {
		if msg.context != "" {
			m.contexts.Update(msg)
			return m.setStatus("open context "+termtext.Sanitize(msg.context)+": "+termtext.Sanitize(broker.Describe(msg.err)), true)
		}
		m.vhosts.Update(msg)
		return m.setStatus("open vhost "+termtext.Sanitize(msg.vhost)+": "+termtext.Sanitize(broker.Describe(msg.err)), true)
	}
	var cmds []tea.Cmd
	old := m.client
	for i, c := range m.owned {
		if c == old {
			m.owned = append(m.owned[:i], m.owned[i+1:]...)
			cmds = append(cmds, closeCmd(old))
			break
		}
	}
	m.owned = append(m.owned, msg.client)
	m.client = msg.client
	switch ro := msg.client.ReadOnly(); {
	case ro && !m.c.readOnly:
		m.c.readOnly = true
		m.c.keys.ReadOnly()
	case !ro && m.c.readOnly && msg.context != "":
		// Another context is another broker with its own read-only (a
		// --read-only given for the run makes every context's client
		// read-only): a vhost of the same one never lifts it.
		m.c.readOnly = false
		m.c.keys.ReadWrite()
	}
	m.c.conn = connState{}
	m.home.reset()
	m.browser.snap = nil
	m.stack = []screen{m.home}
	m.gen++
	if msg.context != "" {
		// Another broker: a vhost of the same name there is another.
		m.seenCounts = nil
		m.context, m.title = msg.context, msg.context
		m.setStatus("switched to context "+termtext.Sanitize(msg.context), false)
	} else {
		m.setStatus("switched to vhost "+termtext.Sanitize(msg.vhost), false)
	}
	return tea.Batch(append(cmds, m.poll())...)
}

func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "ladder"
	if m.title != "" {
		v.WindowTitle += " — " + termtext.Sanitize(m.title)
	}
	return v
}

// render draws the frame: exactly h lines of at most w cells.
func (m *Model) render() string {
	if m.tooSmall() {
		return tooSmall(m.w, m.h)
	}
	st := m.c.styles
	body := fitLines(m.top().View(), m.w, m.bodyHeight())
	sty := st.Muted
	if m.statusErr {
		sty = st.Error
	}
	lines := m.statusLines()
	for i, l := range lines {
		if l != "" {
			lines[i] = sty.Render(l)
		}
	}
	status := strings.Join(lines, "\n")
	helpLine := m.shortHelp(m.top().ShortHelp())
	return m.titleBar() + "\n" + body + "\n" + status + "\n" + helpLine
}

// shortHelp renders a screen's footer keys in one line of the width.
// Screens list them most important first; when they do not fit, the last
// ones go (they are all on the ? screen) but help and quit stay, so the way
// to the rest is always shown.
func (m *Model) shortHelp(bs []key.Binding) string {
	k := m.c.keys
	// Help and quit end the footer; they and whatever esc does stay,
	// however narrow it is.
	last := func(b key.Binding) bool {
		return slices.Equal(b.Keys(), k.Help.Keys()) || slices.Equal(b.Keys(), k.Quit.Keys())
	}
	esc := func(b key.Binding) bool { return slices.Equal(b.Keys(), k.Back.Keys()) }
	var rest, keep []key.Binding
	for _, b := range bs {
		switch {
		case !b.Enabled():
		case last(b):
			keep = append(keep, b)
		default:
			rest = append(rest, b)
		}
	}
	h := m.helpBar
	h.SetWidth(0) // measure unbounded
	// Drop the last key but esc until the footer fits; the order stays.
	for termtext.Width(h.ShortHelpView(append(slices.Clone(rest), keep...))) > m.w {
		i := len(rest) - 1
		for i >= 0 && esc(rest[i]) {
			i--
		}
		if i < 0 {
			break
		}
		rest = slices.Delete(rest, i, i+1)
	}
	return styled.Truncate(h.ShortHelpView(append(rest, keep...)), m.w)
}

// titleBar is "ladder · demo · vhost / · RabbitMQ 3.13" and, on the right,
// the connection: live, connecting, or reconnecting with its countdown.
// When it does not fit, the vhost name is cut first and "RabbitMQ" goes, so
// what the title says about rates and read-only is never the part cut off.
func (m *Model) titleBar() string {
	st := m.c.styles
	cs := &m.c.conn
	var right string
	now := m.c.now()
	switch wait := cs.pendingFor(now); {
	case cs.down:
		right = st.Down.Render("○ " + cs.downText(now))
	case !cs.loaded && wait >= slowAfter:
		right = st.Warning.Render("○ API slow: no answer for " + present.Dur(wait.Truncate(time.Second)))
	case !cs.loaded:
		right = st.Muted.Render("○ connecting…")
	case m.snapshotAt() != nil:
		// A browsed queue is a snapshot: say when it was taken, not "live".
		right = st.Muted.Render("snapshot " + present.Clock(*m.snapshotAt()))
	case !cs.gotAt.IsZero() && now.Sub(cs.gotAt) > m.staleAfter() && wait >= slowAfter:
		// Not "live" over data the API has not refreshed.
		right = st.Warning.Render("◌ API slow " + present.Dur(wait.Truncate(time.Second)) + " · " + cs.dataAge(now))
	case !cs.gotAt.IsZero() && now.Sub(cs.gotAt) > m.staleAfter():
		right = st.Warning.Render("◌ " + cs.dataAge(now))
	default:
		right = st.Live.Render("● live") + st.Muted.Render(" "+present.Clock(cs.lastOK))
	}
	rw := termtext.Width(right)

	vhost := termtext.Sanitize(m.client.Vhost())
	version := ""
	if m.home.snap != nil && m.home.snap.BrokerVersion != "" {
		version = termtext.Sanitize(m.home.snap.BrokerVersion)
	}
	var tail []string
	if s := m.home.snap; s != nil {
		switch s.Topology.RatesFrom {
		case topology.RatesFromPrometheus:
			tail = append(tail, "rates: prometheus")
		case topology.RatesUnavailable:
			tail = append(tail, "no rates")
		}
	}
	// The cluster: its nodes up of all, and an alarm (publishes blocked
	// everywhere); its name only where there is room.
	cluster := ""
	if s := m.home.snap; s != nil && len(s.Topology.Nodes) > 0 {
		up, total := topology.NodesUp(&s.Topology)
		if total > 1 || up < total {
			tail = append(tail, fmt.Sprintf("%d/%d nodes", up, total))
		}
		if slices.ContainsFunc(s.Topology.Nodes, func(n topology.Node) bool { return n.MemAlarm || n.DiskAlarm }) {
			tail = append(tail, "ALARM")
		}
		if total > 1 {
			cluster = termtext.Sanitize(s.Topology.ClusterName)
		}
	}
	if m.c.readOnly {
		tail = append(tail, "read-only")
	}
	parts := func(vhost, version string) []string {
		p := []string{}
		if m.title != "" {
			p = append(p, termtext.Sanitize(m.title))
		}
		if cluster != "" {
			p = append(p, cluster)
		}
		p = append(p, "vhost "+vhost)
		if version != "" {
			p = append(p, version)
		}
		return append(p, tail...)
	}
	width := func(p []string) int { return termtext.Width("ladder · " + strings.Join(p, " · ")) }
	room := m.w - rw - 1
	ver := version
	if ver != "" {
		ver = "RabbitMQ " + ver
	}
	p := parts(vhost, ver)
	if width(p) > room {
		cluster = "" // the name goes first: the counts stay
		p = parts(vhost, ver)
	}
	if over := width(p) - room; over > 0 && version != "" {
		ver = version // the number alone says it
		p = parts(vhost, ver)
	}
	if over := width(p) - room; over > 0 {
		// A vhost name keeps at least a few cells: enough to tell it apart.
		keep := max(termtext.Width(vhost)-over, min(termtext.Width(vhost), 6))
		p = parts(termtext.Truncate(vhost, keep), ver)
	}
	left := st.Title.Render("ladder")
	for _, s := range p {
		left += st.Muted.Render(" · ") + s
	}
	if width(p)+1+rw > m.w {
		left = styled.Truncate(left, max(0, m.w-rw-1))
	}
	gap := max(1, m.w-termtext.Width(left)-rw)
	return left + strings.Repeat(" ", gap) + right
}

// staleAfter is how old the data may grow before the title stops saying
// "live": three refreshes, and at least slowAfter.
func (m *Model) staleAfter() time.Duration {
	return max(3*m.c.refreshEvery(m.home.snap), slowAfter)
}

// snapshotAt is when the messages on screen were read: the browser's (or
// the inspector's, which shows one of them) peek, under any dialog or
// prompt opened over them; nil on other screens.
func (m *Model) snapshotAt() *time.Time {
	var under screen = m.home
	for i := len(m.stack) - 1; i >= 0; i-- {
		if m.isScreen(m.stack[i]) {
			under = m.stack[i]
			break
		}
	}
	switch under {
	case screen(m.browser), screen(m.inspector):
		if r := m.browser.res; r != nil && !r.PeekedAt.IsZero() {
			return &r.PeekedAt
		}
	}
	return nil
}

// tooSmall explains the minimum size in whatever room there is.
func tooSmall(w, h int) string {
	msg := []string{
		"terminal too small",
		itoaDim(w, h) + ", ladder needs " + itoaDim(minWidth, minHeight),
		"enlarge the window or press q",
	}
	return fitLines(strings.Join(msg, "\n"), max(w, 1), max(min(h, len(msg)), 1))
}

func itoaDim(w, h int) string { return strconv.Itoa(w) + "×" + strconv.Itoa(h) }
