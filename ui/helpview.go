package ui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/ladder-tui/ladder/ui/termtext"
)

// helpModel is the ? screen: every binding of the keymap that is enabled,
// rendered by bubbles/help, so help and keys cannot disagree.
type helpModel struct {
	c    *common
	w, h int
	help help.Model
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

func (m *helpModel) Capturing() bool           { return false }
func (m *helpModel) Back() (bool, tea.Cmd)     { return false, nil }
func (m *helpModel) Update(tea.Msg) tea.Cmd    { return nil }
func (m *helpModel) ShortHelp() []key.Binding  { return []key.Binding{m.c.keys.Back, m.c.keys.Quit} }
func (m *helpModel) FullHelp() [][]key.Binding { return m.c.keys.FullHelp() }

func (m *helpModel) View() string {
	st := m.c.styles
	title := "Keys"
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
	for _, g := range m.c.keys.FullHelp() {
		try := append(append([][]key.Binding{}, row...), g)
		if len(row) > 0 && lipgloss.Width(m.unbounded(try)) > m.w {
			flush()
		}
		row = append(row, g)
	}
	flush()
	return strings.Join(blocks, "\n")
}

// unbounded renders without the width limit, to measure.
func (m *helpModel) unbounded(groups [][]key.Binding) string {
	h := m.help
	h.SetWidth(0)
	return h.FullHelpView(groups)
}
