package ui

import (
	"context"
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// The queue browser's actions beyond moving: dump to a file (d), replay a
// dump (R), choose by --where expressions (w), group by what broke (g).
// Each is the CLI's, through the same broker functions.

// unblockReadyMsg is ladder unblock's plan for a queue, asked from the
// browser or (home) from a HoL finding on the ladders screen: data
// messages reach every screen, and only the one that asked opens it. read
// is the browser read it ran as (see startRead): its end ends that read.
type unblockReadyMsg struct {
	queue string
	home  bool
	read  int
	req   broker.MoveRequest
	plan  moveplan.UnblockPlan
	// peek is the look's result, whose delivery counts the root keeps (the
	// next read of the queue is judged by them).
	peek *broker.PeekResult
	err  error
}

// unblockAskMsg is home's u on a HoL finding: the browser, which reads one
// thing at a time, runs the read (see prepareUnblockFor). force: the user
// said yes to reads that count a delivery toward a delivery limit.
type unblockAskMsg struct {
	queue string
	force bool
}

// prepareUnblock plans ladder unblock for the browser's queue (the browser
// already paid for one peek to show it).
func (m *browserModel) prepareUnblock() tea.Cmd { return m.prepareUnblockFor(m.queue, false, false) }

// prepareUnblockForced is prepareUnblock after the user's yes to its cost.
func (m *browserModel) prepareUnblockForced() tea.Cmd {
	return m.prepareUnblockFor(m.queue, false, true)
}

// prepareUnblockFor plans ladder unblock for queue, as the CLI does (a
// peek, with a peek's side effects), asked from the browser or from home:
// a read like the browser's others, one at a time, under the read's context
// (a read that replaces it cancels it) and showing its progress. force: the
// user said yes to reads that count a delivery toward a delivery limit (the
// look, and the preview after it).
func (m *browserModel) prepareUnblockFor(queue string, home, force bool) tea.Cmd {
	r := m.startRead(readUnblock, peekTimeout)
	if r == nil {
		return m.alreadyReading()
	}
	r.queue = queue // home's may be another queue than the browser's
	var c usecase.UnblockSource = m.source()
	ctx, id, ch := r.ctx, r.id, r.ch
	opt := usecase.UnblockOptions{Look: usecase.DefaultUnblockLook, Progress: r.report, ForcePeek: force}
	// In sequence: batched, a quick answer (an error) could arrive first
	// and be overwritten by "reading the queue…".
	return tea.Sequence(statusCmd("unblock "+termtext.Sanitize(queue)+": reading the queue…", false), tea.Batch(func() tea.Msg {
		defer close(ch) // ends the progress wait
		req, plan, res, err := usecase.PrepareUnblockWith(ctx, c, queue, opt)
		return unblockReadyMsg{queue: queue, home: home, read: id, req: req, plan: plan, peek: res, err: err}
	}, r.wait()))
}

// unblockReady opens the move dialog on the plan, straight at its dry run.
func (m *browserModel) unblockReady(msg unblockReadyMsg) tea.Cmd {
	if msg.home || msg.queue != m.queue || errors.Is(msg.err, context.Canceled) {
		return nil // not asked here, or replaced by another read
	}
	return openUnblock(msg, m.moveSpec(nil))
}

// openUnblock opens the move dialog of spec on an unblock's plan, or says
// why there is nothing to move.
func openUnblock(msg unblockReadyMsg, spec movedialog.Spec) tea.Cmd {
	switch {
	case msg.err != nil:
		return statusCmd(termtext.Sanitize(msg.err.Error()), true)
	case len(msg.plan.Picks) == 0:
		text := present.Unblock(msg.plan)
		if len(msg.plan.Notes) > 0 {
			text += "; " + msg.plan.Notes[0]
		}
		return statusCmd(termtext.Sanitize(text), false)
	}
	spec.Unblock, spec.UnblockPlan = &msg.req, &msg.plan
	return tea.Batch(statusCmd("", false), navCmd(openMoveMsg{spec: spec}))
}

// unblockRow is the selected row when u acts on it: a queue with a
// head-of-line finding (hol-risk, hol-blocked), else nil.
func (m *homeModel) unblockRow() *homeRow {
	r := m.selected()
	if r == nil || r.q == nil || !m.c.keys.Unblock.Enabled() {
		return nil
	}
	for _, f := range r.finds {
		if f.Code == topology.CodeHoLRisk || f.Code == topology.CodeHoLBlocked {
			return r
		}
	}
	return nil
}

// homeUnblockReady opens the move dialog on an unblock asked from the
// ladders screen, as the browser's u does.
func (m *homeModel) homeUnblockReady(msg unblockReadyMsg) tea.Cmd {
	if !msg.home {
		return nil
	}
	spec := movedialog.Spec{Queue: msg.queue}
	if r := m.rowOf(msg.queue); r != nil && r.q != nil {
		spec = m.moveSpec(r)
	}
	return openUnblock(msg, spec)
}

// rowOf is the selectable row of queue, or nil.
func (m *homeModel) rowOf(queue string) *homeRow {
	for i := range m.rows {
		if m.rows[i].selectable() && m.rows[i].name == queue {
			return &m.rows[i]
		}
	}
	return nil
}

// dumpAskMsg / whereAskMsg carry a prompt's answer back to the browser;
// force: the user said yes to the delivery the dump's read counts toward a
// delivery limit. named: the Files names the file (a served session), file
// is empty.
type dumpAskMsg struct {
	queue, file string
	force       bool
	named       bool
}
type whereAskMsg struct{ exprs string }

// dumpDoneMsg is a dump's result (read id).
type dumpDoneMsg struct {
	id   int
	file string
	rep  *usecase.DumpReport
	err  error
}

// askDump offers a dump of the queue to a file: the Files (Options.Files)
// say whether the person names it (locally: a name offered, theirs to
// change) or the Files do (a served session: a yes, no name asked), or why
// no dump may be written (a read-only key on a server), said at once.
// Where its read counts a delivery toward a delivery limit it asks first,
// the question a peek asks (refused outright when ladder saw messages it
// would dead-letter).
func (m *browserModel) askDump() tea.Cmd {
	queue := m.queue
	name, ask, err := m.c.files.Offer(queue, m.c.now())
	if err != nil {
		return statusCmd("dump "+termtext.Sanitize(queue)+": "+termtext.Sanitize(err.Error()), true)
	}
	file := func(force bool) tea.Msg {
		if !ask {
			return dumpAskMsg{queue: queue, force: force, named: true}
		}
		return openPromptMsg{
			title: "Dump " + queue + " to a file", value: name,
			hint: "browses the queue as a peek does (nothing removed); an existing file is refused",
			done: func(file string) tea.Msg { return dumpAskMsg{queue: queue, file: file, force: force} },
		}
	}
	if q, _, ok := m.snapQueue(); ok {
		if cost := broker.ReadCostOf(m.snap, q); cost.NeedsConsent() {
			short := termtext.Truncate(termtext.Sanitize(queue), max(16, m.w/3))
			return navCmd(costlyReadMsg{queue: queue, verb: "dump", subject: "its read",
				title: "The dump reads the queue: " + present.PeekQuestion(short, usecase.DefaultDumpLimit, m.readyNow(q), cost),
				yes:   "dump", then: file(true)})
		}
	}
	if !ask {
		// A question, not a field: no name is typed here.
		return navCmd(openPromptMsg{
			title: "Dump " + termtext.Sanitize(queue) + " to a file in " + termtext.Sanitize(m.c.files.Where()) +
				"? ladder names it (your user, the queue, the time); the dump browses the queue as a peek does (nothing removed)",
			confirm: true, yes: "dump",
			done: func(string) tea.Msg { return file(false) },
		})
	}
	return navCmd(file(false))
}

// snapQueue is the browser's queue as its last snapshot has it, with the
// broker's version.
func (m *browserModel) snapQueue() (topology.Queue, string, bool) {
	if m.snap == nil {
		return topology.Queue{}, "", false
	}
	q, ok := m.snap.Queue(m.queue)
	return q, m.snap.BrokerVersion, ok
}

// readyNow is the queue's ready count: the last peek's (exact), else the
// snapshot's.
func (m *browserModel) readyNow(q topology.Queue) int64 {
	if m.res != nil {
		return m.res.Ready
	}
	return q.Ready
}

// dump writes the queue to file for read r (the Files name it where
// file is empty): a browse, as `ladder dump` does, its progress shown.
// force: the user said yes to its cost.
func (m *browserModel) dump(r *reading, file string, force bool) tea.Cmd {
	c, queue, fs := m.source(), m.queue, m.c.files
	ctx, id, ch, progress := r.ctx, r.id, r.ch, r.report
	return func() tea.Msg {
		defer close(ch) // ends the progress wait
		f, err := fs.Create(queue, file)
		if err != nil {
			return dumpDoneMsg{id: id, file: file, err: err}
		}
		rep, err := usecase.Dump(ctx, c, usecase.DumpOptions{Queue: queue, Progress: progress, Force: force}, f)
		if err != nil && (rep == nil || rep.Written == 0) {
			f.Remove()
		} else if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("dump to %s: %w", f.Name(), cerr)
		}
		return dumpDoneMsg{id: id, file: f.Name(), rep: rep, err: err}
	}
}

