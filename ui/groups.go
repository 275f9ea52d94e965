package ui

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/component/table"
	"github.com/ladder-tui/ladder/ui/style"
)

// The queue browser's grouped view (g): messages grouped by what broke
// them. When the peek covered the queue, g groups the peeked messages; when
// it did not and the queue holds up to usecase.GroupWholeLimit ready
// messages, g groups the whole queue (ladder peek --group-by's scan, by
// every grouping at once: a browse in the background, a read like a peek,
// its progress shown, stopped at the peek's deadline or by esc; asked
// first where others feel it), showing the peek's groups, labelled
// partial, until it is done. A larger queue's groups are the peek's,
// labelled partial; S groups the whole queue, up to the dump bound.

// groupOrder is what g cycles through ("" is the plain list).
var groupOrder = append([]string{""}, usecase.GroupBys...)

// groupScan is a scan of the whole queue for the grouped view.
type groupScan struct {
	id      int // scans started; an older one's answers are dropped
	by      string
	peek    int // the peek it was started over (m.id): a new peek drops it
	where   string
	running bool
	cancel  context.CancelFunc
	result  *usecase.GroupScan
}

// ScanRecorder hears a finished scan of every ready message of a queue
// (usecase.ScanGroups) of vhost in context (Options.Context's name; ""
// when the UI was given none), with its error (a scan that stopped short
// has one). It is called on the scan's own goroutine.
type ScanRecorder interface {
	RecordScan(context, vhost string, scan *usecase.GroupScan, err error)
}

// groupScanDoneMsg reports a scan (id: groupScan.id); its progress is its
// read's (readProgressMsg).
type groupScanDoneMsg struct {
	queue string
	id    int // the scan
	read  int // the browser read it ran as (see startRead)
	scan  *usecase.GroupScan
	err   error
}

// groupScanAskMsg: the user agreed to the scan's cost; force: that cost
// is a delivery counted toward a delivery limit; limit is the scan's
// (usecase.GroupScanOptions.Limit).
type groupScanAskMsg struct {
	queue, by string
	force     bool
	limit     int
}

// cycleGroup moves to the next grouping (g); a queue the peek did not
// cover, small enough, is then grouped whole (autoScan).
func (m *browserModel) cycleGroup() tea.Cmd {
	i := slices.Index(groupOrder, m.groupBy)
	m.groupBy = groupOrder[(i+1)%len(groupOrder)]
	m.groupAt = 0
	m.regroup()
	return m.autoScan()
}

// autoScan groups the whole queue by default (usecase.GroupWholeLimit)
// when the peek left ready messages out and no scan has them yet.
func (m *browserModel) autoScan() tea.Cmd {
	if m.groupBy == "" || !m.partial() || m.gscan.running || m.scanned() != nil || m.res.Ready > usecase.GroupWholeLimit {
		return nil
	}
	return m.askScan(0)
}

// scanned is the finished scan that groups the view now: of this grouping
// (a scan groups by every one), this --where, over the current peek.
func (m *browserModel) scanned() *usecase.GroupScan {
	s := &m.gscan
	if s.result == nil || s.peek != m.id || s.where != strings.Join(m.where.Exprs(), " ") {
		return nil
	}
	if _, ok := s.result.GroupsBy(m.groupBy); !ok {
		return nil
	}
	return s.result
}

// regroup groups the shown messages (after a peek or a filter), or shows
// the whole queue's groups when a scan of this grouping has them.
func (m *browserModel) regroup() {
	if m.groupBy == "" {
		m.groups = nil
		return
	}
	if s := m.scanned(); s != nil {
		m.groups, _ = s.GroupsBy(m.groupBy)
	} else {
		shown := make([]broker.Message, 0, len(m.view))
		for _, i := range m.view {
			shown = append(shown, *m.rows[i].message)
		}
		m.groups = usecase.GroupMessages(shown, m.groupBy)
	}
	m.groupAt = min(m.groupAt, max(0, len(m.groups)-1))
}

// leaveGroups shows the messages again, stopping a scan under way.
func (m *browserModel) leaveGroups() {
	m.stopScan()
	m.groupBy, m.groups = "", nil
}

// stopScan cancels a running scan (its answer will be dropped).
func (m *browserModel) stopScan() {
	if m.gscan.running {
		m.gscan.cancel()
		m.gscan.running = false
		m.gscan.id++
	}
}

// partial reports whether the peek left ready messages out.
func (m *browserModel) partial() bool {
	return m.res != nil && int64(len(m.res.Messages)) < m.res.Ready
}

