package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/ui/component/input"
	"github.com/ladder-tui/ladder/ui/component/list"
	"github.com/ladder-tui/ladder/ui/styled"
)

// openPromptMsg asks one line of text (a file name, --where expressions);
// done turns the answer into the message that acts on it. With confirm set
// it is a yes/no question instead (a peek's cost): no text is typed, the
// confirm keys answer done("") as yes and the cancel keys close; any other
// key, q too, does nothing.
type openPromptMsg struct {
	title, hint, value string
	done               func(string) tea.Msg
	confirm            bool
	yes                string // what confirming does, for the footer ("peek")
	no                 string // what cancelling does; "cancel" when empty
	// aboutMove: a question about the running move ("stop the move?");
	// the root closes it when the move ends first.
	aboutMove bool
}

// openPickerMsg offers a choice among items (dump files).
type openPickerMsg struct {
	title string
	items []string
	done  func(string) tea.Msg
}

// promptModel is a one-line question; enter answers, esc closes.
type promptModel struct {
	c    *common
	w, h int
	ask  openPromptMsg
	text input.Line
}

func newPrompt(c *common) *promptModel { return &promptModel{c: c} }

func (m *promptModel) open(ask openPromptMsg) {
	m.ask = ask
	m.text.Set(ask.value)
}

func (m *promptModel) SetSize(w, h int)      { m.w, m.h = w, h }
func (m *promptModel) Capturing() bool       { return true }
func (m *promptModel) Back() (bool, tea.Cmd) { return false, nil }

func (m *promptModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if m.ask.confirm {
			return m.answer(msg)
		}
		if key.Matches(msg, m.c.keys.Open) {
			answer, done := strings.TrimSpace(m.text.String()), m.ask.done
			return tea.Sequence(navCmd(backMsg{}), func() tea.Msg { return done(answer) })
		}
		m.text.Update(msg, m.c.keys)
	case tea.PasteMsg:
		if !m.ask.confirm {
			m.text.Update(msg, m.c.keys)
		}
	}
	return nil
}

// answer takes a key of a yes/no question. esc never gets here (the root
// sends it to Back, which closes the prompt).
func (m *promptModel) answer(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.c.keys.Confirm):
		done := m.ask.done
		return tea.Sequence(navCmd(backMsg{}), func() tea.Msg { return done("") })
	case key.Matches(msg, m.c.keys.Cancel):
		return navCmd(backMsg{})
	}
	return nil
}

func (m *promptModel) View() string {
	st := m.c.styles
	if m.ask.confirm {
		return m.confirmView()
	}
	w := max(20, min(m.w, 100)-4)
	// The title and hint are wrapped, never cut: the hint's end is often
	// what matters (an existing file is refused, the last expression kind).
	lines := styled.Wrap(st.Title, termtext.Sanitize(m.ask.title), w)
	lines = append(lines, "", "> "+m.text.View(w-2, true, st))
	if m.ask.hint != "" {
		lines = append(lines, "")
		lines = append(lines, styled.Wrap(st.Muted, termtext.Sanitize(m.ask.hint), w)...)
	}
	return strings.Join(lines, "\n")
}

// confirmView is the question, wrapped rather than cut (what it says is the
// point of asking), then the keys that answer it. The title is the caller's
// text: untrusted names in it are sanitised there, where they are fitted.
func (m *promptModel) confirmView() string {
	st := m.c.styles
	w := max(20, m.w)
	var lines []string
	for _, l := range termtext.Wrap(termtext.Sanitize(m.ask.title), w) {
		lines = append(lines, st.Warning.Render(l))
	}
	k := m.c.keys
	keys := k.Confirm.Help().Key + " " + m.ask.yes + " · " + k.Cancel.Help().Key + " " + m.noText()
	lines = append(lines, "", st.Muted.Render(termtext.Truncate(keys, w)))
	return strings.Join(lines, "\n")
}

func (m *promptModel) noText() string {
	if m.ask.no != "" {
		return m.ask.no
	}
	return "cancel"
}

func (m *promptModel) name() string { return "prompt" }

func (m *promptModel) ShortHelp() []key.Binding {
	k := m.c.keys
	if m.ask.confirm {
		return []key.Binding{keymap.As(k.Confirm, m.ask.yes), keymap.As(k.Cancel, m.noText())}
	}
	return []key.Binding{keymap.As(k.Open, "ok"), keymap.As(k.Back, "cancel"), k.DeleteChar, k.TypingHelp}
}

func (m *promptModel) FullHelp() [][]key.Binding {
	g := [][]key.Binding{m.ShortHelp()}
	if !m.ask.confirm {
		g = append(g, m.c.keys.EditKeys())
	}
	return append(g, []key.Binding{m.c.keys.ForceQuit})
}

// pickerModel chooses one item; enter picks, esc closes.
type pickerModel struct {
	c    *common
	w, h int
	ask  openPickerMsg
	nav  list.Nav
}

func newPicker(c *common) *pickerModel { return &pickerModel{c: c} }

func (m *pickerModel) open(ask openPickerMsg) { m.ask, m.nav = ask, list.Nav{} }

func (m *pickerModel) SetSize(w, h int)      { m.w, m.h = w, h }
func (m *pickerModel) Capturing() bool       { return false }
func (m *pickerModel) Back() (bool, tea.Cmd) { return false, nil }

func (m *pickerModel) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	n := len(m.ask.items)
	if m.nav.HandleKey(km, m.c.keys, n, m.h-2, nil) {
		m.nav.Scroll(n, m.h-2)
		return nil
	}
	if key.Matches(km, m.c.keys.Open) && m.nav.Cursor < n {
		item, done := m.ask.items[m.nav.Cursor], m.ask.done
		return tea.Sequence(navCmd(backMsg{}), func() tea.Msg { return done(item) })
	}
	return nil
}

func (m *pickerModel) View() string {
	st := m.c.styles
	lines := []string{st.Title.Render(termtext.Truncate(termtext.Sanitize(m.ask.title), m.w)), ""}
	start, end := m.nav.Window(len(m.ask.items), max(1, m.h-2))
	for i := start; i < end; i++ {
		line := termtext.Fit("  "+termtext.Sanitize(m.ask.items[i]), m.w)
		if i == m.nav.Cursor {
			line = st.Selected.Render(line)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func (m *pickerModel) name() string { return "picker" }

func (m *pickerModel) ShortHelp() []key.Binding {
	k := m.c.keys
	return []key.Binding{k.Up, k.Down, keymap.As(k.Open, "choose"), k.Back, k.Help}
}

func (m *pickerModel) FullHelp() [][]key.Binding {
	k := m.c.keys
	return [][]key.Binding{list.NavKeys(k), {keymap.As(k.Open, "choose"), k.Back}, appKeys(m.c, false)}
}
