package movedialog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/pace"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/ui/component/input"
	"github.com/ladder-tui/ladder/ui/styled"
)

// Scope choices.
type scopeKind int

const (
	scopeSelected scopeKind = iota
	scopeMarked
	scopeFirstN
	scopeAll
	scopeChosen // what the browser's w expressions choose, across the queue
)

type scopeOpt struct {
	label string
	kind  scopeKind
}

type targetOpt struct {
	label  string
	target moveplan.Target
	typed  bool // the user types queue:NAME or exchange:NAME[:KEY]
}

type delayOpt struct {
	label string
	d     time.Duration
	typed bool
}

// Step is where the dialog is: form, dry run, running, summary.
type Step int

const (
	StepForm    Step = iota
	StepPreview      // dry run asked for or shown, waiting for confirmation
	StepRunning
	StepSummary
)

// Form fields. Choice fields (scope, target, delay, reset) change with
// space and the arrows; typed fields (N, where, a typed target, a typed
// delay, rate, max moves) take text, space included, and edit it with the
// arrows: no field is both, so space and ←/→ never do two things in one
// place. Focus order is fields(). The typed fields are the command line's
// flags (-n, --where, --rate, --max-moves), read by the same parsers.
// Field is one of the form's fields.
type Field int

const (
	FieldScope Field = iota
	FieldTarget
	FieldDelay
	FieldReset
	FieldCount
	FieldTargetText // the target typed, when the target's choice is "typed"
	FieldDelayText  // the delay typed, when the delay's choice is "typed"
	FieldWhere      // --where, for the scopes that look at the whole source
	FieldRate       // --rate
	FieldMaxMoves   // --max-moves, the loop guard
)

// Model is the move / re-publish dialog: choose, preview (dry run),
// confirm, watch progress, read the summary. It is the only caller of
// Client.Move, so the confirmation rule lives in one place.
type Model struct {
	env  Env
	w, h int

	spec    Spec
	scopes  []scopeOpt
	targets []targetOpt
	delays  []delayOpt
	// The choice made in each field: indexes into scopes, targets, delays.
	scopeAt, targetAt, delayAt int
	reset                      bool
	focus                      Field
	count                      input.Line // N for "first N"
	tTarget                    input.Line
	tDelay                     input.Line
	where, rate, maxMoves      input.Line
	formErr                    string

	step    Step
	id      int // routes results; bumped for every Move call
	req     broker.MoveRequest
	preview *broker.MoveReport
	err     error

	progress   broker.MoveProgress
	gate       *pace.Hold // p pauses the running move here
	cancel     context.CancelFunc
	cancelling bool
	progressCh chan broker.MoveProgress
	report     *broker.MoveReport
	bar        progress.Model
}

// New is the dialog, closed until Open.
func New(env Env) *Model {
	bar := progress.New(progress.WithFillCharacters('█', '░'), progress.WithoutPercentage())
	bar.FullColor, bar.EmptyColor = env.Styles.ProgressA, env.Styles.ProgressB
	return &Model{env: env, bar: bar}
}

// Open starts the dialog afresh for spec; for an unblock it returns the
// dry run to ask for.
func (m *Model) Open(spec Spec) tea.Cmd {
	id := m.id
	*m = Model{env: m.env, w: m.w, h: m.h, bar: m.bar, spec: spec, id: id + 1}
	m.count.Set("10")
	m.maxMoves.Set(strconv.Itoa(usecase.DefaultMaxMoves))
	m.scopes = scopeOptions(spec)
	m.targets = targetOptions(spec)
	m.delays = delayOptions(spec, m.env.Policy)
	if spec.Unblock != nil {
		return m.preflight(*spec.Unblock)
	}
	return nil
}