// askScan asks before a scan whose browse others feel (consumers lose
// sight of the messages meanwhile, a quorum delivery limit counts it), as
// opening the queue did; otherwise it starts it. limit is the scan's: 0
// the default bound, -1 the dump bound (S).
func (m *browserModel) askScan(limit int) tea.Cmd {
	if s := m.scanned(); m.gscan.running || s != nil && (s.Coverage.Whole || limit >= 0) {
		return nil // a partial scan's groups: S scans further
	}
	upTo := usecase.GroupWholeLimit
	if limit < 0 {
		upTo = usecase.DefaultDumpLimit
	}
	queue, by := m.queue, m.groupBy
	if m.snap != nil {
		if i := slices.IndexFunc(m.snap.Topology.Queues, func(q topology.Queue) bool { return q.Name == queue }); i >= 0 {
			q := m.snap.Topology.Queues[i]
			if cost := broker.ReadCostOf(m.snap, q); cost.Felt() {
				name := termtext.Truncate(termtext.Sanitize(queue), max(16, m.w/3))
				title := "Group every ready message of " + name + " by " + by + " (up to " + strconv.Itoa(upTo) + ")? A browse: " + present.PeekCost(cost)
				if cost.NeedsConsent() {
					// The yes is the scan's force; the root refuses it
					// outright where ladder saw messages it would
					// dead-letter, or under read-only mode.
					return navCmd(costlyReadMsg{queue: queue, verb: "group", subject: "its scan", title: title, yes: "group",
						then: groupScanAskMsg{queue: queue, by: by, force: true, limit: limit}})
				}
				return navCmd(openPromptMsg{
					title: title, confirm: true, yes: "group",
					done: func(string) tea.Msg { return groupScanAskMsg{queue: queue, by: by, limit: limit} },
				})
			}
		}
	}
	return m.startScan(false, limit)
}

// startScan groups the whole queue in the background, by every grouping:
// ladder peek --group-by's scan (usecase.ScanGroups), a read with a peek's
// deadline and its progress. force: the user said yes to the delivery it
// counts toward a delivery limit; limit: see askScan.
func (m *browserModel) startScan(force bool, limit int) tea.Cmd {
	m.stopScan()
	// A scan is a browse like a peek: one read at a time.
	r := m.startRead(readGroups, moveTimeout)
	if r == nil {
		return m.alreadyReading()
	}
	s := &m.gscan
	s.id++
	ctx, cancel, read := r.ctx, r.cancel, r.id
	*s = groupScan{id: s.id, by: m.groupBy, peek: m.id, where: strings.Join(m.where.Exprs(), " "), running: true, cancel: cancel}
	c, queue, id, opts := m.source(), m.queue, s.id, usecase.GroupScanOptions{Queue: m.queue, By: m.groupBy, Where: m.where, Force: force, Limit: limit, All: true}
	// It holds what it read from the queue's consumers, as a peek does.
	opts.Progress, opts.Deadline = r.report, broker.DefaultPeekDeadline
	ch := r.ch
	record := m.recorder(c)
	run := func() tea.Msg {
		defer cancel()
		defer close(ch) // ends the progress wait
		scan, err := usecase.ScanGroups(ctx, c, opts)
		// A scan esc stopped (or the session's end) is not the queue's.
		if record != nil && scan != nil && ctx.Err() == nil {
			record(scan, err)
		}
		return groupScanDoneMsg{queue: queue, id: id, read: read, scan: scan, err: err}
	}
	return tea.Batch(run, r.wait(), statusCmd("", false))
}

// recorder tells Options.Scans of a scan on c that finishes, naming the
// context and vhost it began in (the user may switch meanwhile); nil
// without Scans, or under a --where (its groups are a choice's, not the
// queue's).
func (m *browserModel) recorder(c usecase.DumpSource) func(*usecase.GroupScan, error) {
	if m.scans == nil || !m.where.Empty() {
		return nil
	}
	rec, in, vhost := m.scans, m.context(), c.Vhost()
	return func(scan *usecase.GroupScan, err error) { rec.RecordScan(in, vhost, scan, err) }
}