// dumpFailed says why a dump stopped: where it wrote messages first (a
// quota reached, a disk full), the file keeps them and, a dump being a
// browse, the queue keeps every one.
func dumpFailed(msg dumpDoneMsg) string {
	text := termtext.Sanitize(msg.err.Error())
	if msg.rep != nil && msg.rep.Written > 0 {
		text += "; " + termtext.Sanitize(msg.file) + " keeps the first " + present.Plural(msg.rep.Written, "message", "messages") +
			", and nothing was removed from the queue"
	}
	return text
}

// pickReplay lists the dump files the Files offer (locally the working
// directory's); the one picked is replayed from the path they give.
func (m *browserModel) pickReplay() tea.Cmd {
	fs := m.c.files
	names, err := fs.List()
	if err != nil {
		return statusCmd(termtext.Sanitize(err.Error()), true)
	}
	if len(names) == 0 {
		return statusCmd("no *.jsonl dump file in "+termtext.Sanitize(fs.Where()), true)
	}
	spec := m.moveSpec(nil)
	return navCmd(openPickerMsg{
		title: "Replay a dump file (into " + m.queue + " or where each message came from)", items: names,
		done: func(file string) tea.Msg {
			path, err := fs.Path(file)
			if err != nil {
				return statusMsg{text: termtext.Sanitize(err.Error()), err: true}
			}
			spec.ReplayFile, spec.ReplayPath = file, path
			spec.Cursor, spec.Marked = nil, nil
			return openMoveMsg{spec: spec}
		},
	})
}

