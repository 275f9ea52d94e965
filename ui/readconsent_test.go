package ui

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/preview"
	"github.com/ladder-tui/ladder/retry/topology"
)

// previewClient is consentClient whose move previews (dry runs) of the
// limited queue read it by the same rule, as the live client's do: refused
// before touching it unless the request says yes (ForcePeek).
type previewClient struct {
	*consentClient
	previews []bool
}

func (c *previewClient) Move(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	if req.DryRun && req.From == c.limited {
		c.mu.Lock()
		c.previews = append(c.previews, req.ForcePeek)
		s := c.snap
		c.mu.Unlock()
		q, _ := s.Queue(req.From)
		if r := broker.PeekRefusal(q, s.BrokerVersion, broker.PeekCostOf(q, s.BrokerVersion), false, req.ForcePeek, ""); r != nil {
			r.Limit = preview.Reads(req, int(q.Ready))
			return broker.NewMoveReport(req), fmt.Errorf("dry run: %w", r)
		}
	}
	return c.consentClient.Move(ctx, req, progress)
}

func (c *previewClient) forcedPreviews() []bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.previews)
}

// flatBox is flat, a dialog's frame left out.
func flatBox(frame string) string { return flat(strings.ReplaceAll(frame, "│", " ")) }

func limitedPreviews(t *testing.T, dlv ...int64) *previewClient {
	return &previewClient{consentClient: limitedPayments(t, dlv...)}
}

// The move dialog's preview reads the queue as a peek does: where that
// counts a delivery toward a delivery limit it is refused before touching
// the queue and asked for with the peek's question; y previews, n leaves
// the refusal shown.
func TestMovePreviewThatCountsADeliveryIsAsked(t *testing.T) {
	c := limitedPreviews(t, 0, 1)
	h := newHarnessOn(t, c, Options{PeekLimit: 50}, 100, 30).start()
	openPayments(h)
	h.key("y", "m", "enter")
	if h.m.top() != h.m.prompt {
		t.Fatalf("the preview was not asked for: on %T\n%s", h.m.top(), h.plain())
	}
	if got := flat(h.plain()); !strings.Contains(got, "The move's preview reads the queue first: peek 1 of 2 in payments? all get redelivered=true, each counts a delivery toward the delivery limit of 5") {
		t.Fatalf("question:\n%s", h.plain())
	}
	h.key("n")
	if got := c.forcedPreviews(); !slices.Equal(got, []bool{false}) || h.m.top() != h.m.move {
		t.Fatalf("n: previews %v, on %T", got, h.m.top())
	}
	h.mustContain("dry run failed: a peek of this quorum queue counts a delivery")
	h.key("esc", "enter", "y")
	if got := c.forcedPreviews(); !slices.Equal(got, []bool{false, false, true}) || h.m.top() != h.m.move {
		t.Fatalf("y: previews %v, on %T", got, h.m.top())
	}
	h.mustContain("Confirm move")
	h.mustNotContain("dry run failed")
}

// Known from the last peek, without spending a delivery: the preview would
// dead-letter a message shown (delivered 4 times, limit 5). Refused, not
// asked.
func TestMovePreviewThatWouldDeadLetterIsRefused(t *testing.T) {
	c := limitedPreviews(t, 4, 1)
	h := newHarnessOn(t, c, Options{PeekLimit: 50}, 100, 30).start()
	openPayments(h)
	h.key("y", "m", "enter")
	if h.m.top() != h.m.move {
		t.Fatalf("asked a preview that would dead-letter: on %T\n%s", h.m.top(), h.plain())
	}
	if got := flatBox(h.plain()); !strings.Contains(got, "refused: its preview would dead-letter 1 message ladder saw in it, delivered as often as the delivery limit of 5 allows") {
		t.Fatalf("dialog:\n%s", h.plain())
	}
	if got := c.forcedPreviews(); !slices.Equal(got, []bool{false}) {
		t.Fatalf("previews %v", got)
	}
}

