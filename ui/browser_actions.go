package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui/component/table"
	"github.com/ladder-tui/ladder/ui/style"
)

// The queue browser's actions beyond moving: dump to a file (d), replay a
// dump (R), choose by --where expressions (w), group by what broke (g).
// Each is the CLI's, through the same broker functions.

// unblockReadyMsg is ladder unblock's plan for a queue, asked from the
// browser or (home) from a HoL finding on the ladders screen: data
// messages reach every screen, and only the one that asked opens it.
type unblockReadyMsg struct {
	queue string
	home  bool
	req   broker.MoveRequest
	plan  retry.UnblockPlan
	err   error
}

// prepareUnblockCmd plans ladder unblock for queue, as the CLI does (a
// peek, with a peek's side effects).
func prepareUnblockCmd(c broker.Client, queue string, home bool) tea.Cmd {
	// In sequence: batched, a quick answer (an error) could arrive first
	// and be overwritten by "reading the queue…".
	return tea.Sequence(statusCmd("unblock "+termtext.Sanitize(queue)+": reading the queue…", false), func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), peekTimeout)
		defer cancel()
		req, plan, _, err := broker.PrepareUnblock(ctx, c, queue, broker.DefaultUnblockLook)
		return unblockReadyMsg{queue: queue, home: home, req: req, plan: plan, err: err}
	})
}

// prepareUnblock plans ladder unblock for the browser's queue (the browser
// already paid for one peek to show it): a read, one at a time.
func (m *browserModel) prepareUnblock() tea.Cmd {
	if m.startRead(readUnblock, peekTimeout) == nil {
		return m.alreadyReading()
	}
	return prepareUnblockCmd(m.c.client, m.queue, false)
}

// unblockReady opens the move dialog on the plan, straight at its dry run.
func (m *browserModel) unblockReady(msg unblockReadyMsg) tea.Cmd {
	if msg.home || msg.queue != m.queue {
		return nil
	}
	return openUnblock(msg, m.moveSpec(nil))
}

