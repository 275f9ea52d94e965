package ui

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// consentClient is the fake, refusing a peek of limited unless forced, as
// the live client refuses a peek that counts a delivery toward a delivery
// limit (RabbitMQ before 4.3), and recording each peek's Force.
type consentClient struct {
	*fakeClient
	limited string
	forced  []bool
}

func (c *consentClient) Peek(ctx context.Context, queue string, opt broker.PeekOptions) (*broker.PeekResult, error) {
	if queue == c.limited {
		c.mu.Lock()
		c.forced = append(c.forced, opt.Force)
		s := c.snap
		c.mu.Unlock()
		q, _ := s.Queue(queue)
		if r := broker.PeekRefusal(q, s.BrokerVersion, broker.PeekCostOf(q, s.BrokerVersion), false, opt.Force, ""); r != nil {
			r.Limit = opt.Limit // as the live client says it
			return nil, r
		}
	}
	return c.fakeClient.Peek(ctx, queue, opt)
}

func (c *consentClient) peeksForced() []bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.forced)
}

// payments on RabbitMQ 4.1, a quorum queue with x-delivery-limit 5 and no
// consumers: each peek counts a delivery toward 5; its messages were
// delivered dlv times before.
func limitedPayments(t *testing.T, dlv ...int64) *consentClient {
	fc := newFake()
	fc.snap.BrokerVersion = "4.1.0"
	q := fixtureQueue(t, fc, "payments")
	q.Type, q.Consumers, q.Arguments, q.Ready = topology.QueueQuorum, 0, map[string]any{"x-delivery-limit": int64(5)}, 2
	res := &broker.PeekResult{Queue: "payments", Type: topology.QueueQuorum, Ready: 2, Total: 2}
	for i, n := range dlv {
		h := retry.Headers{}
		if n > 0 {
			h["x-delivery-count"] = n
		}
		res.Messages = append(res.Messages, broker.Message{Position: i, Headers: h, Properties: broker.Properties{MessageID: "p-" + string(rune('0'+i))}})
	}
	fc.peeks["payments"] = res
	return &consentClient{fakeClient: fc, limited: "payments"}
}

func openPayments(h *harness) {
	h.key("/")
	h.typeText("payments")
	h.key("enter", "enter")
}

// Where every peek counts a delivery toward a limit, every peek is asked
// for, re-peeks too, and the question's y is the way to say yes (the
// terminal UI has no --force); n peeks nothing.
func TestPeekThatCountsADeliveryIsAskedEveryTime(t *testing.T) {
	c := limitedPayments(t, 0, 1)
	h := newHarnessOn(t, c, Options{PeekLimit: 50}, 80, 24).start()
	openPayments(h)
	if h.m.top() != h.m.prompt || len(c.peeksForced()) != 0 {
		t.Fatalf("not asked first: peeks %v", c.peeksForced())
	}
	h.mustContain("enter/y peek")
	if got := flat(h.plain()); !strings.Contains(got, "each counts a delivery toward the delivery limit of 5") || strings.Contains(got, "--force") {
		t.Fatalf("question:\n%s", h.plain())
	}
	h.key("y")
	if got := c.peeksForced(); !slices.Equal(got, []bool{true}) || h.m.top() != h.m.browser {
		t.Fatalf("y: peeks %v, on %T", got, h.m.top())
	}
	// r: the peek is refused before it touches the queue, and asked for.
	h.key("r")
	if h.m.top() != h.m.prompt {
		t.Fatalf("r was not asked for: on %T\n%s", h.m.top(), h.plain())
	}
	if got := flat(h.plain()); !strings.Contains(got, "peek 2 of 2 in payments? all get redelivered=true, each counts a delivery") || strings.Contains(got, "--force") {
		t.Fatalf("re-peek question:\n%s", h.plain())
	}
	h.key("y")
	if got := c.peeksForced(); !slices.Equal(got, []bool{true, false, true}) || h.m.top() != h.m.browser {
		t.Fatalf("y to r: peeks %v, on %T", got, h.m.top())
	}
	h.key("r", "n")
	if got := c.peeksForced(); !slices.Equal(got, []bool{true, false, true, false}) || h.m.top() != h.m.browser {
		t.Fatalf("n to r: peeks %v, on %T", got, h.m.top())
	}
	h.mustContain("p-0", "p-1") // the last peek's messages stay shown
}

// Known from the last peek, without spending a delivery: another would
// dead-letter a message shown (delivered 4 times, limit 5). Refused, not
// asked.
func TestRepeekThatWouldDeadLetterIsRefused(t *testing.T) {
	c := limitedPayments(t, 4, 1)
	h := newHarnessOn(t, c, Options{PeekLimit: 50}, 80, 24).start()
	openPayments(h)
	h.key("y")
	h.key("r")
	if h.m.top() != h.m.browser {
		t.Fatalf("asked a peek that would dead-letter: on %T\n%s", h.m.top(), h.plain())
	}
	if got := flat(h.plain()); !strings.Contains(got, "refused: another peek would dead-letter 1 message ladder saw in it, delivered as often as the delivery limit of 5 allows") {
		t.Fatalf("status:\n%s", h.plain())
	}
	if got := c.peeksForced(); !slices.Equal(got, []bool{true, false}) {
		t.Fatalf("peeks %v", got)
	}
	// Opened again from home: the counts seen are remembered, the same
	// answer, nothing asked or peeked.
	h.key("esc", "enter") // home keeps its filter: the cursor is on payments
	if h.m.top() != h.m.home || !strings.Contains(flat(h.plain()), "another peek would dead-letter 1 message") {
		t.Fatalf("opened again: on %T\n%s", h.m.top(), h.plain())
	}
	if got := c.peeksForced(); !slices.Equal(got, []bool{true, false}) {
		t.Fatalf("peeks %v", got)
	}
}

// Read-only: a peek that counts a delivery is refused with one line saying
// why; nothing is peeked, nothing asked.
func TestReadOnlyRefusesAPeekThatCountsADelivery(t *testing.T) {
	c := limitedPayments(t, 0, 0)
	h := newHarnessOn(t, c, Options{PeekLimit: 50, ReadOnly: true}, 120, 24).start()
	openPayments(h)
	if h.m.top() != h.m.home || len(c.peeksForced()) != 0 {
		t.Fatalf("on %T, peeks %v", h.m.top(), c.peeksForced())
	}
	if got := flat(h.plain()); !strings.Contains(got, "peek payments: read-only: a peek of this quorum queue counts a delivery (x-delivery-count +1) toward its delivery limit of 5") {
		t.Fatalf("status:\n%s", h.plain())
	}
}