// u reads the queue twice (its look, then the preview): where each read
// counts a delivery toward a limit, it is asked for once, saying so; y
// reads with the yes, n reads nothing more.
func TestUnblockThatCountsADeliveryIsAsked(t *testing.T) {
	c := limitedPreviews(t, 0, 1)
	c.topology = true
	h := newHarnessOn(t, c, Options{PeekLimit: 50}, 100, 30).start()
	openPayments(h)
	h.key("y", "u")
	if h.m.top() != h.m.prompt {
		t.Fatalf("u was not asked for: on %T\n%s", h.m.top(), h.plain())
	}
	if got := flat(h.plain()); !strings.Contains(got, "ladder unblock reads the queue twice (its look, then the move's preview): peek 2 of 2 in payments? all get redelivered=true, each counts a delivery toward the delivery limit of 5") {
		t.Fatalf("question:\n%s", h.plain())
	}
	h.key("n")
	if got := c.peeksForced(); !slices.Equal(got, []bool{true, false}) || h.m.top() != h.m.browser {
		t.Fatalf("n: peeks %v, on %T", got, h.m.top())
	}
	h.key("u", "y")
	if got := c.peeksForced(); !slices.Equal(got, []bool{true, false, false, true}) || h.m.browser.reading != nil {
		t.Fatalf("y: peeks %v, reading %v", got, h.m.browser.reading)
	}
	// Nothing here expires: nothing holds anything back, nothing to preview.
	h.mustContain("nothing")
}

// Known from the last peek: the unblock's look would dead-letter a message
// shown. Refused, not asked, nothing read.
func TestUnblockThatWouldDeadLetterIsRefused(t *testing.T) {
	c := limitedPreviews(t, 4, 1)
	c.topology = true
	h := newHarnessOn(t, c, Options{PeekLimit: 50}, 120, 30).start()
	openPayments(h)
	h.key("y", "u")
	if h.m.top() != h.m.browser {
		t.Fatalf("asked an unblock that would dead-letter: on %T\n%s", h.m.top(), h.plain())
	}
	if got := flat(h.plain()); !strings.Contains(got, "unblock payments: refused: its look would dead-letter 1 message ladder saw in it") {
		t.Fatalf("status:\n%s", h.plain())
	}
	if got := c.peeksForced(); !slices.Equal(got, []bool{true, false}) {
		t.Fatalf("peeks %v", got)
	}
}

// u on the ladders screen asks the same: the fixture's orders.retry.1m,
// made a limited quorum queue, has a head-of-line finding.
func TestHomeUnblockThatCountsADeliveryIsAsked(t *testing.T) {
	c := limitedPreviews(t)
	c.topology = true
	c.limited = "orders.retry.1m"
	q := fixtureQueue(t, c.fakeClient, "orders.retry.1m")
	q.Type, q.Arguments = topology.QueueQuorum, map[string]any{"x-delivery-limit": int64(5)}
	h := newHarnessOn(t, c, Options{PeekLimit: 50}, 160, 40).start()
	selectHome(t, h, "orders.retry.1m")
	h.key("u")
	if h.m.top() != h.m.prompt || !strings.Contains(flat(h.plain()), "ladder unblock reads the queue twice") {
		t.Fatalf("u was not asked for: on %T\n%s", h.m.top(), h.plain())
	}
	h.key("y")
	if got := c.peeksForced(); !slices.Equal(got, []bool{false, true}) || h.m.top() != h.m.home {
		t.Fatalf("y: peeks %v, on %T", got, h.m.top())
	}
}