// askWhere edits the --where expressions that choose the shown messages.
func (m *browserModel) askWhere() tea.Cmd {
	return navCmd(openPromptMsg{
		title: "Choose messages (--where)", value: present.WhereText(m.where),
		hint: `all must hold, separated by spaces (quote one with a space: error~"timed out"): reason=expired queue=Q origin=X:KEY error~RE header:N=V body~RE age>1h retries>=3`,
		done: func(s string) tea.Msg { return whereAskMsg{exprs: s} },
	})
}

// setWhere applies --where expressions to the list (and to what m moves).
func (m *browserModel) setWhere(exprs string) tea.Cmd {
	w, err := moveplan.ParseWhereLine(exprs)
	if err != nil {
		return statusCmd(termtext.Sanitize(err.Error()), true)
	}
	m.where = w
	m.refilter()
	if w.Empty() {
		return statusCmd("every message shown again", false)
	}
	return statusCmd(present.Plural(len(m.view), "message", "messages")+" chosen by --where "+termtext.Sanitize(present.WhereText(w)), false)
}

// whereScope offers the move dialog what the w expressions choose: the
// move takes them across the whole queue, as move --where does.
func (m *browserModel) whereScope(spec *movedialog.Spec) {
	if m.where.Empty() || m.res == nil {
		return
	}
	spec.Where = m.where
	spec.Chosen, spec.Peeked = len(usecase.Choose(m.res.Messages, m.where, m.at)), len(m.res.Messages)
	spec.AllPeeked = int64(len(m.res.Messages)) >= m.res.Ready && m.res.Incomplete == ""
}

// chosen reports whether the browser's --where chooses the message.
func (m *browserModel) chosen(message *broker.Message) bool {
	return m.where.Empty() || len(usecase.Choose([]broker.Message{*message}, m.where, m.at)) == 1
}