func scopeOptions(s Spec) []scopeOpt {
	if s.ReplayFile != "" {
		return []scopeOpt{{label: "every message in " + s.ReplayFile, kind: scopeAll}, {label: "the first N", kind: scopeFirstN}}
	}
	var out []scopeOpt
	marked := func() {
		if len(s.Marked) > 0 {
			out = append(out, scopeOpt{label: "marked messages (" + strconv.Itoa(len(s.Marked)) + ")", kind: scopeMarked})
		}
	}
	if !s.Single {
		marked()
	}
	if !s.Where.Empty() && !s.Single {
		out = append(out, scopeOpt{label: chosenLabel(s), kind: scopeChosen})
	}
	if s.Cursor != nil {
		out = append(out, scopeOpt{label: "this message (#" + strconv.Itoa(s.Cursor.Position) + ")", kind: scopeSelected})
	}
	if s.Single {
		marked()
	}
	out = append(out,
		scopeOpt{label: "the first N", kind: scopeFirstN},
		scopeOpt{label: "the whole queue (" + present.Count(s.Depth) + " ready)", kind: scopeAll})
	return out
}

// chosenLabel names the messages the w filter chooses: their number when
// the peek saw the whole queue, else how many of the peeked it chose (the
// dry run counts the rest).
func chosenLabel(s Spec) string {
	if s.AllPeeked {
		return "the " + present.Count(int64(s.Chosen)) + " chosen by the w filter"
	}
	return "those the w filter chooses in the whole queue (" + present.Count(int64(s.Chosen)) + " of the " + present.Count(int64(s.Peeked)) + " peeked)"
}

func targetOptions(s Spec) []targetOpt {
	out := []targetOpt{{label: "origin (the queue each message failed in)", target: moveplan.Target{Kind: moveplan.TargetOrigin}}}
	if s.ReplayFile != "" {
		out = []targetOpt{
			{label: "original (where each message was dumped from)", target: moveplan.Target{Kind: moveplan.TargetOriginal}},
			out[0],
			{label: "this queue, " + s.Queue, target: moveplan.Target{Kind: moveplan.TargetQueue, Name: s.Queue}},
		}
	}
	if l := s.Ladder; l != nil {
		if l.Main != s.Queue {
			out = append(out, targetOpt{label: "main queue " + l.Main, target: moveplan.Target{Kind: moveplan.TargetQueue, Name: l.Main}})
		}
		for _, t := range l.Tiers {
			if t.Queue != s.Queue {
				out = append(out, targetOpt{label: "tier " + t.Queue + " (" + retry.FormatDelay(t.TTL) + ")", target: moveplan.Target{Kind: moveplan.TargetQueue, Name: t.Queue}})
			}
		}
		if l.DLQ != "" && l.DLQ != s.Queue {
			out = append(out, targetOpt{label: "DLQ " + l.DLQ, target: moveplan.Target{Kind: moveplan.TargetQueue, Name: l.DLQ}})
		}
	}
	return append(out, targetOpt{label: "typed", typed: true})
}

func delayOptions(s Spec, p *retry.Policy) []delayOpt {
	out := []delayOpt{{label: "none (publish now)"}}
	seen := map[time.Duration]bool{}
	if l := s.Ladder; l != nil {
		for _, t := range l.Tiers {
			if t.TTL > 0 && !seen[t.TTL] {
				seen[t.TTL] = true
				out = append(out, delayOpt{label: retry.FormatDelay(t.TTL) + " (TTL of " + t.Queue + ")", d: t.TTL})
			}
		}
	}
	if p != nil && p.Validate() == nil {
		attempt := 1
		if s.Cursor != nil {
			attempt = int(s.Cursor.Retry.Count) + 1
		}
		d := p.Nominal(attempt)
		out = append(out, delayOpt{label: retry.FormatDelay(d) + " (policy, attempt " + strconv.Itoa(attempt) + ")", d: d})
	}
	return append(out, delayOpt{label: "typed", typed: true})
}

func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.bar.SetWidth(max(10, m.innerWidth()))
}

// innerWidth is the text width inside the dialog frame.
func (m *Model) innerWidth() int { return max(20, min(m.w, 100)-4) }

