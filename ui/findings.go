package ui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui/style"
)

// openFindingsMsg opens the findings view, the given queue's first.
type openFindingsMsg struct{ queue string }

// findingsModel shows every finding of the snapshot in full, wrapped and
// scrolled: the ladders screen's details pane has only the rows the list
// leaves it, and a queue with many long findings does not fit there. It
// reads the ladders screen's snapshot when drawn, so a refresh shows here.
type findingsModel struct {
	c      *common
	home   *homeModel
	w, h   int
	queue  string // shown first
	offset int
}

func newFindings(c *common, home *homeModel) *findingsModel {
	return &findingsModel{c: c, home: home}
}

func (m *findingsModel) open(msg openFindingsMsg) { m.queue, m.offset = msg.queue, 0 }

func (m *findingsModel) SetSize(w, h int)      { m.w, m.h = w, h }
func (m *findingsModel) Capturing() bool       { return false }
func (m *findingsModel) Back() (bool, tea.Cmd) { return false, nil }

func (m *findingsModel) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k := m.c.keys
	page := max(1, m.h-2)
	switch {
	case key.Matches(km, k.Down):
		m.offset++
	case key.Matches(km, k.Up):
		m.offset--
	case key.Matches(km, k.PageDown):
		m.offset += page
	case key.Matches(km, k.PageUp):
		m.offset -= page
	case key.Matches(km, k.Top):
		m.offset = 0
	case key.Matches(km, k.Bottom):
		m.offset = len(m.lines())
	}
	m.clamp(len(m.lines()))
	return nil
}

// clamp keeps the offset where the last page still fills the screen.
func (m *findingsModel) clamp(n int) {
	m.offset = max(0, min(m.offset, n-(m.h-2)))
}

// lines is the whole text: each finding's head, then its message wrapped.
func (m *findingsModel) lines() []string {
	var fs []retry.Finding
	if s := m.home.snap; s != nil {
		fs = findingsFirst(s.Findings, m.queue)
	}
	return renderFindings(fs, m.w, m.c.styles)
}

// findingsFirst orders findings with those of queue first, each group in
// its own (severity) order.
func findingsFirst(fs []retry.Finding, queue string) []retry.Finding {
	out := make([]retry.Finding, 0, len(fs))
	for _, f := range fs {
		if f.Queue == queue {
			out = append(out, f)
		}
	}
	for _, f := range fs {
		if f.Queue != queue {
			out = append(out, f)
		}
	}
	return out
}

// renderFindings draws findings in width cells: the severity, the
// finding's name and where, then its whole message, wrapped at words.
func renderFindings(fs []retry.Finding, width int, st *style.Styles) []string {
	if len(fs) == 0 {
		return []string{st.Muted.Render(termtext.Truncate("no findings", width))}
	}
	var lines []string
	for i, f := range fs {
		if i > 0 {
			lines = append(lines, "")
		}
		where := f.Queue
		if where == "" {
			where = f.Exchange
		}
		head := severityGlyph(f.Severity) + " " + badgeName(f.Code, true)
		if where != "" {
			head += " · " + termtext.Sanitize(where)
		}
		lines = append(lines, wrapStyled(severityStyle(f.Severity, st), head, width)...)
		for _, l := range termtext.Wrap(termtext.Sanitize(f.Message), max(1, width-2)) {
			lines = append(lines, "  "+l)
		}
	}
	return lines
}

func (m *findingsModel) View() string {
	st := m.c.styles
	all := m.lines()
	m.clamp(len(all))
	n := 0
	if s := m.home.snap; s != nil {
		n = len(s.Findings)
	}
	title := "Findings (" + strconv.Itoa(n) + ")"
	if m.queue != "" {
		title += " · " + termtext.Sanitize(m.queue) + "'s first"
	}
	room := max(1, m.h-2)
	end := min(len(all), m.offset+room)
	if m.offset > 0 || end < len(all) {
		title += " · lines " + strconv.Itoa(m.offset+1) + "–" + strconv.Itoa(end) + " of " + strconv.Itoa(len(all))
	}
	lines := []string{st.Title.Render(termtext.Truncate(title, m.w)), ""}
	lines = append(lines, all[m.offset:end]...)
	return strings.Join(lines, "\n")
}

func (m *findingsModel) name() string { return "findings" }

func (m *findingsModel) ShortHelp() []key.Binding {
	k := m.c.keys
	return []key.Binding{keymap.As(k.Down, "scroll"), k.PageDown, k.Back, k.Help}
}

func (m *findingsModel) FullHelp() [][]key.Binding {
	k := m.c.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Back}, appKeys(m.c, false)}
}
