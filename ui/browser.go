package ui

import (
	"cmp"
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
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/ui/component/list"
	"github.com/ladder-tui/ladder/ui/movedialog"
	"github.com/ladder-tui/ladder/ui/styled"
)

// browserRow is one peeked message with its precomputed text.
type browserRow struct {
	message *broker.Message
	text    string // the row without its mark column
	search  string
	warn    bool
}

// browserModel is the queue browser: peeked messages in a table that draws
// only the rows on screen, so 10,000 messages scroll as fast as 10.
type browserModel struct {
	c    *common
	w, h int
	// source is the broker the browser reads its queue through: a peek
	// (broker.Peeker), unblock's look (usecase.UnblockSource), a dump and a
	// group scan (usecase.DumpSource, which holds the others). The root
	// hands it the client of the moment (a vhost switch changes it).
	source func() usecase.DumpSource
	// scans, when set, hears each whole-queue scan that finished
	// (Options.Scans); context is the context shown, which it names.
	scans   ScanRecorder
	context func() string

	queue  string
	ladder *retry.Ladder
	snap   *broker.Snapshot
	id     int // the peek whose answer is shown; older answers are dropped
	err    error
	force  bool // the next peek may count a delivery: the user said yes
	// reading is the read in progress (one at a time, see startRead);
	// queued: the queue was opened while it ran, and is peeked when it ends.
	reading *reading
	readSeq int
	queued  bool
	res     *broker.PeekResult
	at      time.Time

	banner []string // peek banner, laid out on load and resize
	rows   []browserRow
	order  []int // rows in sort order
	view   []int // order, filtered
	nav    list.Nav
	cols   browserCols
	marks  map[int]bool // by message position
	sortBy sortKey

	filter list.Filter
	// where chooses the shown messages (w); groupBy groups them (g).
	where   moveplan.Where
	groupBy string
	groups  []usecase.Group
	groupAt int
	gscan   groupScan // S: the whole queue grouped (groups.go)
	// markedIDs are the ids a group's marks expect at their positions
	// (those of a scan go past the peeked rows).
	markedIDs map[int]string
}

func newBrowser(c *common, source func() usecase.DumpSource) *browserModel {
	m := &browserModel{c: c, source: source, marks: map[int]bool{}}
	m.filter = list.NewFilter(m.refilter)
	return m
}

// open shows queue and peeks it.
func (m *browserModel) open(queue string) tea.Cmd {
	m.queue, m.res, m.err, m.rows, m.order, m.view, m.banner = queue, nil, nil, nil, nil, nil, nil
	m.nav, m.marks, m.sortBy = list.Nav{}, map[int]bool{}, sortPosition
	m.where, m.markedIDs = moveplan.Where{}, nil
	m.leaveGroups()
	m.filter.Reset() // no refilter: there are no rows yet
	m.ladder = ladderOf(m.snap, queue)
	if r := m.reading; r != nil {
		// One read at a time: this queue's peek waits for the running read
		// to end, and a peek of another queue is of no use now.
		m.queued = true
		if r.kind == readPeek || r.kind == readUnblock {
			r.cancel() // an unblock's dialog would open over the new queue
		}
		return nil
	}
	return m.peek()
}

// peek reads the browser's queue, unless a read runs already.
func (m *browserModel) peek() tea.Cmd {
	r := m.startRead(readPeek, peekTimeout)
	if r == nil {
		return m.alreadyReading()
	}
	m.id = r.id
	// force is the user's yes to one peek that counts a delivery (see
	// peekconsent.go): it covers this peek only.
	opt := broker.PeekOptions{Limit: m.c.peekLimit, Force: m.force}
	m.force = false
	peek := peekCmd(r, m.source(), m.queue, opt, m.c.now)
	cols := m.cols
	return tea.Batch(func() tea.Msg {
		msg := peek().(peekMsg)
		if msg.err == nil && msg.res != nil {
			msg.rows, msg.cols = buildBrowserRows(msg.res, cols, msg.at), cols
		}
		return msg
	}, r.wait())
}

// ladderOf finds the ladder queue belongs to (main, tier or DLQ).
func ladderOf(s *broker.Snapshot, queue string) *retry.Ladder {
	if s == nil {
		return nil
	}
	if l, ok := retry.LadderOf(s.Ladders, queue); ok {
		return &l
	}
	return nil
}

func (m *browserModel) SetSize(w, h int) {
	m.w, m.h = w, h
	if c := browserLayout(w); c != m.cols {
		m.cols = c
		m.renderRows()
	}
	m.fixScroll()
}

