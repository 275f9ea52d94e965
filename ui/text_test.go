package ui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// joined is the frame's text with its line breaks taken out, so a phrase
// wrapped across lines is found whole.
func joined(out string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		b.WriteString(strings.TrimSpace(l) + " ")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// A long status message wraps onto the rows above the footer instead of
// losing its end (the cause) at 80 columns; the frame stays 24 lines.
func TestStatusWrapsAt80(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	msg := "unblock orders.dlq: it has no dead-letter exchange, so its messages expire into nothing: there is nowhere to send them after their delay"
	h.send(statusMsg{text: msg, err: true})
	out := h.plain()
	lines := strings.Split(out, "\n")
	if len(lines) != 24 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if termtext.Width(l) > 80 {
			t.Fatalf("line wider than 80: %q", l)
		}
	}
	if !strings.Contains(joined(out), msg) {
		t.Fatalf("status cut:\n%s", out)
	}
	// The footer is still the last line, the title the first.
	if !strings.Contains(lines[23], "quit") || !strings.HasPrefix(lines[0], "ladder") {
		t.Fatalf("chrome moved:\n%s", out)
	}
	// A key acknowledges it: the body gets its rows back.
	h.key("down")
	if strings.Contains(h.plain(), "nowhere to send") {
		t.Fatal("status not cleared")
	}
}

// A refused connection keeps its cause visible at 80 columns.
func TestUnreachableCauseVisibleAt80(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	err := errors.New(`Get "http://127.0.0.1:15999/api/overview": dial tcp 127.0.0.1:15999: connect: connection refused`)
	h.send(snapshotMsg{gen: h.m.gen, err: err})
	if !strings.Contains(joined(h.plain()), "connect: connection refused") {
		t.Fatalf("cause cut:\n%s", h.plain())
	}
}

// The dump and where prompts show their hints whole at 80 columns.
func TestPromptHintsWrapAt80(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"d", "an existing file is refused"},
		{"w", "error~RE header:N=V body~RE age>1h retries>=3"},
	} {
		h := newHarness(t, newFake(), Options{}, 80, 24).start()
		h.send(openQueueMsg{queue: "orders.dlq"})
		h.key(tc.key)
		if out := h.plain(); !strings.Contains(joined(out), tc.want) {
			t.Errorf("%s: hint cut:\n%s", tc.key, out)
		}
	}
}

// Due times are the peek's and do not count down: the browser and the
// inspector say when they were true, the instant the title names.
func TestDueTimesSayAsOf(t *testing.T) {
	fc := newFake()
	at := fixedNow.Add(-7 * time.Second)
	fc.peeks["orders.dlq"].PeekedAt = at
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.send(openQueueMsg{queue: "orders.dlq"})
	clock := present.Clock(at)
	h.mustContain("snapshot "+clock, "due times as of the peek at "+clock+", from publish timestamps", "peeked 3 of 8 (3 ready) at "+clock)
	h.key("down", "enter")
	if out := joined(h.plain()); !strings.Contains(out, "due as of "+clock+", in ") {
		t.Fatalf("inspector due:\n%s", h.plain())
	}
}

// x-ladder-moves in words: "once", "3 times", never "time(s)".
func TestMovedTimesWording(t *testing.T) {
	st := newStylesForTest()
	for v, want := range map[any]string{int64(1): "once by ladder", int32(3): "3 times by ladder"} {
		m := fixtureMessage(0)
		m.Headers[moveplan.HeaderMoves] = v
		out := joined(ansi.Strip(strings.Join(renderRetrySummary(&m, fixedNow, 120, st), "\n")))
		if !strings.Contains(out, want) || strings.Contains(out, "(s)") {
			t.Errorf("%v: %s", v, out)
		}
	}
}

// One warning glyph everywhere: the browser's side-effect banner uses the
// glyph home's warning findings do.
func TestOneWarningGlyph(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.mustContain(severityGlyph(topology.SeverityWarning) + "HOL")
	h.send(openQueueMsg{queue: "orders.dlq"})
	h.mustContain(severityGlyph(topology.SeverityWarning) + " every browsed message was requeued")
	h.mustNotContain("⚠")
}

// A login refused from the start: the home screen says what the title
// says, not that the broker has not answered.
func TestRefusedLoginHomeSaysSo(t *testing.T) {
	fc := newFake()
	fc.snapErr = &broker.ConnError{Msg: "login refused for user guest at 127.0.0.1:5672", Kind: broker.ErrLoginRefused}
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.mustContain("○ login refused · r retries", "no data: login refused · r retries")
	h.mustNotContain("has not answered")
}

