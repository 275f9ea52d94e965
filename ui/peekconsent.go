package ui

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/preview"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// A peek that counts a delivery toward a quorum queue's delivery limit
// (no costless browse: RabbitMQ before 4.3, or AMQP 1.0 refused) runs only
// with the user's yes, one peek at a time: the broker refuses it otherwise,
// before touching the queue, and the root turns that refusal into the
// question. A re-peek that the last peek's counts say would dead-letter a
// message is refused outright; under read-only mode, so is every peek that
// counts a delivery.

// peekConsentMsg: the user said yes to one more peek of queue, at its cost.
type peekConsentMsg struct{ queue string }

// rememberCounts keeps the delivery counts a peek of queue saw (only
// those, in queue order), so that the next read of it — a re-peek, the
// queue opened again, a dump, a preview — is judged by them without
// spending a delivery.
func (m *Model) rememberCounts(queue string, res *broker.PeekResult) {
	if res == nil {
		return
	}
	seen := &broker.PeekResult{Queue: queue}
	for _, msg := range res.Messages {
		seen.Messages = append(seen.Messages, broker.Message{Headers: retry.Headers{"x-delivery-count": countOf(msg.Headers["x-delivery-count"])}})
	}
	if m.seenCounts == nil {
		m.seenCounts = map[string]*broker.PeekResult{}
	}
	m.seenCounts[m.countsKey(queue)] = seen
}

// rememberRead counts one more delivery on the first n messages whose
// counts are kept for queue (n < 0: all): a read that hands its messages
// on or plans them (a dump, a scan, a move's preview) delivered them again
// where a read counts one, so the next read is judged by what they carry
// now. Where reads count nothing the counts are never read.
func (m *Model) rememberRead(queue string, n int) {
	seen := m.seenCounts[m.countsKey(queue)]
	if seen == nil {
		return
	}
	for i := range seen.Messages {
		if n >= 0 && i >= n {
			break
		}
		h := seen.Messages[i].Headers
		h["x-delivery-count"] = countOf(h["x-delivery-count"]) + 1
	}
}

// countOf is a delivery count header's value (0 when absent).
func countOf(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case int:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	}
	return 0
}

func (m *Model) countsKey(queue string) string { return m.client.Vhost() + "\x00" + queue }

// wouldDeadLetter is why another peek of queue is refused: the last peek
// of it saw messages that one more would dead-letter ("" when none).
func (m *Model) wouldDeadLetter(queue string, q topology.Queue, version string) string {
	return m.readWouldDeadLetter("peek", "another peek", queue, q, version)
}

// readWouldDeadLetter is why a read of queue (verb: the action, "dump";
// subject: its read, "its read") is refused: the last read of it ladder
// saw (a peek, an unblock's look) showed messages that one more read would
// dead-letter ("" when none).
func (m *Model) readWouldDeadLetter(verb, subject, queue string, q topology.Queue, version string) string {
	n := broker.RepeekDeadLetters(m.seenCounts[m.countsKey(queue)], q, version)
	if n == 0 {
		return ""
	}
	c := broker.PeekCostOf(q, version)
	return verb + " " + termtext.Sanitize(queue) + ": refused: " + subject + " would dead-letter " + present.Plural(n, "message", "messages") +
		" ladder saw in it, delivered as often as the delivery limit of " + strconv.FormatInt(c.DeliveryLimit, 10) + " allows"
}

// snapQueue is queue as the last snapshot has it.
func (m *Model) snapQueue(queue string) (topology.Queue, string, bool) {
	s := m.home.snap
	if s == nil {
		return topology.Queue{}, "", false
	}
	i := slices.IndexFunc(s.Topology.Queues, func(q topology.Queue) bool { return q.Name == queue })
	if i < 0 {
		return topology.Queue{}, "", false
	}
	return s.Topology.Queues[i], s.BrokerVersion, true
}