// Capturing: a focused text field takes every printable key, and so does
// the row of a typed target or delay (its text is drawn beside the choice):
// no letter reaches the form's keys or the screens behind.
func (m *Model) Capturing() bool { return m.step == StepForm && (m.typing() || m.textOf() >= 0) }

// textOf is the text field of the focused choice when its choice is
// "typed" (the two share a row), else -1.
func (m *Model) textOf() Field {
	switch {
	case m.focus == FieldTarget && m.targets[m.targetAt].typed:
		return FieldTargetText
	case m.focus == FieldDelay && m.delays[m.delayAt].typed:
		return FieldDelayText
	}
	return -1
}

// isText is a key that types a character (space aside: on a choice it
// changes the choice).
func isText(msg tea.KeyPressMsg) bool {
	return msg.Text != "" && msg.Text != " " && msg.Mod&^tea.ModShift == 0
}

// typing reports a typed field focused.
func (m *Model) typing() bool {
	switch m.focus {
	case FieldCount, FieldTargetText, FieldDelayText, FieldWhere, FieldRate, FieldMaxMoves:
		return true
	}
	return false
}

// Running reports a move in flight (quitting waits for it to stop).
func (m *Model) Running() bool { return m.step == StepRunning }

// Back: esc steps back through the dialog; while moving it asks whether
// to stop the move, which then stops after the batch in flight is settled.
func (m *Model) Back() (bool, tea.Cmd) { return true, m.cancelStep() }

// what names the run in a refusal, as the commands do.
func (m *Model) what() string {
	if m.spec.ReplayFile != "" {
		return "replay " + m.spec.ReplayFile
	}
	return "move from " + m.spec.Queue
}

// Action is what the dialog runs, for questions: "move" or "replay".
func (m *Model) Action() string {
	if m.spec.ReplayFile != "" {
		return "replay"
	}
	return "move"
}

// stopMoveMsg: the user agreed to stop the running move id.
type stopMoveMsg struct{ id int }

// askStop asks before stopping the running move: an esc meant for
// something else must not cut a move short. The question closes by itself
// if the move ends first.
func (m *Model) askStop() tea.Cmd {
	if m.cancelling {
		return nil // already stopping
	}
	id, what := m.id, m.Action()
	return navCmd(AskMsg{
		Title: "Stop the " + what + "? It stops after the batch in flight; what has moved stays moved.",
		Yes:   "stop the " + what, No: "keep going",
		Answer: stopMoveMsg{id: id},
	})
}

func (m *Model) cancelStep() tea.Cmd {
	switch m.step {
	case StepForm:
		return navCmd(BackMsg{})
	case StepPreview:
		m.id++ // a dry run still in flight is now stale
		if m.spec.Unblock != nil {
			return navCmd(BackMsg{}) // an unblock has no form to go back to
		}
		m.step, m.preview, m.err = StepForm, nil, nil
	case StepRunning:
		return m.askStop()
	case StepSummary:
		return m.close()
	}
	return nil
}

// Stop cancels a running move: it stops after the batch in flight.
func (m *Model) Stop() {
	if m.cancel != nil && !m.cancelling {
		m.cancelling = true
		m.cancel()
	}
}

func (m *Model) close() tea.Cmd {
	q := m.spec.Queue
	return tea.Sequence(navCmd(BackMsg{}), navCmd(ClosedMsg{Queue: q, Changed: m.changed()}))
}

// changed says whether the move that ran may have changed the source
// queue: only a move that skipped every message surely left it as it was.
func (m *Model) changed() bool {
	if m.step != StepSummary {
		return false
	}
	r := m.report
	return r == nil || r.Moved > 0 || r.Failed > 0 || r.Returned > 0 || r.Skipped < r.Requested
}

func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	case tea.PasteMsg:
		if m.step != StepForm {
			return nil
		}
		if t := m.textOf(); t >= 0 {
			m.focus = t
		}
		if m.typing() && m.input().Update(msg, m.env.Keys) {
			m.formErr = ""
		}
	case stopMoveMsg:
		if msg.id == m.id && m.step == StepRunning {
			m.Stop()
		}
	case DoneMsg:
		if msg.ID != m.id {
			return nil
		}
		return m.done(msg)
	case ProgressMsg:
		if msg.ID != m.id || m.step != StepRunning {
			return nil
		}
		m.progress = msg.Progress
		return waitProgress(m.id, m.progressCh)
	}
	return nil
}

