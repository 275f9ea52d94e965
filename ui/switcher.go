package ui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/ui/component/list"
	"github.com/ladder-tui/ladder/ui/styled"
)

// vhostModel is a switcher: it lists the vhosts the user can see (kind
// "vhost"; choosing one opens a new client through Options.Open), or the
// config file's contexts (kind "context", through Options.OpenContext).
type vhostModel struct {
	c    *common
	kind string
	// list asks for the names (a vhostsMsg of this kind); current is the
	// one in use, starred; choose asks the root to switch.
	list    func() tea.Cmd
	current func() string
	choose  func(string) tea.Msg
	w, h    int
	vhosts  []string
	// summaries are the vhosts' (nil when the client gave only names),
	// their DLQs' growth over the listings so far the analysis's.
	summaries []broker.VhostSummary
	loading   bool
	opening   string
	err       error
	nav       list.Nav
}

// vhostSource is what the vhost switcher reads of the client: the vhosts
// it can switch to and the one it is in.
type vhostSource interface {
	vhostLister
	Vhost() string
}

// newVhosts is the vhost switcher; source is the client of the moment
// (the root hands it, a switch changes it): its vhosts listed, its own
// vhost starred.
func newVhosts(c *common, source func() vhostSource) *vhostModel {
	return &vhostModel{c: c, kind: kindVhost,
		list:    func() tea.Cmd { return vhostsCmd(c.ctx, source()) },
		current: func() string { return source().Vhost() },
		choose:  func(v string) tea.Msg { return switchVhostMsg{vhost: v} },
	}
}

// newContexts is the context switcher over names, current the one in use.
func newContexts(c *common, names []string, current func() string) *vhostModel {
	return &vhostModel{c: c, kind: kindContext,
		list:    func() tea.Cmd { return func() tea.Msg { return vhostsMsg{kind: kindContext, vhosts: names} } },
		current: current,
		choose:  func(n string) tea.Msg { return switchContextMsg{name: n} },
	}
}

// What a switcher switches.
const (
	kindVhost   = "vhost"
	kindContext = "context"
)

// open asks for the list.
func (m *vhostModel) open() tea.Cmd {
	m.vhosts, m.err, m.loading, m.opening, m.nav = nil, nil, true, "", list.Nav{}
	return m.list()
}

func (m *vhostModel) SetSize(w, h int)      { m.w, m.h = w, h }
func (m *vhostModel) Capturing() bool       { return false }
func (m *vhostModel) Back() (bool, tea.Cmd) { return false, nil }

func (m *vhostModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case vhostsMsg:
		if msg.kind != m.kind {
			return nil
		}
		m.loading, m.vhosts, m.err = false, msg.vhosts, msg.err
		m.summaries = msg.summaries // nil: names alone, no figure to show
		cur := m.current()
		for i, v := range m.vhosts {
			if v == cur {
				m.nav.Cursor = i
			}
		}
		m.nav.Scroll(len(m.vhosts), m.h-2)
	case clientOpenedMsg:
		if msg.kind() != m.kind {
			return nil
		}
		m.opening = ""
		if msg.err != nil {
			m.err = msg.err
		}
	case tea.KeyPressMsg:
		if m.nav.HandleKey(msg, m.c.keys, len(m.vhosts), m.h-2, nil) {
			m.nav.Scroll(len(m.vhosts), m.h-2)
			return nil
		}
		if key.Matches(msg, m.c.keys.Open) && m.nav.Cursor < len(m.vhosts) && m.opening == "" {
			m.opening = m.vhosts[m.nav.Cursor]
			return navCmd(m.choose(m.opening))
		}
	}
	return nil
}

func (m *vhostModel) View() string {
	st := m.c.styles
	lines := []string{st.Title.Render("Switch " + m.kind), ""}
	switch {
	case m.err != nil:
		lines = append(lines, styled.Wrap(st.Error, termtext.Sanitize(m.err.Error()), m.w)...)
	case m.loading:
		lines = append(lines, st.Muted.Render("listing "+m.kind+"s…"))
	}
	cur := m.current()
	end := min(len(m.vhosts), m.nav.Offset+max(1, m.h-len(lines)))
	for i := m.nav.Offset; i < end; i++ {
		v := termtext.Sanitize(m.vhosts[i])
		mark := "  "
		if m.vhosts[i] == cur {
			mark = "* "
		}
		if i < len(m.summaries) {
			v = termtext.Fit(v, 16) + "  " + summaryLine(m.summaries[i])
		}
		line := termtext.Fit(mark+v, m.w)
		if m.vhosts[i] == m.opening {
			line = termtext.Fit(mark+v+" (opening…)", m.w)
		}
		if i == m.nav.Cursor {
			line = st.Selected.Render(line)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// summaryLine is a vhost's overview in one line: "3 ladders · DLQ 1204
// (+37) · error stuck payments.wait".
func summaryLine(s broker.VhostSummary) string {
	parts := []string{present.Plural(s.Ladders, "ladder", "ladders")}
	dlq := "DLQ " + strconv.FormatInt(s.DLQMessages, 10)
	if s.DLQGrowth != nil && *s.DLQGrowth != 0 {
		dlq += fmt.Sprintf(" (%+d)", *s.DLQGrowth)
	}
	parts = append(parts, dlq)
	if w := s.Worst; w != nil {
		parts = append(parts, string(w.Severity)+" "+w.Code+" "+termtext.Sanitize(w.Queue))
	} else {
		parts = append(parts, "no findings")
	}
	return strings.Join(parts, " · ")
}

func (m *vhostModel) name() string { return m.kind + " switcher" }

func (m *vhostModel) ShortHelp() []key.Binding {
	k := m.c.keys
	return []key.Binding{k.Up, k.Down, keymap.As(k.Open, "switch"), k.Back, k.Help}
}

func (m *vhostModel) FullHelp() [][]key.Binding {
	k := m.c.keys
	return [][]key.Binding{list.NavKeys(m.c.keys), {keymap.As(k.Open, "switch"), k.Back}, appKeys(m.c, false)}
}
