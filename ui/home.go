package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/component/list"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// homeModel is the ladders screen: every ladder as a chain with live
// figures, findings as badges, then the queues outside any ladder.
type homeModel struct {
	c    *common
	w, h int

	snap *broker.Snapshot
	rows []homeRow
	nav  list.Nav
	cols homeCols

	filter list.Filter
	// sort and hideEmpty are how rows are ordered and which are left out
	// (the sort and hide-empty keys).
	sort      homeSort
	hideEmpty bool
}

func newHome(c *common) *homeModel {
	m := &homeModel{c: c}
	m.filter = list.NewFilter(m.refilter)
	return m
}

func (m *homeModel) SetSize(w, h int) {
	m.w, m.h = w, h
	m.cols = homeLayout(w)
	m.fixScroll()
}

func (m *homeModel) Capturing() bool { return m.filter.Capturing() }

func (m *homeModel) Back() (bool, tea.Cmd) {
	return m.filter.Back(), nil
}

// reset forgets everything (a vhost switch).
func (m *homeModel) reset() {
	m.snap, m.rows, m.nav = nil, nil, list.Nav{}
}

func (m *homeModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case snapshotMsg:
		// The root forwards only current, successful snapshots.
		m.setSnapshot(msg.snap)
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	case tea.PasteMsg:
		m.filter.Paste(msg, m.c.keys)
	case unblockReadyMsg:
		return m.homeUnblockReady(msg)
	}
	return nil
}

// setSnapshot shows s as the analysis made it: its findings, trends and
// drains are every face's (broker/analysis); nothing is added here.
func (m *homeModel) setSnapshot(s *broker.Snapshot) {
	if s == nil {
		return
	}
	m.snap = s
	m.rebuild()
}

// rebuild lays out the rows again, keeping the cursor on the same queue.
func (m *homeModel) rebuild() {
	keep := ""
	if r := m.selected(); r != nil {
		keep = r.name
	}
	m.rows = buildHomeRowsView(m.snap, homeView{filter: m.filter.Match(), sort: m.sort, hideEmpty: m.hideEmpty, growth: m.growth})
	m.nav.Cursor = 0
	for i := range m.rows {
		if m.rows[i].selectable() && m.rows[i].name == keep {
			m.nav.Cursor = i
			break
		}
	}
	m.nav.Clamp(len(m.rows), m.selectable)
	m.fixScroll()
}

// refilter lays out the rows for a changed filter and puts the cursor on
// the first match, so enter opens what was searched for. A cleared filter
// keeps the cursor on its queue.
func (m *homeModel) refilter() {
	m.rebuild()
	if m.filter.Match() != "" {
		m.nav.First(len(m.rows), m.selectable)
		m.fixScroll()
	}
}

// fixScroll keeps the cursor visible; called after every change so View
// only reads.
func (m *homeModel) fixScroll() {
	m.nav.Scroll(len(m.rows), m.listHeight())
	if m.nav.Offset > 0 && m.nav.Offset == m.nav.Cursor && !m.rows[m.nav.Cursor-1].selectable() {
		m.nav.Offset-- // show the section title above the first row
	}
}

// growth is how much queue grew within the reads of the last
// topology.DLQGrowingWindow, as the analysis found (the growth sort).
func (m *homeModel) growth(queue string) int64 {
	if m.snap == nil {
		return 0
	}
	return m.snap.Trends[queue].Growth
}

// jumpTo puts the cursor on queue's row (from the findings view), showing
// it first when a filter or hidden empty queues leave it out; false when
// the snapshot has no row for it.
func (m *homeModel) jumpTo(queue string) bool {
	find := func() bool {
		for i := range m.rows {
			if m.rows[i].selectable() && m.rows[i].name == queue {
				m.nav.Cursor = i
				m.fixScroll()
				return true
			}
		}
		return false
	}
	if find() {
		return true
	}
	m.filter.Reset()
	m.hideEmpty = false
	m.rebuild()
	return find()
}

func (m *homeModel) selectable(i int) bool { return m.rows[i].selectable() }

func (m *homeModel) selected() *homeRow {
	if m.nav.Cursor < 0 || m.nav.Cursor >= len(m.rows) || !m.rows[m.nav.Cursor].selectable() {
		return nil
	}
	return &m.rows[m.nav.Cursor]
}