// Five long findings on one queue do not fit the details pane at 80×24:
// the pane says how to read the rest, and f opens every finding in full,
// wrapped, scrolled with the arrows; esc goes back to the ladders.
func TestManyFindingsReachableAt80x24(t *testing.T) {
	fc := newFake()
	long := "messages wait here for a very long time because the head of the queue holds a delay far longer than every message behind it, and nothing expires until it does"
	codes := []string{topology.CodeHoLBlocked, topology.CodeHoLRisk, topology.CodeRequeueStorm, topology.CodeNoConsumers, topology.CodeWaitQueueConsumers}
	for i, c := range codes {
		fc.snap.Findings = append(fc.snap.Findings, topology.Finding{Code: c, Severity: topology.SeverityWarning, Queue: "orders.retry.1m",
			Message: "finding " + string(rune('A'+i)) + ": " + long + " (end " + string(rune('A'+i)) + ")"})
	}
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down")
	h.mustContain("▸ ├─orders.retry.1m", "more: f shows every finding in full")
	// The footer lists it where it fits.
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	if foot := strings.Split(h.plain(), "\n")[47]; !strings.Contains(foot, "f findings in full") {
		t.Errorf("footer at 160 lacks the findings key: %q", foot)
	}
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.key("f")
	if h.m.top() != h.m.findings {
		t.Fatalf("f did not open the findings:\n%s", h.plain())
	}
	// Scroll through: every finding's whole text is seen on some page.
	seen := ""
	for range 40 {
		out := h.plain()
		for _, l := range strings.Split(out, "\n") {
			if termtext.Width(l) > 80 {
				t.Fatalf("line wider than 80: %q", l)
			}
		}
		lines := strings.Split(out, "\n")
		seen += "\n" + strings.Join(lines[3:len(lines)-2], "\n") // the body, past the title
		h.key("down")
	}
	all := joined(seen)
	for i := range codes {
		e := string(rune('A' + i))
		if !strings.Contains(all, "finding "+e+": "+long+" (end "+e+")") {
			t.Errorf("finding %s not shown in full:\n%s", e, seen)
		}
	}
	// The selected queue's first: the first finding listed is one of its.
	h.key("home")
	if body := strings.Split(h.plain(), "\n")[3]; !strings.Contains(body, "orders.retry.1m") {
		t.Errorf("first finding %q", body)
	}
	h.key("?")
	h.mustContain("Keys: findings", "page down")
	h.key("esc", "esc")
	if h.m.top() != h.m.home {
		t.Fatal("esc did not go back to the ladders")
	}
	h.key("?")
	h.mustContain("findings in full")
}

// "reading the queue…" and "dumping…" are shown before the work starts,
// in sequence: batched, a quick error could arrive first and be
// overwritten by them (the demo's u on orders.dlq showed "reading the
// queue…" for good). tea.Sequence's message type is the guarantee.
func TestProgressStatusBeforeTheWork(t *testing.T) {
	// Each on a browser of its own: the browser reads one thing at a time.
	for what, start := range map[string]func(b *browserModel) tea.Cmd{
		"unblock": func(b *browserModel) tea.Cmd { return b.prepareUnblock() },
		"dump": func(b *browserModel) tea.Cmd {
			return b.Update(dumpAskMsg{queue: "orders.dlq", file: t.TempDir() + "/d.jsonl"})
		},
	} {
		h := newHarness(t, newFake(), Options{}, 80, 24).start()
		h.send(openQueueMsg{queue: "orders.dlq"})
		if got := fmt.Sprintf("%T", start(h.m.browser)()); got != "tea.sequenceMsg" {
			t.Errorf("%s: status and work run as %s, want in sequence", what, got)
		}
	}
}

// A prompt or dialog over the browser leaves the title saying snapshot:
// the messages under it are the peek's, not live.
func TestSnapshotTitleUnderAPrompt(t *testing.T) {
	h := newHarness(t, newFake(), Options{}, 80, 24).start()
	h.send(openQueueMsg{queue: "orders.dlq"})
	for _, k := range []string{"w", "d", "m"} {
		h.key(k)
		if title := strings.Split(h.plain(), "\n")[0]; !strings.Contains(title, "snapshot 12:00:00") || strings.Contains(title, "live") {
			t.Errorf("%s: title %q", k, title)
		}
		h.key("esc")
	}
	h.key("esc")
	h.mustContain("● live")
}
