package ui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/style"
)

// openFindingsMsg opens the findings view, the given queue's first.
type openFindingsMsg struct{ queue string }

// findingsModel shows every finding of the snapshot in full, wrapped and
// scrolled: the ladders screen's details pane has only the rows the list
// leaves it, and a queue with many long findings does not fit there. It
// reads the ladders screen's snapshot when drawn, so a refresh shows here.
// A cursor selects a finding; enter goes back to the ladders screen on the
// queue it names.
type findingsModel struct {
	c      *common
	home   *homeModel
	w, h   int
	queue  string // shown first
	offset int
	sel    int // the selected finding
}

func newFindings(c *common, home *homeModel) *findingsModel {
	return &findingsModel{c: c, home: home}
}

func (m *findingsModel) open(msg openFindingsMsg) { m.queue, m.offset, m.sel = msg.queue, 0, 0 }

func (m *findingsModel) SetSize(w, h int)      { m.w, m.h = w, h }
func (m *findingsModel) Capturing() bool       { return false }
func (m *findingsModel) Back() (bool, tea.Cmd) { return false, nil }

func (m *findingsModel) room() int { return max(1, m.h-2) }

func (m *findingsModel) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k := m.c.keys
	fs := m.findings()
	lines, starts := renderFindings(fs, m.w, m.sel, m.c.styles)
	room := m.room()
	switch {
	case key.Matches(km, k.Down):
		m.sel++
	case key.Matches(km, k.Up):
		m.sel--
	case key.Matches(km, k.PageDown), key.Matches(km, k.PageUp):
		if key.Matches(km, k.PageDown) {
			m.offset += room
		} else {
			m.offset -= room
		}
		m.clamp(len(lines))
		m.sel = firstVisible(starts, m.offset)
		return nil
	case key.Matches(km, k.Top):
		m.sel = 0
	case key.Matches(km, k.Bottom):
		m.sel = len(fs) - 1
	case key.Matches(km, k.Open):
		return m.jump(fs)
	default:
		return nil
	}
	m.sel = max(0, min(m.sel, len(fs)-1))
	m.follow(starts, len(lines))
	return nil
}

// jump goes back to the ladders screen with the cursor on the selected
// finding's queue.
func (m *findingsModel) jump(fs []topology.Finding) tea.Cmd {
	if m.sel < 0 || m.sel >= len(fs) {
		return nil
	}
	q := fs[m.sel].Queue
	if q == "" {
		return navCmd(statusMsg{text: "this finding is about exchange " + termtext.Sanitize(fs[m.sel].Exchange) + ", not a queue"})
	}
	if !m.home.jumpTo(q) {
		return navCmd(statusMsg{text: "queue " + termtext.Sanitize(q) + " is not in the last snapshot", err: true})
	}
	return navCmd(backMsg{})
}

// follow scrolls so the selected finding shows, its head first.
func (m *findingsModel) follow(starts []int, n int) {
	if m.sel < 0 || m.sel >= len(starts) {
		m.clamp(n)
		return
	}
	start, end := starts[m.sel], n
	if m.sel+1 < len(starts) {
		end = starts[m.sel+1] - 1 // the blank line between findings
	}
	room := m.room()
	if end > m.offset+room {
		m.offset = end - room
	}
	if start < m.offset {
		m.offset = start
	}
	m.clamp(n)
}

// firstVisible is the first finding whose head is at or below line offset.
func firstVisible(starts []int, offset int) int {
	for i, s := range starts {
		if s >= offset {
			return i
		}
	}
	return max(0, len(starts)-1)
}

// clamp keeps the offset where the last page still fills the screen.
func (m *findingsModel) clamp(n int) {
	m.offset = max(0, min(m.offset, n-m.room()))
}

// findings are the snapshot's findings, the opening queue's first.
func (m *findingsModel) findings() []topology.Finding {
	if s := m.home.snap; s != nil {
		return findingsFirst(s.Findings, m.queue)
	}
	return nil
}

// findingsFirst orders findings with those of queue first, each group in
// its own (severity) order.
func findingsFirst(fs []topology.Finding, queue string) []topology.Finding {
	out := make([]topology.Finding, 0, len(fs))
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
// finding's name and where, then its whole message, wrapped at words. The
// selected one's head is marked (▸, reversed); starts are the line each
// finding begins at.
func renderFindings(fs []topology.Finding, width, sel int, st *style.Styles) (lines []string, starts []int) {
	if len(fs) == 0 {
		return []string{st.Muted.Render(termtext.Truncate("no findings", width))}, nil
	}
	for i, f := range fs {
		if i > 0 {
			lines = append(lines, "")
		}
		starts = append(starts, len(lines))
		where := f.Queue
		if where == "" {
			where = f.Exchange
		}
		if where == "" && f.Node != "" {
			where = "node " + f.Node
		}
		head := severityGlyph(f.Severity) + " " + badgeName(f.Code, true)
		if where != "" {
			head += " · " + termtext.Sanitize(where)
		}
		hs := severityStyle(f.Severity, st)
		marker := "  "
		if i == sel {
			hs, marker = st.Selected, "▸ "
		}
		for j, l := range termtext.Wrap(head, max(1, width-2)) {
			if j == 0 {
				lines = append(lines, hs.Render(marker+l))
			} else {
				lines = append(lines, hs.Render("  "+l))
			}
		}
		for _, l := range termtext.Wrap(termtext.Sanitize(f.Message), max(1, width-4)) {
			lines = append(lines, "    "+l)
		}
	}
	return lines, starts
}

func (m *findingsModel) View() string {
	st := m.c.styles
	fs := m.findings()
	all, _ := renderFindings(fs, m.w, m.sel, st)
	m.clamp(len(all))
	title := "Findings (" + strconv.Itoa(len(fs)) + ")"
	if m.queue != "" {
		title += " · " + termtext.Sanitize(m.queue) + "'s first"
	}
	end := min(len(all), m.offset+m.room())
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
	return []key.Binding{keymap.As(k.Open, "go to queue"), keymap.As(k.Down, "next"), k.PageDown, k.Back, k.Help}
}

func (m *findingsModel) FullHelp() [][]key.Binding {
	k := m.c.keys
	return [][]key.Binding{
		{keymap.As(k.Up, "previous finding"), keymap.As(k.Down, "next finding"), k.PageUp, k.PageDown, k.Top, k.Bottom},
		{keymap.As(k.Open, "go to its queue"), k.Back}, appKeys(m.c, false),
	}
}