func (m *Model) done(msg DoneMsg) tea.Cmd {
	if msg.DryRun {
		m.preview, m.err = msg.Report, msg.Err
		if m.err == nil && m.preview != nil {
			m.err = usecase.CheckPreview(m.what(), m.spec.ReplayFile != "", m.preview)
		}
		return nil
	}
	if m.cancel != nil {
		m.cancel()
	}
	m.step, m.report, m.err = StepSummary, msg.Report, msg.Err
	if msg.Report != nil {
		m.progress.Done = msg.Report.Moved + msg.Report.Failed + msg.Report.Returned + msg.Report.Skipped
		m.progress.Moved, m.progress.Failed = msg.Report.Moved, msg.Report.Failed
	}
	return nil
}

func (m *Model) input() *input.Line {
	switch m.focus {
	case FieldTargetText:
		return &m.tTarget
	case FieldDelayText:
		return &m.tDelay
	case FieldWhere:
		return &m.where
	case FieldRate:
		return &m.rate
	case FieldMaxMoves:
		return &m.maxMoves
	}
	return &m.count
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.env.Keys
	switch m.step {
	case StepForm:
		return m.formKey(msg)
	case StepPreview:
		switch {
		case key.Matches(msg, k.Confirm):
			if m.preview != nil && m.err == nil {
				return m.start()
			}
		case key.Matches(msg, k.Cancel):
			return m.cancelStep()
		}
	case StepRunning:
		switch {
		case key.Matches(msg, k.Cancel):
			return m.askStop()
		case key.Matches(msg, k.Pause) && m.gate != nil && !m.cancelling:
			if m.gate.Paused() {
				m.gate.Resume()
			} else {
				m.gate.Pause()
			}
		}
	case StepSummary:
		if key.Matches(msg, k.Close) {
			return m.close()
		}
	}
	return nil
}

func (m *Model) formKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.env.Keys
	// A typed field first: it takes text (j, k, y, n and space too) and its
	// editing keys (←/→ move the cursor); tab, shift+tab, ↑/↓ and enter are
	// left to the form. Any change to a field clears the error about it: it
	// may be fixed.
	if m.typing() && m.input().Update(msg, k) {
		m.formErr = ""
		return nil
	}
	// On a typed choice's row a character goes into its text, which takes
	// the focus: y, n, j, k and every other letter are text there.
	if t := m.textOf(); t >= 0 && isText(msg) {
		m.focus = t
		m.input().Update(msg, k)
		m.formErr = ""
		return nil
	}
	fields := m.fields()
	pos := slices.Index(fields, m.focus)
	switch {
	case key.Matches(msg, k.Next):
		m.focus = fields[(pos+1)%len(fields)]
	case key.Matches(msg, k.Prev):
		m.focus = fields[(pos+len(fields)-1)%len(fields)]
	case key.Matches(msg, k.Toggle):
		m.cycle(1)
	case key.Matches(msg, k.Untoggle):
		m.cycle(-1)
	case key.Matches(msg, k.Confirm):
		return m.submit()
	case key.Matches(msg, k.Cancel):
		return m.cancelStep()
	}
	return nil
}

// fields lists the focusable fields in order: N only with "first N", a
// typed target or delay only when that is the choice, after the choice;
// then the flags the commands take besides (where only with a scope that
// looks at the whole source), after the fields they had before them, so
// a tab learnt on those still reaches the same field.
func (m *Model) fields() []Field {
	f := []Field{FieldScope}
	if m.scopes[m.scopeAt].kind == scopeFirstN {
		f = append(f, FieldCount)
	}
	f = append(f, FieldTarget)
	if m.targets[m.targetAt].typed {
		f = append(f, FieldTargetText)
	}
	f = append(f, FieldDelay)
	if m.delays[m.delayAt].typed {
		f = append(f, FieldDelayText)
	}
	f = append(f, FieldReset)
	if m.wherePlace() {
		f = append(f, FieldWhere)
	}
	return append(f, FieldRate, FieldMaxMoves)
}