// peekRefused is why opening queue would not peek it ("" when it would):
// under read-only mode, the line the peek itself would refuse with; and a
// peek the last one's counts say would dead-letter messages.
func (m *Model) peekRefused(queue string) string {
	q, version, ok := m.snapQueue(queue)
	if !ok {
		return ""
	}
	if m.c.readOnly {
		if r := broker.PeekRefusal(q, version, broker.PeekCostOf(q, version), true, false, ""); r != nil {
			return termtext.Sanitize(r.Error())
		}
		return ""
	}
	return m.wouldDeadLetter(queue, q, version)
}

// peekNeedsConsent handles the browser's peek refused for want of a yes:
// it asks (or, when the last peek's counts say another would dead-letter
// messages, refuses with that), and hands the refusal to the screens.
// handled is false for any other answer.
func (m *Model) peekNeedsConsent(msg peekMsg) (tea.Cmd, bool) {
	var refused *broker.PeekRefused
	if msg.err == nil || !errors.As(msg.err, &refused) || !errors.Is(msg.err, broker.ErrPeekNeedsConsent) ||
		msg.id != m.browser.id || msg.queue != m.browser.queue {
		return nil, false
	}
	q, version, ok := m.snapQueue(msg.queue)
	if !ok {
		q = topology.Queue{Name: msg.queue}
	}
	name := termtext.Sanitize(msg.queue)
	// The browser says "peek QUEUE: " before the error: the reason alone.
	msg.err = errors.New(refused.Why)
	if why := m.wouldDeadLetter(msg.queue, q, version); why != "" {
		// Known without a delivery: say that, not "cannot be seen".
		msg.err = errors.New(strings.TrimPrefix(why, "peek "+name+": "))
	} else {
		ready := q.Ready
		if m.browser.res != nil {
			ready = m.browser.res.Ready
		}
		queue := msg.queue
		m.prompt.open(openPromptMsg{
			title:   present.PeekQuestion(termtext.Truncate(name, max(16, m.w/3)), m.c.peekLimit, ready, refused.Cost),
			confirm: true, yes: "peek",
			done: func(string) tea.Msg { return peekConsentMsg{queue: queue} },
		})
		m.push(m.prompt)
	}
	var cmds []tea.Cmd
	for _, s := range m.screens() {
		cmds = append(cmds, s.Update(msg))
	}
	return tea.Batch(cmds...), true
}

// peekConsented runs the peek the user said yes to, if the browser is
// still on that queue.
func (m *Model) peekConsented(msg peekConsentMsg) tea.Cmd {
	if m.top() != screen(m.browser) || m.browser.queue != msg.queue {
		return nil
	}
	m.browser.force = true
	return m.browser.peek()
}

// Reads other than the browser's peek follow the same rules: the dump (d)
// and the grouping scan (S) ask before they start, from the snapshot, when
// each read counts a delivery toward a delivery limit; a move's preview and
// an unblock's look ask when the broker refused them for that cost (nothing
// was touched). Each is refused outright when the counts ladder last saw
// show that it would dead-letter a message, and under read-only mode.

// costlyReadMsg asks for a yes to a read of queue that counts a delivery
// toward a delivery limit: title is the question, then what runs on yes.
// verb and subject word a refusal ("dump", "its read").
type costlyReadMsg struct {
	queue, verb, subject string
	title, yes           string
	then                 tea.Msg
}

// previewConsentMsg: yes to the move dialog's preview id at its cost.
type previewConsentMsg struct{ id int }

// unblockConsentMsg: yes to an unblock's reads of queue at their cost.
type unblockConsentMsg struct {
	queue string
	home  bool
}

// costRefusal is the refusal of a read for want of a yes to the delivery
// it would count toward a delivery limit, or nil.
func costRefusal(err error) *broker.PeekRefused {
	var refused *broker.PeekRefused
	if err == nil || !errors.As(err, &refused) || !errors.Is(err, broker.ErrPeekNeedsConsent) {
		return nil
	}
	return refused
}

// askRead puts question to the user, over the screens; yes sends then.
func (m *Model) askRead(title, yes string, then tea.Msg) {
	m.prompt.open(openPromptMsg{title: title, confirm: true, yes: yes, done: func(string) tea.Msg { return then }})
	m.push(m.prompt)
}