// d asks before a dump whose read counts a delivery toward a delivery
// limit (it was refused even after a yes: the dump never passed it on);
// y, then the file name, dumps with the yes.
func TestDumpThatCountsADeliveryIsAsked(t *testing.T) {
	t.Chdir(t.TempDir())
	c := limitedPreviews(t, 0, 1)
	c.topology = true
	h := newHarnessOn(t, c, Options{PeekLimit: 50}, 100, 30).start()
	openPayments(h)
	h.key("y", "d")
	if h.m.top() != h.m.prompt || !strings.Contains(flat(h.plain()), "The dump reads the queue: peek 2 of 2 in payments? all get redelivered=true, each counts a delivery toward the delivery limit of 5") {
		t.Fatalf("d was not asked for: on %T\n%s", h.m.top(), h.plain())
	}
	h.key("n")
	if h.m.top() != h.m.browser || len(c.peeksForced()) != 1 {
		t.Fatalf("n: on %T, peeks %v", h.m.top(), c.peeksForced())
	}
	h.key("d", "y")
	h.mustContain("Dump payments to a file")
	h.key("enter")
	// The re-peek after the dump is asked for in its turn.
	h.mustContain("enter/y peek")
	if got := c.peeksForced(); !slices.Equal(got, []bool{true, true, false}) {
		t.Fatalf("the dump's read, then the re-peek after it: peeks %v", got)
	}
	files, _ := os.ReadDir(".")
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	b, err := os.ReadFile(files[0].Name())
	if err != nil || strings.Count(string(b), "\n") != 3 { // the header and two messages
		t.Fatalf("dump file: %v\n%s", err, b)
	}
}

// d where the last peek's counts show the dump would dead-letter a
// message: refused, nothing asked or read.
func TestDumpThatWouldDeadLetterIsRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	c := limitedPreviews(t, 4, 1)
	h := newHarnessOn(t, c, Options{PeekLimit: 50}, 120, 30).start()
	openPayments(h)
	h.key("y", "d")
	if h.m.top() != h.m.browser || !strings.Contains(flat(h.plain()), "dump payments: refused: its read would dead-letter 1 message ladder saw in it") {
		t.Fatalf("on %T\n%s", h.m.top(), h.plain())
	}
	if got := c.peeksForced(); !slices.Equal(got, []bool{true}) {
		t.Fatalf("peeks %v", got)
	}
}

// S groups the whole queue after the question it asks; where each read
// counts a delivery toward a limit the yes is the scan's force (it was
// refused even after a yes).
func TestGroupScanThatCountsADeliveryIsForced(t *testing.T) {
	c := limitedPreviews(t, 0, 1)
	c.topology = true
	q := fixtureQueue(t, c.fakeClient, "payments")
	q.Ready = 5
	c.peeks["payments"].Ready = 5 // the peek left some out: S is offered
	h := newHarnessOn(t, c, Options{PeekLimit: 50}, 120, 30).start()
	openPayments(h)
	h.key("y", "g", "S")
	if h.m.top() != h.m.prompt || !strings.Contains(flat(h.plain()), "Group every ready message of payments by") {
		t.Fatalf("S was not asked for: on %T\n%s", h.m.top(), h.plain())
	}
	h.key("y")
	h.mustContain("the browse saw 2")
	if got := c.peeksForced(); !slices.Equal(got, []bool{true, true}) {
		t.Fatalf("the scan's read: peeks %v\n%s", got, h.plain())
	}
}

// A read that hands its messages on (a dump) counted a delivery on each
// where reads count: the next read is judged by the counts ladder saw plus
// that one. Delivered 3 times when peeked, 4 after the dump: another read
// would dead-letter it (limit 5), so the re-peek after the dump, and the
// next d, are refused, not asked.
func TestReadsAfterADumpAreJudgedByItsCount(t *testing.T) {
	t.Chdir(t.TempDir())
	c := limitedPreviews(t, 3, 1)
	c.topology = true
	h := newHarnessOn(t, c, Options{PeekLimit: 50}, 120, 30).start()
	openPayments(h)
	h.key("y", "d", "y", "enter")
	h.mustContain("peek payments: refused: another peek would dead-letter 1 message")
	if got := c.peeksForced(); !slices.Equal(got, []bool{true, true, false}) || h.m.top() != h.m.browser {
		t.Fatalf("peeks %v, on %T", got, h.m.top())
	}
	h.key("d")
	if h.m.top() != h.m.browser || !strings.Contains(flat(h.plain()), "dump payments: refused: its read would dead-letter 1 message ladder saw in it") {
		t.Fatalf("on %T\n%s", h.m.top(), h.plain())
	}
}