// wherePlace reports a scope a typed --where applies to: the first N or
// the whole source, as move and replay take it (marks, one message and
// the w filter's choice name their messages already).
func (m *Model) wherePlace() bool {
	k := m.scopes[m.scopeAt].kind
	return k == scopeFirstN || k == scopeAll
}

// cycle changes the focused choice. Choosing "typed" focuses its text, so
// what is typed next goes there and not to the choice's keys.
func (m *Model) cycle(d int) {
	m.formErr = ""
	wrap := func(i, n int) int { return (i + d + n) % n }
	switch m.focus {
	case FieldScope:
		m.scopeAt = wrap(m.scopeAt, len(m.scopes))
	case FieldTarget:
		m.targetAt = wrap(m.targetAt, len(m.targets))
		if m.targets[m.targetAt].typed {
			m.focus = FieldTargetText
		}
	case FieldDelay:
		m.delayAt = wrap(m.delayAt, len(m.delays))
		if m.delays[m.delayAt].typed {
			m.focus = FieldDelayText
		}
	case FieldReset:
		m.reset = !m.reset
	}
}

// buildRequest turns the form into a MoveRequest or says what is wrong:
// the typed flags read by the parsers the commands use.
func (m *Model) buildRequest() (broker.MoveRequest, error) {
	req := broker.MoveRequest{From: m.spec.Queue, ResetRetries: m.reset}
	rate, err := moveplan.ParseRate(m.rate.String())
	if err != nil {
		return req, err
	}
	if req.MaxMoves, err = moveplan.ParseMaxMoves(m.maxMoves.String()); err != nil {
		return req, err
	}
	req.Rate = rate
	if m.wherePlace() {
		if req.Where, err = moveplan.ParseWhereLine(m.where.String()); err != nil {
			return req, err
		}
	}
	switch m.scopes[m.scopeAt].kind {
	case scopeSelected:
		req.Positions = []int{m.spec.Cursor.Position}
		req.PositionIDs = []string{m.spec.Cursor.Properties.MessageID}
	case scopeMarked:
		req.Positions = slices.Sorted(slices.Values(m.spec.Marked))
		for _, p := range req.Positions {
			req.PositionIDs = append(req.PositionIDs, m.spec.IDs[p])
		}
	case scopeChosen:
		// The CLI's move --where: every message looked at, the chosen
		// ones moved, the others left in place, in order.
		req.Where = m.spec.Where
	case scopeFirstN:
		n, err := strconv.Atoi(strings.TrimSpace(m.count.String()))
		if err != nil || n <= 0 {
			return req, fmt.Errorf("the count must be a positive number, not %q", m.count.String())
		}
		req.Limit = n
	}
	t := m.targets[m.targetAt]
	if t.typed {
		tt, err := parseTarget(m.tTarget.String())
		if err != nil {
			return req, err
		}
		req.To = tt
	} else {
		req.To = t.target
	}
	d := m.delays[m.delayAt]
	if d.typed {
		dd, err := usecase.ParseDelay(m.tDelay.String())
		if err != nil {
			return req, err
		}
		req.Delay = dd
	} else {
		req.Delay = d.d
	}
	return req, nil
}

// parseTarget reads queue:NAME or exchange:NAME[:KEY] as the command line's
// --to does (moveplan.ParseTarget): without KEY each message keeps its own
// routing key; the default exchange is reached with queue:NAME.
func parseTarget(s string) (moveplan.Target, error) {
	t, err := moveplan.ParseTarget(strings.TrimSpace(s))
	if err != nil || t.Kind == moveplan.TargetOrigin {
		return moveplan.Target{}, errors.New("target: type queue:NAME or exchange:NAME[:KEY] (a named exchange; the default exchange is queue:NAME)")
	}
	return t, nil
}