// updateGroups takes the grouped view's messages; ok is false for others.
func (m *browserModel) updateGroups(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case groupScanAskMsg:
		if msg.queue == m.queue && msg.by == m.groupBy {
			return m.startScan(msg.force, msg.limit), true
		}
		return nil, true
	case groupScanDoneMsg:
		// The read ends whether or not its answer is still wanted.
		ended := m.endRead(msg.read)
		if msg.queue != m.queue || msg.id != m.gscan.id {
			return ended, true
		}
		m.gscan.running = false
		if msg.scan == nil {
			return tea.Batch(ended, statusCmd("group "+termtext.Sanitize(m.queue)+": "+termtext.Sanitize(broker.Describe(msg.err)), true)), true
		}
		m.gscan.result = msg.scan
		m.groupAt = 0
		m.regroup()
		text := present.Grouped(m.coverageBy(msg.scan))
		if len(msg.scan.SideEffects) > 0 {
			text += " · " + strings.Join(msg.scan.SideEffects, "; ")
		}
		if msg.err != nil {
			if msg.scan.Coverage.Deadline == 0 { // a deadline is said already
				text += " · " + broker.Describe(msg.err)
			}
			return tea.Batch(ended, statusCmd(termtext.Sanitize(text), true)), true
		}
		return tea.Batch(ended, statusCmd(termtext.Sanitize(text), false)), true
	}
	return nil, false
}

// markGroup marks exactly the messages of the group under the cursor and
// shows the list again: m then moves them, checking each position still
// holds the message grouped there (a scan's positions go past the peek).
func (m *browserModel) markGroup() tea.Cmd {
	if m.groupAt >= len(m.groups) {
		return nil
	}
	g := m.groups[m.groupAt]
	m.marks, m.markedIDs = map[int]bool{}, map[int]string{}
	for i, p := range g.Positions {
		m.marks[p] = true
		if i < len(g.IDs) {
			m.markedIDs[p] = g.IDs[i]
		}
	}
	m.leaveGroups()
	return statusCmd(present.Plural(g.Count, "message", "messages")+" of "+termtext.Sanitize(g.Key)+" marked: m moves them", false)
}

// coverageBy is scan's coverage, of the grouping shown (a scan groups by
// every one).
func (m *browserModel) coverageBy(scan *usecase.GroupScan) usecase.GroupCoverage {
	c := scan.Coverage
	if m.groupBy != "" {
		c.By = m.groupBy
		if gs, ok := scan.GroupsBy(m.groupBy); ok {
			n := 0
			for _, g := range gs {
				n += g.Count
			}
			c.Grouped = n
		}
	}
	return c
}

// groupCoverage says how many of the queue's messages the groups hold,
// and, short of the whole queue, why (present.Grouped, PeekGrouped).
func (m *browserModel) groupCoverage() string {
	if s := m.scanned(); s != nil {
		return present.Grouped(m.coverageBy(s)) + " · scanned " + present.Clock(s.ScannedAt)
	}
	if r := m.reading; m.gscan.running && r != nil && r.kind == readGroups {
		// The browse's own figures once it has begun: what it will read
		// at most (the ready depth as it began); the peek's until then.
		read, of := r.progress.Read, ""
		switch {
		case r.progress.Want >= 0:
			of = " of " + strconv.Itoa(r.progress.Want)
		case m.res != nil:
			of = " of " + strconv.FormatInt(m.res.Ready, 10)
		}
		// Until it is done the groups shown are the peek's.
		return "grouping the whole queue… " + strconv.Itoa(max(0, read)) + of + " read · " + m.c.keys.Back.Help().Key + " stops · below, partial: the peek's first " + strconv.Itoa(len(m.rows))
	}
	if m.res == nil {
		return ""
	}
	key := ""
	if m.partial() {
		key = m.c.keys.GroupAll.Help().Key
	}
	return present.PeekGrouped(len(m.view), len(m.rows), m.res.Ready, m.groupBy, key)
}

// groupLines is the grouped view: coverage, which time FIRST and LAST
// are, the groups, and the selected group's sample error in full
// (wrapped) under them.
func (m *browserModel) groupLines(height int) []string {
	st := m.c.styles
	lines := []string{st.Muted.Render(termtext.Truncate(termtext.Sanitize(m.groupCoverage()), m.w))}
	if t := present.GroupTimes(m.groups, m.queue); t != "" {
		lines = append(lines, st.Muted.Render(termtext.Truncate(termtext.Sanitize(t), m.w)))
	}
	var sample []string
	if m.groupAt < len(m.groups) {
		sample = renderGroupSample(m.groups[m.groupAt], m.w, 3, st)
	}
	lines = append(lines, renderGroups(m.groups, m.groupBy, m.groupAt, m.w, height-len(lines)-len(sample), m.at, st)...)
	return append(lines, sample...)
}