// readConsent handles the reads that count a delivery toward a delivery
// limit, but the browser's peek (peekNeedsConsent): handled is false for
// every other message.
func (m *Model) readConsent(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case costlyReadMsg:
		q, version, ok := m.snapQueue(msg.queue)
		if ok && m.c.readOnly {
			if r := broker.PeekRefusal(q, version, broker.PeekCostOf(q, version), true, false, ""); r != nil {
				return m.setStatus(msg.verb+" "+termtext.Sanitize(msg.queue)+": "+termtext.Sanitize(r.Why), true), true
			}
		}
		if ok {
			if why := m.readWouldDeadLetter(msg.verb, msg.subject, msg.queue, q, version); why != "" {
				return m.setStatus(why, true), true
			}
		}
		m.askRead(msg.title, msg.yes, msg.then)
		return nil, true
	case dumpDoneMsg:
		if msg.rep != nil && msg.rep.Written > 0 {
			m.rememberRead(msg.rep.Queue, -1)
		}
		return nil, false
	case groupScanDoneMsg:
		if msg.scan != nil {
			m.rememberRead(msg.queue, -1)
		}
		return nil, false
	case movedialog.DoneMsg:
		if msg.DryRun && msg.Err == nil && msg.ID == m.move.ID() && m.move.Spec().ReplayFile == "" {
			m.rememberRead(m.move.Spec().Queue, preview.Reads(usecase.PreviewRequest(m.move.Request(), false), math.MaxInt32))
		}
		refused := costRefusal(msg.Err)
		if !msg.DryRun || refused == nil || msg.ID != m.move.ID() || m.top() != screen(m.move) {
			return nil, false
		}
		queue := m.move.Spec().Queue
		q, version, _ := m.snapQueue(queue)
		if why := m.readWouldDeadLetter("move", "its preview", queue, q, version); why != "" {
			// Known without a delivery: say that, not "cannot be seen".
			msg.Err = errors.New(strings.TrimPrefix(why, "move "+termtext.Sanitize(queue)+": "))
		} else {
			msg.Err = errors.New(refused.Why)
			name := termtext.Truncate(termtext.Sanitize(queue), max(16, m.w/3))
			m.askRead("The move's preview reads the queue first: "+present.PeekQuestion(name, max(1, refused.Limit), refused.Ready, refused.Cost),
				"preview", previewConsentMsg{id: msg.ID})
		}
		return m.toScreens(msg), true
	case previewConsentMsg:
		if m.top() != screen(m.move) {
			return nil, true
		}
		return m.move.ForcePreview(msg.id), true
	case unblockReadyMsg:
		if msg.peek != nil {
			m.rememberCounts(msg.queue, msg.peek)
		}
		refused := costRefusal(msg.err)
		if refused == nil || (msg.home && m.top() != screen(m.home)) ||
			(!msg.home && (m.top() != screen(m.browser) || m.browser.queue != msg.queue)) {
			return nil, false // no question: the screens take it (the browser's read ends)
		}
		q, version, _ := m.snapQueue(msg.queue)
		if why := m.readWouldDeadLetter("unblock", "its look", msg.queue, q, version); why != "" {
			msg.err = errors.New(why)
		} else {
			name := termtext.Truncate(termtext.Sanitize(msg.queue), max(16, m.w/3))
			m.askRead("ladder unblock reads the queue twice (its look, then the move's preview): "+
				present.PeekQuestion(name, max(1, refused.Limit), refused.Ready, refused.Cost),
				"unblock", unblockConsentMsg{queue: msg.queue, home: msg.home})
		}
		return m.toScreens(msg), true
	case unblockConsentMsg:
		if msg.home {
			if m.top() != screen(m.home) {
				return nil, true
			}
			return m.browser.prepareUnblockFor(msg.queue, true, true), true
		}
		if m.top() != screen(m.browser) || m.browser.queue != msg.queue {
			return nil, true
		}
		return m.browser.prepareUnblockForced(), true
	}
	return nil, false
}

// toScreens hands msg to every screen, as the root does with data.
func (m *Model) toScreens(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, s := range m.screens() {
		cmds = append(cmds, s.Update(msg))
	}
	return tea.Batch(cmds...)
}