// submit validates the form and asks for a dry run: nothing moves before
// the user has seen the plan and confirmed it.
func (m *Model) submit() tea.Cmd {
	req, err := m.buildRequest()
	if err != nil {
		m.formErr = err.Error()
		return nil
	}
	return m.preflight(req)
}

// preflight asks for the dry run of req.
func (m *Model) preflight(req broker.MoveRequest) tea.Cmd {
	m.req = req
	m.step, m.preview, m.err = StepPreview, nil, nil
	m.id++
	if m.err = usecase.RefuseReadOnly(m.env.Client().ReadOnly(), m.what()); m.err != nil {
		return nil
	}
	dry := usecase.PreviewRequest(req, m.spec.ReplayFile != "")
	ctx, cancel := context.WithTimeout(m.env.Context(), dryRunTimeout)
	cmd := moveCmd(ctx, m.env.Client(), m.id, dry, nil)
	if m.spec.ReplayFile != "" {
		cmd = replayCmd(ctx, m.env.Client(), m.id, m.spec.replayPath(), dry, nil)
	}
	return func() tea.Msg {
		defer cancel()
		return cmd()
	}
}

// ForcePreview runs preview id again with the user's yes to what reading
// the source costs (a delivery counted toward a delivery limit), if the
// dialog still waits on it.
func (m *Model) ForcePreview(id int) tea.Cmd {
	if id != m.id || m.step != StepPreview {
		return nil
	}
	req := m.req
	req.ForcePeek = true
	return m.preflight(req)
}

// start runs the confirmed move, with progress through a channel.
func (m *Model) start() tea.Cmd {
	m.step = StepRunning
	m.id++
	// The move executes the plan the user confirmed.
	m.req = usecase.Bind(m.req, m.preview)
	m.gate = &pace.Hold{}
	m.req.Hold = m.gate
	m.progress = broker.MoveProgress{Total: m.preview.Requested}
	// Under the program's context: its end (SIGTERM) stops the move as esc
	// does, after the batch in flight, and the root quits once it has.
	ctx, cancel := context.WithTimeout(m.env.Context(), moveTimeout)
	m.cancel = cancel
	m.progressCh = make(chan broker.MoveProgress, 1)
	run := moveCmd(ctx, m.env.Client(), m.id, m.req, m.progressCh)
	if m.spec.ReplayFile != "" {
		run = replayCmd(ctx, m.env.Client(), m.id, m.spec.replayPath(), m.req, m.progressCh)
	}
	return tea.Batch(run, waitProgress(m.id, m.progressCh))
}

func (m *Model) View() string {
	st := m.env.Styles
	iw := m.innerWidth()
	var lines []string
	switch m.step {
	case StepForm:
		lines = renderMoveForm(m.formView(), iw, st)
	case StepPreview:
		if m.spec.UnblockPlan != nil {
			lines = append(lines, styled.Wrap(st.Muted, termtext.Sanitize(present.Unblock(*m.spec.UnblockPlan)), iw)...)
		}
		lines = append(lines, renderMovePreview(m.source(), m.req, m.preview, m.err, iw, max(3, m.h-4-len(lines)), st, m.hints())...)
	case StepRunning, StepSummary:
		var bar string
		total := m.progress.Total
		if total > 0 {
			bar = m.bar.ViewAs(float64(m.progress.Done) / float64(total))
		}
		var running []key.Binding
		if m.step == StepRunning {
			running = m.hints()
		}
		paused := m.step == StepRunning && m.gate != nil && m.gate.Paused()
		lines = renderMoveProgress(m.source(), m.req, m.progress, bar, m.cancelling && m.step == StepRunning, paused, iw, st, running)
		if m.step == StepSummary {
			lines = append(lines, "")
			lines = append(lines, renderMoveSummary(m.spec.Queue, m.req, m.report, m.err, iw, st, m.hints())...)
		}
	}
	box := st.Dialog.Width(iw + 4).Render(strings.Join(lines, "\n"))
	return lipgloss.Place(m.w, m.h, lipgloss.Center, lipgloss.Center, box)
}