func (m *browserModel) Capturing() bool { return m.filter.Capturing() }

func (m *browserModel) Back() (bool, tea.Cmd) {
	if m.groupBy != "" {
		m.leaveGroups() // esc leaves the grouped view first
		return true, nil
	}
	return m.filter.Back(), nil
}

func (m *browserModel) Update(msg tea.Msg) tea.Cmd {
	if cmd, ok := m.updateGroups(msg); ok {
		return cmd
	}
	switch msg := msg.(type) {
	case snapshotMsg:
		m.snap = msg.snap
		if m.queue != "" {
			m.ladder = ladderOf(m.snap, m.queue)
		}
	case peekMsg:
		next := m.endRead(msg.id)
		if msg.id != m.id || next != nil {
			return next // an older peek (or another queue's)
		}
		if msg.err != nil {
			m.err = msg.err
			return statusCmd("peek "+termtext.Sanitize(msg.queue)+": "+termtext.Sanitize(broker.Describe(msg.err)), true)
		}
		m.load(msg.res, msg.at, msg.rows, msg.cols)
		// A new peek in the grouped view: its groups are the peek's
		// until the whole queue's come (autoScan).
		return m.autoScan()
	case readProgressMsg:
		return m.readProgress(msg)
	case movedialog.ClosedMsg:
		if msg.Queue == m.queue && msg.Changed {
			return m.reload()
		}
	case dumpAskMsg:
		if msg.queue == m.queue && (msg.file != "" || msg.named) {
			r := m.startRead(readDump, moveTimeout)
			if r == nil {
				return m.alreadyReading()
			}
			to := termtext.Sanitize(msg.file)
			if msg.named {
				to = "a file in " + termtext.Sanitize(m.c.files.Where())
			}
			// In sequence, so a quick failure is not overwritten by "dumping…".
			return tea.Sequence(statusCmd("dumping "+termtext.Sanitize(m.queue)+" to "+to+"…", false), tea.Batch(m.dump(r, msg.file, msg.force), r.wait()))
		}
	case unblockReadyMsg:
		return tea.Batch(m.endRead(msg.read), m.unblockReady(msg))
	case unblockAskMsg:
		return m.prepareUnblockFor(msg.queue, true, msg.force)
	case dumpDoneMsg:
		next := m.endRead(msg.id)
		if msg.err != nil {
			return tea.Batch(statusCmd(dumpFailed(msg), true), next)
		}
		if next == nil {
			next = m.reload()
		}
		return tea.Batch(statusCmd("dumped "+present.Plural(msg.rep.Written, "message", "messages")+" to "+termtext.Sanitize(msg.file), false), next)
	case whereAskMsg:
		return m.setWhere(msg.exprs)
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	case tea.PasteMsg:
		m.filter.Paste(msg, m.c.keys)
	}
	return nil
}

// load takes a peek result and its rows, rendered once per load (again
// only if the width changed meanwhile).
func (m *browserModel) load(res *broker.PeekResult, at time.Time, rows []browserRow, cols browserCols) {
	m.err, m.res, m.at = nil, res, at
	if rows == nil || cols != m.cols {
		rows = buildBrowserRows(res, m.cols, at)
	}
	m.rows = rows
	m.banner = renderPeekBanner(m.res, m.at, m.w, m.c.styles)
	m.resort()
}

// reload peeks again; marks go, as positions are renumbered by a new peek.
// While a read runs it only says so.
func (m *browserModel) reload() tea.Cmd {
	if m.reading != nil {
		return m.alreadyReading()
	}
	var cmds []tea.Cmd
	if len(m.marks) > 0 {
		m.marks = map[int]bool{}
		cmds = append(cmds, statusCmd("marks cleared: a new peek numbers positions afresh", false))
	}
	if m.c.conn.waiting {
		// The snapshot loop waits for r after a refused login: this r is it.
		cmds = append(cmds, navCmd(refreshMsg{}))
	}
	return tea.Batch(append(cmds, m.peek())...)
}

func (m *browserModel) renderRows() {
	m.banner = renderPeekBanner(m.res, m.at, m.w, m.c.styles)
	renderBrowserRows(m.rows, m.cols, m.at)
}

func (m *browserModel) resort() {
	keep := m.current()
	m.order = make([]int, len(m.rows))
	for i := range m.order {
		m.order[i] = i
	}
	by := func(f func(a, b *broker.Message) int) {
		slices.SortStableFunc(m.order, func(i, j int) int { return f(m.rows[i].message, m.rows[j].message) })
	}
	switch m.sortBy {
	case sortAge:
		by(cmpSeen)
	case sortRetries:
		by(func(a, b *broker.Message) int { return cmp.Compare(b.Retry.Count, a.Retry.Count) })
	case sortSize:
		by(func(a, b *broker.Message) int { return cmp.Compare(b.BodySize, a.BodySize) })
	case sortDue:
		by(cmpDue)
	}
	m.refilterKeeping(keep)
}