func (m *homeModel) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	if m.filter.HandleKey(msg, k) {
		return nil
	}
	if m.nav.HandleKey(msg, k, len(m.rows), m.listHeight(), m.selectable) {
		m.fixScroll()
		return nil
	}
	if d := m.filter.Step(msg, k); d != 0 {
		m.nav.Find(len(m.rows), d, m.selectable)
		m.fixScroll()
		return nil
	}
	switch {
	case key.Matches(msg, k.Filter):
		m.filter.Start()
	case key.Matches(msg, k.Sort):
		m.sort = (m.sort + 1) % homeSorts
		m.rebuild()
	case key.Matches(msg, k.HideEmpty):
		m.hideEmpty = !m.hideEmpty
		m.rebuild()
	case key.Matches(msg, k.Open):
		if r := m.selected(); r != nil {
			return navCmd(openQueueMsg{queue: r.name})
		}
	case key.Matches(msg, k.Refresh):
		return navCmd(refreshMsg{})
	case key.Matches(msg, k.Findings):
		q := ""
		if r := m.selected(); r != nil {
			q = r.name
		}
		return navCmd(openFindingsMsg{queue: q})
	case key.Matches(msg, k.Move):
		if r := m.selected(); r != nil && r.q != nil {
			return navCmd(openMoveMsg{spec: m.moveSpec(r)})
		}
	case key.Matches(msg, k.Unblock):
		if r := m.unblockRow(); r != nil {
			// The browser's read slot: one read at a time, wherever asked.
			return navCmd(unblockAskMsg{queue: r.name})
		}
	}
	return nil
}

// moreFindings ends a details pane too short for its findings.
func (m *homeModel) moreFindings() string {
	f := m.c.keys.Findings.Help()
	return "more: " + f.Key + " shows every finding in full"
}

// moveSpec offers moving the first N or all of the selected queue.
func (m *homeModel) moveSpec(r *homeRow) movedialog.Spec {
	spec := movedialog.Spec{Queue: r.name, Depth: r.q.Ready}
	if r.ladder >= 0 {
		l := m.snap.Ladders[r.ladder]
		spec.Ladder = &l
	}
	return spec
}

// Layout of the screen: summary, column header, list, separator, details.
// The details grow to show the selected row's findings in full (at 80×24
// too), as long as the list keeps a third of the screen.
func (m *homeModel) detailsHeight() int {
	base := min(max(m.h/5, 4), 10)
	r := m.selected()
	if r == nil || m.snap == nil {
		return base
	}
	need := len(renderRowDetails(r, m.snap, m.w, m.h, m.c.styles, ""))
	keep := min(len(m.rows), max(5, m.h/3))
	return max(base, min(need, m.h-3-keep))
}

func (m *homeModel) listHeight() int { return max(1, m.h-3-m.detailsHeight()) }

func (m *homeModel) View() string {
	st := m.c.styles
	stale := m.c.conn.down
	lines := make([]string, 0, m.h)
	lines = append(lines, m.summary())
	lines = append(lines, renderHomeHeader(m.cols, st))

	lh := m.listHeight()
	switch {
	case m.snap == nil && !m.c.conn.down:
		lines = append(lines, st.Muted.Render("connecting…"))
	case m.snap == nil && m.c.conn.waiting:
		// It answered, with a refusal: say what the title says.
		lines = append(lines, st.Down.Render(termtext.Truncate("no data: "+m.c.conn.downText(m.c.now()), m.w)))
	case m.snap == nil && m.c.conn.apiSlow:
		lines = append(lines, st.Down.Render(termtext.Truncate("no data: the management API has not answered yet", m.w)))
	case m.snap == nil:
		lines = append(lines, st.Down.Render(termtext.Truncate("no data: the broker has not answered yet", m.w)))
	}
	// The list's height follows the details: keep the cursor in view.
	off := m.nav.Offset
	if m.nav.Cursor >= off+lh {
		off = m.nav.Cursor - lh + 1
	}
	off = max(0, min(off, m.nav.Cursor))
	end := min(len(m.rows), off+lh)
	for i := off; i < end; i++ {
		r := &m.rows[i]
		lines = append(lines, renderHomeRow(r, m.stats(r), m.cols, st, i == m.nav.Cursor, stale))
	}
	for len(lines) < 2+lh {
		lines = append(lines, "")
	}
	lines = append(lines, st.Muted.Render(strings.Repeat("─", m.w)))
	if r := m.selected(); r != nil {
		lines = append(lines, renderRowDetails(r, m.snap, m.w, m.detailsHeight(), st, m.moreFindings())...)
	}
	return strings.Join(lines, "\n")
}

// stats are a row's trend, as the analysis found it.
func (m *homeModel) stats(r *homeRow) broker.Trend {
	if r.q == nil || m.snap == nil {
		return broker.Trend{}
	}
	return m.snap.Trends[r.name]
}