// formView copies what the form renderer needs.
func (m *Model) formView() moveForm {
	f := moveForm{
		queue:  m.source(),
		scope:  m.scopes[m.scopeAt].label,
		target: m.targets[m.targetAt].label,
		delay:  m.delays[m.delayAt].label,
		reset:  m.reset,
		focus:  m.focus,
		err:    m.formErr,
		hints:  m.hints(),
	}
	if m.scopes[m.scopeAt].kind == scopeFirstN {
		f.count = &m.count
	}
	if m.targets[m.targetAt].typed {
		f.tTarget = &m.tTarget
	}
	if m.delays[m.delayAt].typed {
		f.tDelay = &m.tDelay
	}
	if m.wherePlace() {
		f.where = &m.where
	}
	f.rate, f.maxMoves = &m.rate, &m.maxMoves
	return f
}

// source is what the dialog takes messages from: the queue, or a dump file.
func (m *Model) source() string {
	if m.spec.ReplayFile != "" {
		return replaySource(m.spec.ReplayFile)
	}
	return m.spec.Queue
}

// Name is the dialog's name in its help's title.
func (m *Model) Name() string {
	if m.spec.ReplayFile != "" {
		return "replay dialog"
	}
	return "move dialog"
}

// hints are the keys that act on the dialog's current step, described for
// it: the dialog draws them and the footer shows the same bindings.
func (m *Model) hints() []key.Binding {
	k := m.env.Keys
	switch m.step {
	case StepForm:
		if m.typing() {
			// y, n, space and the letters are typed into the field, ←/→
			// move in it: only enter, esc, tab and ↑/↓ act on the form
			// (Open, Back, Next and Prev are those keys there).
			// The editing keys are on the help screen.
			return []key.Binding{keymap.As(k.Open, "preview"), keymap.As(k.Next, "next"), keymap.As(k.Prev, "previous"),
				keymap.As(k.Back, "cancel"), k.TypingHelp}
		}
		if m.textOf() >= 0 {
			// Letters are typed into the text beside the choice: only
			// enter, esc, tab, ↑/↓ and space/→/← act on the form.
			return []key.Binding{keymap.As(k.Open, "preview"), keymap.As(k.Next, "next"), keymap.As(k.Toggle, "change"),
				keymap.As(k.Back, "cancel"), k.TypingHelp}
		}
		return []key.Binding{keymap.As(k.Confirm, "preview"), keymap.As(k.Next, "next field"), keymap.As(k.Toggle, "change"), k.Cancel}
	case StepPreview:
		switch {
		case m.err != nil:
			return []key.Binding{keymap.As(k.Cancel, "back to the form")}
		case m.preview == nil:
			return []key.Binding{keymap.As(k.Cancel, "back")}
		}
		return []key.Binding{keymap.As(k.Confirm, "move now"), keymap.As(k.Cancel, "back")}
	case StepRunning:
		if m.cancelling || m.progress.Total > 0 && m.progress.Done >= m.progress.Total {
			return nil // esc does nothing more: the move is stopping or done
		}
		return []key.Binding{k.Pause, keymap.As(k.Cancel, "stop (asks first)")}
	}
	return []key.Binding{k.Close}
}

func (m *Model) ShortHelp() []key.Binding { return m.hints() }

// FullHelp is the step's keys, then the form's other keys, then the app's.
func (m *Model) FullHelp() [][]key.Binding {
	k := m.env.Keys
	groups := [][]key.Binding{m.hints()}
	if m.step == StepForm {
		if m.typing() {
			// ? is a letter here: f1 (in the hints) is help.
			return append(groups, k.EditKeys(), []key.Binding{k.ForceQuit})
		}
		groups = append(groups, []key.Binding{keymap.As(k.Prev, "previous field"), keymap.As(k.Untoggle, "previous choice")})
	}
	return append(groups, m.env.AppKeys())
}