// cmpSeen orders messages by their best time known (BestTime), oldest
// first, unknown last.
func cmpSeen(a, b *broker.Message) int {
	ta, _ := a.BestTime()
	tb, _ := b.BestTime()
	switch {
	case ta.IsZero() && tb.IsZero():
		return 0
	case ta.IsZero():
		return 1
	case tb.IsZero():
		return -1
	}
	return ta.Compare(tb)
}

// cmpDue orders by due time (a TTL's, else Celery's eta, as DueOf shows
// it), soonest (most overdue) first, never-due and unknown last.
func cmpDue(a, b *broker.Message) int {
	key := func(m *broker.Message) (int, time.Time) {
		h, eta := m.HoL, m.Retry.DueTime
		switch {
		case !eta.IsZero() && (h == nil || (h.NeverDue && !h.Stuck)):
			return 0, eta
		case h == nil:
			return 2, time.Time{}
		case h.NeverDue:
			return 1, time.Time{}
		}
		return 0, h.DueAt
	}
	ra, ta := key(a)
	rb, tb := key(b)
	return cmp.Or(cmp.Compare(ra, rb), ta.Compare(tb))
}

// current is the row index under the cursor, or -1.
func (m *browserModel) current() int {
	if m.nav.Cursor < 0 || m.nav.Cursor >= len(m.view) {
		return -1
	}
	return m.view[m.nav.Cursor]
}

func (m *browserModel) refilter() { m.refilterKeeping(m.current()) }

// refilterKeeping applies the filter and puts the cursor back on row keep
// when it is still shown.
func (m *browserModel) refilterKeeping(keep int) {
	f := m.filter.Match()
	m.view = m.view[:0]
	for _, i := range m.order {
		if (f == "" || strings.Contains(m.rows[i].search, f)) && m.chosen(m.rows[i].message) {
			m.view = append(m.view, i)
		}
	}
	m.regroup()
	if at := slices.Index(m.view, keep); at >= 0 {
		m.nav.Cursor = at
	}
	m.nav.Clamp(len(m.view), nil)
	m.fixScroll()
}

// Layout: banner, column header, rows, then a line for the filter.
func (m *browserModel) listHeight() int {
	return max(1, m.h-len(m.banner)-2)
}

func (m *browserModel) fixScroll() { m.nav.Scroll(len(m.view), m.listHeight()) }

func (m *browserModel) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	if m.filter.HandleKey(msg, k) {
		return nil
	}
	if m.groupBy != "" {
		return m.groupKey(msg)
	}
	if m.nav.HandleKey(msg, k, len(m.view), m.listHeight(), nil) {
		m.fixScroll()
		return nil
	}
	// The filter hides what it does not match: every shown row is a match.
	if d := m.filter.Step(msg, k); d != 0 {
		m.nav.Find(len(m.view), d, nil)
		m.fixScroll()
		return nil
	}
	switch {
	case key.Matches(msg, k.Filter) && len(m.rows) > 0:
		m.filter.Start()
	case key.Matches(msg, k.Open):
		if i := m.current(); i >= 0 {
			message := m.rows[i].message
			spec := m.moveSpec(message)
			spec.Single = true
			return navCmd(openMessageMsg{queue: m.queue, message: message, ladder: m.ladder, peeked: m.at, spec: spec})
		}
	case key.Matches(msg, k.Mark):
		if i := m.current(); i >= 0 {
			p := m.rows[i].message.Position
			if m.marks[p] {
				delete(m.marks, p)
			} else {
				m.marks[p] = true
			}
			m.nav.Step(len(m.view), 1, nil)
			m.fixScroll()
		}
	case key.Matches(msg, k.MarkAll):
		m.markAll()
	case key.Matches(msg, k.Sort) && len(m.rows) > 0:
		m.sortBy = (m.sortBy + 1) % sortKeys
		m.resort()
	case key.Matches(msg, k.Refresh):
		return m.reload()
	case key.Matches(msg, k.Group) && len(m.rows) > 0:
		return m.cycleGroup()
	case key.Matches(msg, k.Where) && m.res != nil:
		return m.askWhere()
	case key.Matches(msg, k.Dump) && m.res != nil:
		if m.reading != nil {
			return m.alreadyReading()
		}
		return m.askDump()
	case key.Matches(msg, k.Replay):
		return m.pickReplay()
	case key.Matches(msg, k.Unblock) && m.res != nil:
		return m.prepareUnblock()
	case key.Matches(msg, k.Move):
		if m.res == nil {
			return nil
		}
		var cur *broker.Message
		if i := m.current(); i >= 0 {
			cur = m.rows[i].message
		}
		return navCmd(openMoveMsg{spec: m.moveSpec(cur)})
	}
	return nil
}

