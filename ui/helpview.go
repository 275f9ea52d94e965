package ui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
)

// helpModel is the ? screen: the bindings of the screen it was opened from
// (that screen's FullHelp, so only keys that act there), rendered by
// bubbles/help, which skips disabled bindings: help and keys cannot
// disagree.
type helpModel struct {
	c    *common
	w, h int
	help help.Model
	from screen // the screen whose keys are shown; set by the root
	// quits: from is a screen (not a dialog), so q quits here as there.
	quits bool
}

func newHelp(c *common) *helpModel {
	h := help.New()
	h.Styles = c.styles.Help
	return &helpModel{c: c, help: h}
}

func (m *helpModel) SetSize(w, h int) {
	m.w, m.h = w, h
	m.help.SetWidth(w)
}

func (m *helpModel) Capturing() bool        { return false }
func (m *helpModel) Back() (bool, tea.Cmd)  { return false, nil }
func (m *helpModel) Update(tea.Msg) tea.Cmd { return nil }

func (m *helpModel) ShortHelp() []key.Binding {
	k := m.c.keys
	out := []key.Binding{k.Back, keymap.As(k.Help, "close help")}
	if m.quits {
		out = append(out, k.Quit)
	}
	return out
}

// FullHelp is the keys of the screen help was opened from.
func (m *helpModel) FullHelp() [][]key.Binding {
	if m.from == nil {
		return [][]key.Binding{m.ShortHelp()}
	}
	return m.from.FullHelp()
}

func (m *helpModel) View() string {
	st := m.c.styles
	title := "Keys"
	switch n := m.from.(type) {
	case interface{ name() string }:
		title += ": " + n.name()
	case interface{ Name() string }: // a screen of its own package (the move dialog)
		title += ": " + n.Name()
	}
	if m.c.readOnly {
		title += " (read-only: moving messages is disabled)"
	}
	blocks := []string{st.Title.Render(termtext.Truncate(title, m.w)), ""}
	// Pack the groups into rows of columns that fit the width, rather than
	// letting bubbles/help cut the last columns off at 80 columns.
	var row [][]key.Binding
	flush := func() {
		if len(row) > 0 {
			blocks = append(blocks, m.help.FullHelpView(row), "")
			row = nil
		}
	}
	for _, g := range m.FullHelp() {
		if !anyEnabled(g) {
			continue
		}
		try := append(append([][]key.Binding{}, row...), g)
		if len(row) > 0 && lipgloss.Width(m.unbounded(try)) > m.w {
			flush()
		}
		row = append(row, g)
	}
	flush()
	room := m.h - lipgloss.Height(strings.Join(blocks, "\n"))
	switch from := m.from.(type) {
	case *homeModel:
		blocks = append(blocks, m.meanings("Columns", present.HomeColumns, "… (docs/tui.md has them all)", room)...)
	case interface {
		Fields() []present.Column
		Action() string
	}: // the move dialog's form: its fields are the command's flags
		blocks = append(blocks, m.meanings("Fields (the flags of ladder "+from.Action()+")", from.Fields(), "… (ladder "+from.Action()+" --help has them all)", room)...)
	}
	return strings.Join(blocks, "\n")
}

// meanings says what each of a screen's columns or fields means, under
// title, in room lines at most (none when fewer than three are left:
// docs/tui.md says it too); more ends a list cut short.
func (m *helpModel) meanings(title string, rows []present.Column, more string, room int) []string {
	if room < 3 || len(rows) == 0 {
		return nil
	}
	st := m.c.styles
	out := []string{st.Title.Render(title)}
	name := 0
	for _, c := range rows {
		name = max(name, termtext.Width(c.Name))
	}
	for _, c := range rows {
		lines := termtext.Wrap(c.Meaning, max(10, m.w-name-2))
		for i, l := range lines {
			head := strings.Repeat(" ", name)
			if i == 0 {
				head = c.Name + strings.Repeat(" ", name-termtext.Width(c.Name))
			}
			out = append(out, head+"  "+l)
		}
	}
	if len(out) > room {
		out = append(out[:room-1], st.Muted.Render(termtext.Truncate(more, m.w)))
	}
	return out
}

// unbounded renders without the width limit, to measure.
func (m *helpModel) unbounded(groups [][]key.Binding) string {
	h := m.help
	h.SetWidth(0)
	return h.FullHelpView(groups)
}

func anyEnabled(bs []key.Binding) bool {
	for _, b := range bs {
		if b.Enabled() {
			return true
		}
	}
	return false
}

// Bindings every screen shares, for the screens' help.

// appKeys are the keys of the app itself: on a screen (ladders, browser,
// inspector) the vhost and context switchers, help and quitting; over a dialog, prompt,
// picker or help, where q does nothing, help and ctrl+c only.
func appKeys(c *common, screen bool) []key.Binding {
	k := c.keys
	anywhere := keymap.As(k.TypingHelp, "help, in typed fields too")
	if screen {
		return []key.Binding{k.Vhost, k.Context, k.Help, anywhere, k.Quit, k.ForceQuit}
	}
	return []key.Binding{k.Help, anywhere, k.ForceQuit}
}