// openUnblock opens the move dialog of spec on an unblock's plan, or says
// why there is nothing to move.
func openUnblock(msg unblockReadyMsg, spec moveSpec) tea.Cmd {
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
	spec.unblock, spec.unblockPlan = &msg.req, &msg.plan
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
		if f.Code == retry.CodeHoLRisk || f.Code == retry.CodeHoLBlocked {
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
	spec := moveSpec{queue: msg.queue}
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

// groupOrder is what g cycles through ("" is the plain list).
var groupOrder = []string{"", broker.GroupError, broker.GroupReason, broker.GroupQueue, broker.GroupOrigin}

// dumpAskMsg / whereAskMsg carry a prompt's answer back to the browser.
type dumpAskMsg struct{ queue, file string }
type whereAskMsg struct{ exprs string }

// dumpDoneMsg is a dump's result (read id).
type dumpDoneMsg struct {
	id   int
	file string
	rep  *broker.DumpReport
	err  error
}

// askDump offers a file name for a dump of the queue.
func (m *browserModel) askDump() tea.Cmd {
	queue := m.queue
	name := strings.NewReplacer("/", "_", " ", "_").Replace(queue) + "-" + m.c.now().UTC().Format("20060102-150405") + ".jsonl"
	return navCmd(openPromptMsg{
		title: "Dump " + queue + " to a file", value: name,
		hint: "browses the queue as a peek does (nothing removed); an existing file is refused",
		done: func(file string) tea.Msg { return dumpAskMsg{queue: queue, file: file} },
	})
}

// dump writes the queue to file for read r: a browse, as `ladder dump`
// does, its progress shown.
func (m *browserModel) dump(r *reading, file string) tea.Cmd {
	c, queue := m.c.client, m.queue
	ctx, id, ch, progress := r.ctx, r.id, r.ch, r.report
	return func() tea.Msg {
		defer close(ch) // ends the progress wait
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return dumpDoneMsg{id: id, file: file, err: fmt.Errorf("dump to %s: %w", file, err)}
		}
		rep, err := broker.Dump(ctx, c, broker.DumpOptions{Queue: queue, Progress: progress}, f)
		f.Close()
		if err != nil && (rep == nil || rep.Written == 0) {
			os.Remove(file)
		}
		return dumpDoneMsg{id: id, file: file, rep: rep, err: err}
	}
}

// pickReplay lists the dump files of the working directory.
func (m *browserModel) pickReplay() tea.Cmd {
	files, _ := filepath.Glob("*.jsonl")
	slices.Sort(files)
	if len(files) == 0 {
		wd, _ := os.Getwd()
		return statusCmd("no *.jsonl dump file in "+termtext.Sanitize(wd), true)
	}
	spec := m.moveSpec(nil)
	return navCmd(openPickerMsg{
		title: "Replay a dump file (into " + m.queue + " or where each message came from)", items: files,
		done: func(file string) tea.Msg {
			spec.replayFile = file
			spec.cursor, spec.marked = nil, nil
			return openMoveMsg{spec: spec}
		},
	})
}

// askWhere edits the --where expressions that choose the shown messages.
func (m *browserModel) askWhere() tea.Cmd {
	return navCmd(openPromptMsg{
		title: "Choose messages (--where)", value: strings.Join(m.where.Exprs(), " "),
		hint: "space-separated, all must hold: reason=expired queue=Q origin=X:KEY error~RE header:N=V body~RE age>1h retries>=3",
		done: func(s string) tea.Msg { return whereAskMsg{exprs: s} },
	})
}

// setWhere applies --where expressions to the list (and to what m moves).
func (m *browserModel) setWhere(exprs string) tea.Cmd {
	w, err := retry.ParseWhere(strings.Fields(exprs))
	if err != nil {
		return statusCmd(termtext.Sanitize(err.Error()), true)
	}
	m.where = w
	m.refilter()
	if w.Empty() {
		return statusCmd("every message shown again", false)
	}
	return statusCmd(present.Plural(len(m.view), "message", "messages")+" chosen by --where "+termtext.Sanitize(exprs), false)
}

// chosen reports whether the browser's --where chooses the message.
func (m *browserModel) chosen(message *broker.Message) bool {
	return m.where.Empty() || len(broker.Choose([]broker.Message{*message}, m.where, m.at)) == 1
}

// cycleGroup moves to the next grouping (g).
func (m *browserModel) cycleGroup() {
	i := slices.Index(groupOrder, m.groupBy)
	m.groupBy = groupOrder[(i+1)%len(groupOrder)]
	m.groupAt = 0
	m.regroup()
}

// regroup groups the shown messages (after a peek or a filter).
func (m *browserModel) regroup() {
	if m.groupBy == "" {
		m.groups = nil
		return
	}
	shown := make([]broker.Message, 0, len(m.view))
	for _, i := range m.view {
		shown = append(shown, *m.rows[i].message)
	}
	m.groups = broker.GroupMessages(shown, m.groupBy)
	m.groupAt = min(m.groupAt, max(0, len(m.groups)-1))
}

// markGroup marks exactly the messages of the group under the cursor and
// shows the list again: m then moves them.
func (m *browserModel) markGroup() tea.Cmd {
	if m.groupAt >= len(m.groups) {
		return nil
	}
	g := m.groups[m.groupAt]
	m.marks = map[int]bool{}
	for _, p := range g.Positions {
		m.marks[p] = true
	}
	m.groupBy, m.groups = "", nil
	return statusCmd(present.Plural(g.Count, "message", "messages")+" of "+termtext.Sanitize(g.Key)+" marked: m moves them", false)
}

// renderGroups draws the groups table: count, key, first and last seen.
func renderGroups(gs []broker.Group, by string, cursor, width, height int, at time.Time, st *style.Styles) []string {
	cols := []table.Column{{Title: "COUNT", Width: 6, Right: true}, {Title: strings.ToUpper(by), Width: 0}, {Title: "FIRST", Width: 6, Right: true}, {Title: "LAST", Width: 6, Right: true}}
	cols[1].Width = table.Remaining(width, 2, 10, cols[0].Width, cols[2].Width, cols[3].Width)
	lines := []string{st.Header.Render("  " + table.Header(cols))}
	for i, g := range gs {
		if i >= height-1 {
			lines = append(lines, st.Muted.Render("  … "+strconv.Itoa(len(gs)-i)+" more"))
			break
		}
		line := "  " + table.Join(table.Cells(cols, strconv.Itoa(g.Count), termtext.Sanitize(g.Key), present.Age(g.FirstSeen, at), present.Age(g.LastSeen, at)))
		if i == cursor {
			line = st.Selected.Render("▸" + line[1:])
		}
		lines = append(lines, line)
	}
	return lines
}
