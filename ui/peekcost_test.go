package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Opening a queue peeks it, and a peek is consume-then-requeue: a queue
// with consumers asks first, and is not peeked until the answer is yes.

func peekedQueues(fc *fakeClient) []string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return slices.Clone(fc.peeked)
}

// fixtureQueue finds a queue of fc's snapshot, to change it before start.
func fixtureQueue(t *testing.T, fc *fakeClient, name string) *topology.Queue {
	t.Helper()
	qs := fc.snap.Topology.Queues
	i := slices.IndexFunc(qs, func(q topology.Queue) bool { return q.Name == name })
	if i < 0 {
		t.Fatalf("no queue %q in the fixture", name)
	}
	return &qs[i]
}

// flat is the frame's words in one line, so wrapped text reads whole.
func flat(frame string) string { return strings.Join(strings.Fields(frame), " ") }

func TestOpeningAQueueWithConsumersAsksBeforePeeking(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	if got := homeCursor(h); got != "orders" {
		t.Fatalf("cursor on %q", got)
	}
	h.key("enter")
	if got := peekedQueues(fc); len(got) != 0 {
		t.Fatalf("peeked %v before the answer", got)
	}
	if h.m.top() != h.m.prompt {
		t.Fatalf("enter opened %s, not the question", h.m.top().(interface{ name() string }).name())
	}
	if got := flat(h.plain()); !strings.Contains(got, "peek 1000 of 1204 in orders? 4 consumers lose them for the moment, all get redelivered=true") {
		t.Fatalf("question not asked:\n%s", h.plain())
	}
	h.mustContain("enter/y peek", "esc/n cancel")
	h.mustNotContain("delivery limit") // a classic queue has none
	// q is a letter here: it neither quits nor answers.
	if _, cmd := h.m.Update(keyMsg("q")); cmd != nil {
		if _, quit := cmd().(tea.QuitMsg); quit {
			t.Fatal("q quit the program from the question")
		}
	}
	h.key("q", "?", "x")
	if h.m.top() != h.m.prompt || len(peekedQueues(fc)) != 0 {
		t.Fatal("a key other than the answers acted on the question")
	}
	h.key("enter")
	if got := peekedQueues(fc); !slices.Equal(got, []string{"orders"}) {
		t.Fatalf("peeked %v after yes", got)
	}
	if h.m.top() != h.m.browser || h.m.browser.queue != "orders" {
		t.Fatal("yes did not open the browser")
	}
	// A re-peek of the queue agreed to does not ask again.
	h.key("r")
	if got := peekedQueues(fc); !slices.Equal(got, []string{"orders", "orders"}) || h.m.top() != h.m.browser {
		t.Fatalf("r: peeked %v, on %T", got, h.m.top())
	}
	// Back home and in again asks again: another browser session.
	h.key("esc", "enter")
	if h.m.top() != h.m.prompt || len(peekedQueues(fc)) != 2 {
		t.Fatal("opening the queue again did not ask")
	}
}

func TestYAnswersThePeekQuestion(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("enter")
	if h.m.top() != h.m.prompt {
		t.Fatal("not asked")
	}
	h.key("y")
	if got := peekedQueues(fc); !slices.Equal(got, []string{"orders"}) || h.m.top() != h.m.browser {
		t.Fatalf("y: peeked %v", got)
	}
}

func TestCancellingThePeekQuestionStaysHome(t *testing.T) {
	for _, cancel := range []string{"esc", "n"} {
		t.Run(cancel, func(t *testing.T) {
			fc := newFake()
			h := newHarness(t, fc, Options{}, 80, 24).start()
			h.key("enter", cancel)
			if got := peekedQueues(fc); len(got) != 0 {
				t.Fatalf("peeked %v after %s", got, cancel)
			}
			if h.m.top() != h.m.home || len(h.m.stack) != 1 {
				t.Fatalf("%s left %d screens, top %T", cancel, len(h.m.stack), h.m.top())
			}
			if got := homeCursor(h); got != "orders" {
				t.Fatalf("cursor moved to %q", got)
			}
			h.mustContain("LADDERS")
		})
	}
}

func TestQueueWithoutConsumersPeeksAtOnce(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down")
	if got := homeCursor(h); got != "orders.dlq" {
		t.Fatalf("cursor on %q", got)
	}
	h.key("enter")
	if got := peekedQueues(fc); !slices.Equal(got, []string{"orders.dlq"}) || h.m.top() != h.m.browser {
		t.Fatalf("peeked %v, on %T", got, h.m.top())
	}
	h.mustNotContain("for the moment")
}