// summary is the line above the list: counts, or the connection trouble.
func (m *homeModel) summary() string {
	st := m.c.styles
	cs := &m.c.conn
	var left string
	if cs.down {
		left = cs.trouble() + " · " + cs.retryText(m.c.now())
		if cs.waiting {
			left = termtext.Sanitize(broker.Describe(cs.err)) + " · r retries"
		}
		if !cs.lastOK.IsZero() {
			left += " · showing " + cs.dataAge(m.c.now())
		}
		switch {
		case !cs.amqpAt.IsZero() && m.snap != nil:
			left += " · depths from AMQP at " + present.Clock(cs.amqpAt)
		case !cs.amqpAt.IsZero():
			left += " · AMQP answers"
		}
		return st.Down.Render(termtext.Truncate(left, m.w))
	}
	if m.snap == nil {
		return ""
	}
	nq := len(m.snap.Topology.Queues)
	left = present.Plural(len(m.snap.Ladders), "ladder", "ladders") + " · " + present.Plural(nq, "queue", "queues") + " · " + findingCounts(m.snap.Findings)
	if every := m.c.refreshEvery(m.snap); m.c.refresh == 0 && every != broker.BaseRefresh {
		// A big vhost is read less often: say so, and how often.
		left += " · refresh every " + present.Dur(every)
	}
	if f := m.filter.Text(); f != "" || m.filter.Capturing() {
		fw := max(10, m.w-termtext.Width(left)-14)
		left += " · filter /" + m.filter.View(min(fw, 30), st)
	}
	return termtext.Truncate(left, m.w)
}

func findingCounts(fs []topology.Finding) string {
	var e, w, i int
	for _, f := range fs {
		switch f.Severity {
		case topology.SeverityError:
			e++
		case topology.SeverityWarning:
			w++
		default:
			i++
		}
	}
	if e+w+i == 0 {
		return "no findings"
	}
	var parts []string
	if e > 0 {
		parts = append(parts, present.Plural(e, "error", "errors"))
	}
	if w > 0 {
		parts = append(parts, present.Plural(w, "warning", "warnings"))
	}
	if i > 0 {
		parts = append(parts, present.Plural(i, "note", "notes"))
	}
	return strings.Join(parts, ", ")
}

func (m *homeModel) name() string { return "ladders" }

// ShortHelp is the footer: the keys that act here now. While a filter is
// typed they are the filter's; with a filter kept, esc clears it.
func (m *homeModel) ShortHelp() []key.Binding {
	k := m.c.keys
	if m.filter.Capturing() {
		return list.FilterKeys(m.c.keys)
	}
	// Most important first: the footer drops from the end to fit. The
	// arrows are left to the ? screen.
	kept := m.filter.Text() != ""
	out := []key.Binding{k.Open, k.Filter}
	if kept {
		out = append(out, k.ClearFilter)
	}
	out = append(out, k.Move)
	if m.unblockRow() != nil {
		out = append(out, k.Unblock)
	}
	if kept {
		out = append(out, list.MatchKeys(k)...)
	}
	// f after r: at 80 columns it is the one dropped, and the details
	// pane names it when it has more than it shows; sorting and hiding
	// empty queues after it (on the ? screen at 80 columns).
	return append(out, k.Refresh, k.Findings, m.sortKey(), m.hideKey(), k.Vhost, k.Help, k.Quit)
}

// sortKey is the sort key, described by the order it switches to.
func (m *homeModel) sortKey() key.Binding {
	return keymap.As(m.c.keys.Sort, "sort by "+((m.sort+1)%homeSorts).String())
}

// hideKey is the hide-empty key, described by what it does now.
func (m *homeModel) hideKey() key.Binding {
	if m.hideEmpty {
		return keymap.As(m.c.keys.HideEmpty, "show empty")
	}
	return keymap.As(m.c.keys.HideEmpty, "hide empty")
}

// FullHelp is every key that acts on the ladders screen. esc only clears a
// kept filter here (there is nothing to go back to), and n/N only step
// through one, so they are listed then.
func (m *homeModel) FullHelp() [][]key.Binding {
	k := m.c.keys
	if m.filter.Capturing() {
		return [][]key.Binding{list.FilterKeys(m.c.keys), k.EditKeys(), {k.ForceQuit}}
	}
	act := []key.Binding{k.Open, k.Filter}
	if m.filter.Text() != "" {
		act = append(append(act, k.ClearFilter), list.MatchKeys(k)...)
	}
	act = append(act, k.Move)
	if m.unblockRow() != nil {
		act = append(act, k.Unblock)
	}
	act = append(act, k.Findings, m.sortKey(), m.hideKey(), k.Refresh)
	return [][]key.Binding{list.NavKeys(m.c.keys), act, appKeys(m.c, true)}
}
