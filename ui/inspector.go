package ui

import (
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui/component/list"
)

// inspectorModel shows one message in full in a scrollable viewport.
type inspectorModel struct {
	c    *common
	w, h int

	queue   string
	message *broker.Message
	ladder  *retry.Ladder
	at      time.Time
	spec    moveSpec // what m opens the move dialog on
	vp      viewport.Model
}

func newInspector(c *common) *inspectorModel {
	return &inspectorModel{c: c, vp: viewport.New()}
}

func (m *inspectorModel) open(msg openMessageMsg) {
	m.queue, m.message, m.ladder, m.at, m.spec = msg.queue, msg.message, msg.ladder, msg.peeked, msg.spec
	if m.spec.queue == "" {
		m.spec = moveSpec{queue: msg.queue, ladder: msg.ladder}
	}
	m.spec.cursor, m.spec.single = msg.message, true
	m.render()
	m.vp.GotoTop()
}

func (m *inspectorModel) SetSize(w, h int) {
	m.w, m.h = w, h
	m.vp.SetWidth(w)
	m.vp.SetHeight(max(1, h-1))
	m.render()
}

// render lays the document out again (on open and on resize only).
func (m *inspectorModel) render() {
	if m.message == nil || m.w <= 0 {
		return
	}
	m.vp.SetContentLines(renderInspector(m.message, m.at, m.w, m.c.styles))
}

func (m *inspectorModel) Capturing() bool { return false }

func (m *inspectorModel) Back() (bool, tea.Cmd) { return false, nil }

func (m *inspectorModel) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok || m.message == nil {
		return nil
	}
	k := m.c.keys
	switch {
	case key.Matches(km, k.Up):
		m.vp.ScrollUp(1)
	case key.Matches(km, k.Down):
		m.vp.ScrollDown(1)
	case key.Matches(km, k.PageUp):
		m.vp.PageUp()
	case key.Matches(km, k.PageDown):
		m.vp.PageDown()
	case key.Matches(km, k.Top):
		m.vp.GotoTop()
	case key.Matches(km, k.Bottom):
		m.vp.GotoBottom()
	case key.Matches(km, k.Copy):
		return m.copyBody()
	case key.Matches(km, k.Move):
		return navCmd(openMoveMsg{spec: m.spec})
	}
	return nil
}

// copyBody puts the raw body on the clipboard through OSC 52 (the escape
// sequence base64-encodes it, so an untrusted body cannot act on the terminal).
func (m *inspectorModel) copyBody() tea.Cmd {
	body := messageBody(m.message)
	text := "copied " + present.Bytes(len(body)) + " to the clipboard (OSC 52; not every terminal supports it)"
	if len(body) < m.message.BodySize {
		text = "copied the first " + present.Bytes(len(body)) + " of " + present.Bytes(m.message.BodySize) + ": the peek kept only a preview"
	}
	return tea.Batch(tea.SetClipboard(string(body)), statusCmd(text, false))
}

func (m *inspectorModel) View() string {
	if m.message == nil {
		return ""
	}
	st := m.c.styles
	id := m.message.Properties.MessageID
	if id == "" {
		id = present.NoValue
	}
	title := "message #" + strconv.Itoa(m.message.Position) + " in " + termtext.Sanitize(m.queue) + " · id " + termtext.Sanitize(id)
	pct := strconv.Itoa(int(m.vp.ScrollPercent()*100)) + "%"
	title = termtext.Truncate(title, m.w-len(pct)-1)
	head := st.Strong.Render(title) + strings.Repeat(" ", max(1, m.w-termtext.Width(title)-len(pct))) + st.Muted.Render(pct)
	return head + "\n" + m.vp.View()
}

func (m *inspectorModel) name() string { return "message inspector" }

func (m *inspectorModel) ShortHelp() []key.Binding {
	k := m.c.keys
	// Most important first: the footer drops from the end to fit.
	return []key.Binding{k.Copy, k.Move, k.Back, k.PageDown, k.Down, k.Up, k.Help, k.Quit}
}

// FullHelp is every key that acts on the inspector: scrolling, copy, move.
func (m *inspectorModel) FullHelp() [][]key.Binding {
	k := m.c.keys
	return [][]key.Binding{list.NavKeys(m.c.keys), {k.Copy, k.Move, k.Back}, appKeys(m.c, true)}
}
