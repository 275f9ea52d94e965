package ui

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/ui/component/table"
	"github.com/ladder-tui/ladder/ui/style"
)

// The queue browser's grouped view (g): messages grouped by what broke them.

// groupOrder is what g cycles through ("" is the plain list).
var groupOrder = []string{"", broker.GroupError, broker.GroupReason, broker.GroupQueue, broker.GroupOrigin}

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

// groupKey handles keys in the grouped view: up and down over groups,
// enter marks one's messages, g groups by the next field, m moves a group.
func (m *browserModel) groupKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Up):
		m.groupAt = max(0, m.groupAt-1)
	case key.Matches(msg, k.Down):
		m.groupAt = min(max(0, len(m.groups)-1), m.groupAt+1)
	case key.Matches(msg, k.Group):
		m.cycleGroup()
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
	return []key.Binding{k.Up, k.Down, keymap.As(k.Open, "mark group"), keymap.As(k.Move, "move group"),
		keymap.As(k.Group, "next grouping"), keymap.As(k.Back, "messages"), k.Refresh}
}
