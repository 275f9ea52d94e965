package ui

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui/component/list"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// inspectorModel shows one message in full in a scrollable viewport.
type inspectorModel struct {
	c    *common
	w, h int

	queue   string
	message *broker.Message
	ladder  *retry.Ladder
	at      time.Time
	spec    movedialog.Spec // what m opens the move dialog on
	vp      viewport.Model
	// header, when set, is the header shown in full (enter, then its
	// name); docAt is where the document was scrolled, for esc.
	header string
	docAt  int
}

// headerChosenMsg: the header of message to show in full.
type headerChosenMsg struct {
	message *broker.Message
	name    string
}

func newInspector(c *common) *inspectorModel {
	return &inspectorModel{c: c, vp: viewport.New()}
}

func (m *inspectorModel) open(msg openMessageMsg) {
	m.queue, m.message, m.ladder, m.at, m.spec = msg.queue, msg.message, msg.ladder, msg.peeked, msg.spec
	if m.spec.Queue == "" {
		m.spec = movedialog.Spec{Queue: msg.queue, Ladder: msg.ladder}
	}
	m.spec.Cursor, m.spec.Single = msg.message, true
	m.header = ""
	m.render()
	m.vp.GotoTop()
}

func (m *inspectorModel) SetSize(w, h int) {
	m.w, m.h = w, h
	m.vp.SetWidth(w)
	m.vp.SetHeight(max(1, h-1))
	m.render()
}

// render lays the document (or the header shown in full) out again: on
// open, on resize, on switching between them.
func (m *inspectorModel) render() {
	if m.message == nil || m.w <= 0 {
		return
	}
	if m.header != "" {
		m.vp.SetContentLines(renderHeaderValue(m.header, m.message.Headers[m.header], m.w, m.c.styles))
		return
	}
	m.vp.SetContentLines(renderInspector(m.message, m.at, m.w, m.c.keys.Open.Help().Key, m.c.styles))
}

func (m *inspectorModel) Capturing() bool { return false }

// Back leaves a header shown in full for the document, where it was.
func (m *inspectorModel) Back() (bool, tea.Cmd) {
	if m.header == "" {
		return false, nil
	}
	m.header = ""
	m.render()
	m.vp.SetYOffset(m.docAt)
	return true, nil
}

// pickHeader offers the message's headers; the one chosen is shown in full.
func (m *inspectorModel) pickHeader() tea.Cmd {
	if len(m.message.Headers) == 0 {
		return nil
	}
	message := m.message
	names := slices.Sorted(maps.Keys(message.Headers))
	return navCmd(openPickerMsg{
		title: "Show a header of message #" + strconv.Itoa(message.Position) + " in full",
		items: names,
		done:  func(name string) tea.Msg { return headerChosenMsg{message: message, name: name} },
	})
}

// showHeader shows header name of the message in full, scrolled to its top.
func (m *inspectorModel) showHeader(name string) {
	if _, ok := m.message.Headers[name]; !ok {
		return
	}
	if m.header == "" {
		m.docAt = m.vp.YOffset()
	}
	m.header = name
	m.render()
	m.vp.GotoTop()
}

func (m *inspectorModel) Update(msg tea.Msg) tea.Cmd {
	if h, ok := msg.(headerChosenMsg); ok {
		if h.message == m.message && m.message != nil {
			m.showHeader(h.name)
		}
		return nil
	}
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
	case key.Matches(km, k.Copy) && m.header != "":
		return m.copyHeader()
	case key.Matches(km, k.Copy):
		return m.copyBody()
	case key.Matches(km, k.Open) && m.header == "":
		return m.pickHeader()
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

// copyHeader puts the header shown in full on the clipboard (OSC 52): its
// text as it is, or a table's lines as shown.
func (m *inspectorModel) copyHeader() tea.Cmd {
	var text string
	switch v := m.message.Headers[m.header].(type) {
	case string:
		text = v
	case []byte:
		text = string(v)
	default:
		text = ansi.Strip(strings.Join(renderHeaderValue(m.header, v, m.w, m.c.styles), "\n"))
	}
	return tea.Batch(tea.SetClipboard(text), statusCmd("copied header "+termtext.Sanitize(m.header)+" ("+present.Bytes(len(text))+") to the clipboard (OSC 52; not every terminal supports it)", false))
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
	if m.header != "" {
		v := m.message.Headers[m.header]
		typ := amqpType(v)
		if headerIsJSON(v) {
			typ += ", JSON"
		}
		title = "header " + termtext.Sanitize(m.header) + " (" + typ + ", " + present.Plural(m.vp.TotalLineCount(), "line", "lines") + ") of message #" + strconv.Itoa(m.message.Position)
	}
	pct := strconv.Itoa(int(m.vp.ScrollPercent()*100)) + "%"
	title = termtext.Truncate(title, m.w-len(pct)-1)
	head := st.Strong.Render(title) + strings.Repeat(" ", max(1, m.w-termtext.Width(title)-len(pct))) + st.Muted.Render(pct)
	return head + "\n" + m.vp.View()
}

func (m *inspectorModel) name() string { return "message inspector" }

func (m *inspectorModel) ShortHelp() []key.Binding {
	k := m.c.keys
	// Most important first: the footer drops from the end to fit.
	if m.header != "" {
		return []key.Binding{keymap.As(k.Copy, "copy value"), keymap.As(k.Back, "message"), k.PageDown, k.Down, k.Up, k.Move, k.Help, k.Quit}
	}
	out := []key.Binding{k.Copy, k.Move}
	if m.message != nil && len(m.message.Headers) > 0 {
		out = append(out, keymap.As(k.Open, "full header"))
	}
	return append(out, k.Back, k.PageDown, k.Down, k.Up, k.Help, k.Quit)
}

// FullHelp is every key that acts on the inspector: scrolling, copy, a
// header in full, move.
func (m *inspectorModel) FullHelp() [][]key.Binding {
	k := m.c.keys
	if m.header != "" {
		return [][]key.Binding{list.NavKeys(m.c.keys), {keymap.As(k.Copy, "copy value"), k.Move, keymap.As(k.Back, "message")}, appKeys(m.c, true)}
	}
	act := []key.Binding{k.Copy, k.Move, k.Back}
	if m.message != nil && len(m.message.Headers) > 0 {
		act = append(act, keymap.As(k.Open, "full header"))
	}
	return [][]key.Binding{list.NavKeys(m.c.keys), act, appKeys(m.c, true)}
}