// moveSpec is what the move dialog is opened on, from here or from the
// inspector of cursor: the queue's ladder and ready depth, the marks and the
// ids the peek saw at their positions.
func (m *browserModel) moveSpec(cursor *broker.Message) movedialog.Spec {
	spec := movedialog.Spec{Queue: m.queue, Ladder: m.ladder, Cursor: cursor, Marked: m.markedPositions(), IDs: map[int]string{}}
	for p, id := range m.markedIDs {
		if m.marks[p] {
			spec.IDs[p] = id
		}
	}
	m.whereScope(&spec)
	if m.res != nil {
		spec.Depth = m.res.Ready
		for _, message := range m.res.Messages {
			if m.marks[message.Position] {
				spec.IDs[message.Position] = message.Properties.MessageID
			}
		}
	}
	return spec
}

// markAll marks every shown row, or clears them when all are marked.
func (m *browserModel) markAll() {
	all := len(m.view) > 0
	for _, i := range m.view {
		if !m.marks[m.rows[i].message.Position] {
			all = false
			break
		}
	}
	for _, i := range m.view {
		if all {
			delete(m.marks, m.rows[i].message.Position)
		} else {
			m.marks[m.rows[i].message.Position] = true
		}
	}
}

func (m *browserModel) markedPositions() []int {
	out := make([]int, 0, len(m.marks))
	for p := range m.marks {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func (m *browserModel) View() string {
	st := m.c.styles
	lines := make([]string, 0, m.h)
	switch {
	case m.res == nil && m.err != nil:
		lines = append(lines, styled.Wrap(st.Error, "peek "+termtext.Sanitize(m.queue)+" failed: "+termtext.Sanitize(broker.Describe(m.err)), m.w)...)
		return strings.Join(lines, "\n")
	case m.res == nil:
		return st.Muted.Render(termtext.Truncate(m.readingLine(), m.w))
	}
	lines = append(lines, m.banner...)
	if m.groupBy != "" {
		lines = append(lines, m.groupLines(m.h-len(lines)-1)...)
		for len(lines) < m.h-1 {
			lines = append(lines, "")
		}
		return strings.Join(append(lines, m.footer()), "\n")
	}
	lines = append(lines, renderBrowserHeader(m.cols, st))
	lh := m.listHeight()
	end := min(len(m.view), m.nav.Offset+lh)
	for vi := m.nav.Offset; vi < end; vi++ {
		r := &m.rows[m.view[vi]]
		// Two glyphs, so cursor and marks show without colour too.
		cur, mark := " ", " "
		if vi == m.nav.Cursor {
			cur = "▸"
		}
		if m.marks[r.message.Position] {
			mark = "●"
		}
		switch line := cur + mark + r.text; {
		case vi == m.nav.Cursor:
			lines = append(lines, st.Selected.Render(line))
		case mark != " ":
			lines = append(lines, st.Marked.Render(line))
		case r.warn:
			lines = append(lines, st.Warning.Render(line))
		default:
			lines = append(lines, line)
		}
	}
	if len(m.rows) == 0 {
		lines = append(lines, st.Muted.Render("no messages ready in this queue"))
	}
	for len(lines) < m.h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, m.footer())
	return strings.Join(lines, "\n")
}

// footer is the filter prompt or the table's position and sort.
func (m *browserModel) footer() string {
	st := m.c.styles
	pos := strconv.Itoa(min(m.nav.Cursor+1, len(m.view))) + "/" + strconv.Itoa(len(m.view))
	if len(m.view) != len(m.rows) {
		pos += " (of " + strconv.Itoa(len(m.rows)) + ")"
	}
	right := pos + " · sort: " + m.sortBy.String()
	if m.groupBy != "" {
		right = present.Plural(len(m.groups), "group", "groups") + " by " + m.groupBy + " · enter marks one · g next"
	}
	if !m.where.Empty() {
		right += " · where " + strings.Join(m.where.Exprs(), " ")
	}
	if n := len(m.marks); n > 0 {
		right += " · " + strconv.Itoa(n) + " marked"
	}
	if r := m.reading; r != nil {
		right += " · " + r.kind + ": " + r.text()
	}
	if m.filter.Active() {
		fw := max(10, m.w-termtext.Width(right)-12)
		return termtext.Truncate("filter /", m.w) + m.filter.View(fw, st) + "  " + st.Muted.Render(right)
	}
	return st.Muted.Render(termtext.Truncate(right, m.w))
}

// readingLine is what the browser shows before its first peek has come:
// how far it is, or what it waits for.
func (m *browserModel) readingLine() string {
	q := termtext.Sanitize(m.queue)
	switch r := m.reading; {
	case r == nil:
		return "peeking " + q + "…"
	case r.queue != m.queue || r.kind != readPeek:
		return "waiting for the " + r.kind + " of " + termtext.Sanitize(r.queue) + " to end, then peeking " + q + "…"
	}
	return "peeking " + q + " · " + m.reading.text()
}

func (m *browserModel) name() string { return "queue browser" }

// holBlocked: some browsed message is held back by a longer one ahead.
func (m *browserModel) holBlocked() bool {
	if m.res == nil {
		return false
	}
	for i := range m.res.Messages {
		if h := m.res.Messages[i].HoL; h != nil && h.Blocked {
			return true
		}
	}
	return false
}

// ShortHelp is the footer: the keys that act here now. While a filter is
// typed they are the filter's; with a filter kept, esc clears it before it
// goes back.
func (m *browserModel) ShortHelp() []key.Binding {
	k := m.c.keys
	if m.filter.Capturing() {
		return list.FilterKeys(m.c.keys)
	}
	if m.groupBy != "" {
		return m.groupHelp()
	}
	// Most important first: the footer drops from the end to fit.
	// A kept filter's esc is shown next to the filter: it is what esc does.
	var out []key.Binding
	if len(m.rows) > 0 {
		out = append(out, k.Open, k.Filter)
		if m.filter.Text() != "" {
			out = append(out, k.ClearFilter)
		}
	}
	// On a head-of-line-blocked queue unblock is the action that matters:
	// it comes right after the filter's keys, and move before marking, so
	// 80 columns still show it.
	hol := m.holBlocked()
	if hol {
		if len(m.rows) > 0 && m.filter.Text() != "" {
			out = append(out, list.MatchKeys(k)...)
		}
		out = append(out, k.Unblock, k.Move)
		if len(m.rows) > 0 {
			out = append(out, k.Mark)
		}
	} else {
		if len(m.rows) > 0 {
			out = append(out, k.Mark)
		}
		if m.res != nil {
			out = append(out, k.Move)
		}
	}
	if m.filter.Text() == "" || len(m.rows) == 0 {
		out = append(out, m.backKey())
	}
	if len(m.rows) > 0 {
		out = append(out, k.Sort)
		if m.filter.Text() != "" && !hol {
			out = append(out, list.MatchKeys(k)...)
		}
	}
	out = append(out, k.Refresh, k.Help, k.Quit)
	// Then the rarer actions, first to go when the footer is short; the
	// arrows are left to the ? screen.
	if len(m.rows) > 0 {
		out = append(out, k.Group)
	}
	if m.res != nil {
		out = append(out, k.Where, k.Dump)
	}
	return append(out, k.Replay)
}

// FullHelp is every key that acts on the browser: without messages there
// is nothing to open, mark, sort or filter; n/N act once a filter is kept.
func (m *browserModel) FullHelp() [][]key.Binding {
	k := m.c.keys
	if m.filter.Capturing() {
		return [][]key.Binding{list.FilterKeys(m.c.keys), k.EditKeys(), {k.ForceQuit}}
	}
	if m.groupBy != "" {
		return [][]key.Binding{m.groupHelp(), appKeys(m.c, true)}
	}
	var groups [][]key.Binding
	if len(m.rows) > 0 {
		act := []key.Binding{k.Open, k.Filter}
		if m.filter.Text() != "" {
			act = append(act, list.MatchKeys(k)...)
		}
		groups = append(groups, list.NavKeys(m.c.keys), append(act, k.Sort, k.Mark, k.MarkAll, k.Group))
	}
	act := []key.Binding{}
	if m.res != nil {
		act = append(act, k.Move, k.Unblock, k.Where, k.Dump)
	}
	act = append(act, k.Replay, k.Refresh, m.backKey())
	return append(groups, act, appKeys(m.c, true))
}

// backKey is what esc does: clear a kept filter, else go back.
func (m *browserModel) backKey() key.Binding {
	if m.filter.Text() != "" {
		return m.c.keys.ClearFilter
	}
	return m.c.keys.Back
}