// A quorum queue asks even without consumers when a peek counts a delivery
// toward a delivery limit: before 4.3 (no costless browse), its own, or
// from 4.0 the default of 20; 3.x has no default, so an unconsumed quorum
// queue without a limit opens at once; 4.3 browses without counting.
func TestQuorumQueueUnderADeliveryLimitAsks(t *testing.T) {
	const seen = " (one delivered %s times already is"
	for _, tc := range []struct {
		name, version string
		args          map[string]any
		want          string // "" opens at once
	}{
		{"4.0–4.2 default", "4.1.0", nil, "each counts a delivery toward the default delivery limit of 20" + fmt.Sprintf(seen, "20")},
		{"own limit", "4.1.0", map[string]any{"x-delivery-limit": int64(5)}, "each counts a delivery toward the delivery limit of 5" + fmt.Sprintf(seen, "5")},
		{"3.x own limit", "3.13.7", map[string]any{"x-delivery-limit": int64(7)}, "each counts a delivery toward the delivery limit of 7" + fmt.Sprintf(seen, "7")},
		{"3.x no limit", "3.13.7", nil, ""},
		{"4.x unlimited", "4.1.0", map[string]any{"x-delivery-limit": int64(-1)}, ""},
		{"4.3 own limit", "4.3.6", map[string]any{"x-delivery-limit": int64(3)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := newFake()
			fc.snap.BrokerVersion = tc.version
			q := fixtureQueue(t, fc, "payments")
			q.Consumers, q.Arguments, q.Ready = 0, tc.args, 40
			h := newHarness(t, fc, Options{PeekLimit: 50}, 80, 24).start()
			h.key("/")
			h.typeText("payments")
			h.key("enter")
			if got := homeCursor(h); got != "payments" {
				t.Fatalf("cursor on %q", got)
			}
			h.key("enter")
			if tc.want == "" {
				if got := peekedQueues(fc); !slices.Equal(got, []string{"payments"}) || h.m.top() != h.m.browser {
					t.Fatalf("peeked %v, on %T: want it opened at once", got, h.m.top())
				}
				return
			}
			if got := peekedQueues(fc); len(got) != 0 || h.m.top() != h.m.prompt {
				t.Fatalf("peeked %v before the answer", got)
			}
			got := flat(h.plain())
			if !strings.Contains(got, "peek 40 of 40 in payments? all get redelivered=true, "+tc.want) {
				t.Fatalf("question lacks %q:\n%s", tc.want, h.plain())
			}
			if strings.Contains(got, "lose them") {
				t.Fatalf("no consumers, yet the question says some lose them:\n%s", h.plain())
			}
		})
	}
}

// A queue whose consumers the broker did not report may have some: asked.
func TestUnknownConsumersAsk(t *testing.T) {
	fc := newFake()
	q := fixtureQueue(t, fc, "orders.dlq")
	q.ConsumersUnknown = true
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("down", "down", "down", "enter")
	if len(peekedQueues(fc)) != 0 || h.m.top() != h.m.prompt {
		t.Fatal("a queue with unknown consumers was peeked without asking")
	}
	if got := flat(h.plain()); !strings.Contains(got, "peek 12 of 12 in orders.dlq? its consumers, if any, lose them for the moment") {
		t.Fatalf("question:\n%s", h.plain())
	}
}

// Streams are read by offset: nobody loses anything, nothing is asked.
func TestStreamWithConsumersOpensAtOnce(t *testing.T) {
	fc := newFake()
	fixtureQueue(t, fc, "orders").Type = topology.QueueStream
	h := newHarness(t, fc, Options{}, 80, 24).start()
	h.key("enter")
	if got := peekedQueues(fc); !slices.Equal(got, []string{"orders"}) {
		t.Fatalf("peeked %v", got)
	}
}

// At 80 columns the question fits: a long, hostile name is sanitised and
// cut to its share of the line, the cost is wrapped and reads whole.
func TestPeekQuestionFitsAndSanitisesAt80(t *testing.T) {
	fc := newFake()
	long := "evil\x1b]0;pwned\x07" + strings.Repeat("very.long.queue.name.", 8)
	q := fixtureQueue(t, fc, evilQueue)
	q.Name, q.Consumers, q.Ready = long, 3, 14302
	h := newHarness(t, fc, Options{PeekLimit: 50}, 80, 24).start()
	h.key("/")
	h.typeText("evil")
	h.key("enter", "enter")
	if h.m.top() != h.m.prompt {
		t.Fatalf("on %T, not the question", h.m.top())
	}
	raw := h.raw()
	if strings.Contains(raw, "\x07") || strings.Contains(raw, "]0;pwned") && !strings.Contains(raw, `\x1b]0;pwned`) {
		t.Fatalf("the name reached the terminal raw: %q", raw)
	}
	for i, line := range strings.Split(h.plain(), "\n") {
		if w := termtext.Width(line); w > 80 {
			t.Fatalf("line %d is %d wide: %q", i, w, line)
		}
	}
	got := flat(h.plain())
	for _, want := range []string{`peek 50 of 14302 in evil\x1b]0;pwned\x07very`, "…? 3 consumers lose them for the moment, all get redelivered=true"} {
		if !strings.Contains(got, want) {
			t.Fatalf("question lacks %q:\n%s", want, h.plain())
		}
	}
	h.mustContain("enter/y peek · esc/n cancel")
}