// renderGroups draws the groups table: count, key, first and last seen.
// Keys keep both ends at any width (present.FitCause).
func renderGroups(gs []usecase.Group, by string, cursor, width, height int, at time.Time, st *style.Styles) []string {
	cols := []table.Column{{Title: "COUNT", Width: 6, Right: true}, {Title: strings.ToUpper(by), Width: 0}, {Title: "FIRST", Width: 6, Right: true}, {Title: "LAST", Width: 6, Right: true}}
	mixed := present.GroupTimesMixed(gs)
	if mixed {
		// Groups timed differently: each says which (present.GroupTimes).
		cols = append(cols, table.Column{Title: "TIME", Width: 9})
	}
	widths := []int{cols[0].Width, cols[2].Width, cols[3].Width}
	if mixed {
		widths = append(widths, cols[4].Width)
	}
	cols[1].Width = table.Remaining(width, 2, 10, widths...)
	lines := []string{st.Header.Render("  " + table.Header(cols))}
	rows := max(1, height-1) // under the header
	shown := len(gs)
	if shown > rows {
		shown = max(1, rows-1) // and a line says how many more
	}
	start := 0
	if cursor >= shown {
		start = cursor - shown + 1 // the cursor's group stays on screen
	}
	for i := start; i < start+shown && i < len(gs); i++ {
		g := gs[i]
		key := present.FitGroupKey(termtext.Sanitize(g.Key), by, cols[1].Width)
		cells := []string{strconv.Itoa(g.Count), key, present.Age(g.FirstSeen, at), present.Age(g.LastSeen, at)}
		if mixed {
			cells = append(cells, present.GroupTimeShort(g.Times))
		}
		line := "  " + table.Join(table.Cells(cols, cells...))
		if i == cursor {
			line = st.Selected.Render("▸" + line[1:])
		}
		lines = append(lines, line)
	}
	if more := len(gs) - shown; more > 0 {
		lines = append(lines, st.Muted.Render("  … "+strconv.Itoa(more)+" more"))
	}
	return lines
}

// renderGroupSample is one message of the group as it is: its id and full
// error text, wrapped to at most maxLines lines (the last cut). Nothing
// when the key already says it all.
func renderGroupSample(g usecase.Group, width, maxLines int, st *style.Styles) []string {
	if g.Sample == "" || g.Sample == g.Key || width < 10 {
		return nil
	}
	text := "e.g. "
	if len(g.SampleIDs) > 0 {
		text += termtext.Sanitize(g.SampleIDs[0]) + ": "
	}
	text += termtext.Sanitize(g.Sample)
	lines := termtext.Wrap(text, width-2)
	if len(lines) > maxLines {
		lines = append(lines[:maxLines-1], termtext.Truncate(lines[maxLines-1], width-3)+termtext.Ellipsis)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = st.Muted.Render("  " + l)
	}
	return out
}

// groupKey handles keys in the grouped view: up and down over groups,
// enter marks one's messages, g groups by the next field, S the whole
// queue, m moves a group.
func (m *browserModel) groupKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Up):
		m.groupAt = max(0, m.groupAt-1)
	case key.Matches(msg, k.Down):
		m.groupAt = min(max(0, len(m.groups)-1), m.groupAt+1)
	case key.Matches(msg, k.Group):
		return m.cycleGroup()
	case key.Matches(msg, k.GroupAll) && m.partial():
		return m.askScan(-1)
	case key.Matches(msg, k.Open):
		return m.markGroup()
	case key.Matches(msg, k.Move):
		if len(m.groups) == 0 {
			return nil
		}
		cmd := m.markGroup()
		return tea.Batch(cmd, navCmd(openMoveMsg{spec: m.moveSpec(nil)}))
	case key.Matches(msg, k.Refresh):
		return m.reload()
	}
	return nil
}

// groupHelp is the grouped view's keys.
func (m *browserModel) groupHelp() []key.Binding {
	k := m.c.keys
	out := []key.Binding{k.Up, k.Down, keymap.As(k.Open, "mark group"), keymap.As(k.Move, "move group"),
		keymap.As(k.Group, "next grouping")}
	if s := m.scanned(); m.partial() && !m.gscan.running && (s == nil || !s.Coverage.Whole) {
		out = append(out, k.GroupAll)
	}
	return append(out, keymap.As(k.Back, "messages"), k.Refresh)
}
