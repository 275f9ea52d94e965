package ui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// The browser's u is one of its reads: it runs under the read's context,
// so a read that replaces it (opening another queue) cancels it at once,
// and it shows how far it is on the status line.
func TestBrowserUnblockIsACancellableRead(t *testing.T) {
	fc := newFake()
	fc.topology = true
	h := newHarness(t, fc, Options{}, 120, 30).start()
	h.send(openQueueMsg{queue: "orders.dlq", confirmed: true})
	h.mustContain("msg-0002")
	b := h.m.browser
	gate := make(chan struct{})
	defer close(gate)
	fc.mu.Lock()
	fc.peekGate, fc.peekReport, fc.peeked = gate, broker.PeekProgress{Read: 7, Want: 1000}, nil
	fc.mu.Unlock()
	msgs := started(b.Update(keyMsg("u")))
	h.send(next[readProgressMsg](t, msgs))
	h.mustContain("unblock: reading the queue… 7 of 1000")
	if b.reading == nil || b.reading.kind != readUnblock {
		t.Fatalf("u started no read: %+v", b.reading)
	}
	// The status line follows it too (asked from home, no footer shows it).
	st := b.readProgress(readProgressMsg{id: b.reading.id, p: broker.PeekProgress{Read: 8, Want: 1000}})
	if s := next[statusMsg](t, started(st)); s.text != "unblock orders.dlq: reading the queue… 8 of 1000" {
		t.Errorf("status %q", s.text)
	}
	h.key("r")
	h.mustContain("already reading orders.dlq (unblock)")

	// Another queue: the unblock's read is cancelled, its answer dropped.
	h.send(openQueueMsg{queue: "orders.process", confirmed: true})
	ready := next[unblockReadyMsg](t, msgs)
	if !errors.Is(ready.err, context.Canceled) {
		t.Fatalf("the replaced unblock was not cancelled: %v", ready.err)
	}
	fc.mu.Lock()
	fc.peekGate = nil
	fc.mu.Unlock()
	h.send(ready) // its end starts the new queue's peek
	if b.reading != nil || b.queue != "orders.process" {
		t.Fatalf("after the cancelled unblock: reading %+v, queue %s", b.reading, b.queue)
	}
	if h.m.top() != h.m.browser || strings.Contains(h.plain(), "canceled") {
		t.Fatalf("top %T; the cancelled unblock shows:\n%s", h.m.top(), h.plain())
	}
	fc.mu.Lock()
	peeked := slices.Clone(fc.peeked)
	fc.mu.Unlock()
	if !slices.Equal(peeked, []string{"orders.dlq", "orders.process"}) {
		t.Errorf("peeked %v", peeked)
	}
}

// Home's u is a read of the browser's too: while the browser reads it says
// so and reads nothing; otherwise it takes the browser's read (a queue
// opened meanwhile waits for it, and cancels it: its dialog would open
// over that queue), and the read ends whether or not home is in front.
func TestHomeUnblockWaitsForTheBrowsersRead(t *testing.T) {
	fc := newFake()
	fc.topology = true
	h := newHarness(t, fc, Options{}, 160, 40).start()
	h.send(openQueueMsg{queue: "orders.dlq", confirmed: true})
	h.mustContain("msg-0002")
	b := h.m.browser
	gate := make(chan struct{})
	fc.mu.Lock()
	fc.peekGate, fc.peekReport, fc.peeked = gate, broker.PeekProgress{Read: 1, Want: 3}, nil
	fc.mu.Unlock()
	h.key("r") // a peek that takes a while
	if b.reading == nil || b.reading.kind != readPeek {
		t.Fatalf("r started no read: %+v", b.reading)
	}
	h.key("esc")
	selectHome(t, h, "orders.retry.1m")
	h.key("u")
	h.mustContain("already reading orders.dlq (peek)")
	time.Sleep(50 * time.Millisecond) // a second Peek would have begun by now
	fc.mu.Lock()
	if slices.Contains(fc.peeked, "orders.retry.1m") {
		t.Fatalf("home's u read while the browser read: %v", fc.peeked)
	}
	fc.mu.Unlock()
	close(gate)
	h.mustNotContain("peek: reading")
	for end := time.Now().Add(settleBound); b.reading != nil && time.Now().Before(end); {
		h.plain() // the peek's answer ends the read
	}

	// Now u reads, in the browser's slot.
	gate = make(chan struct{})
	fc.mu.Lock()
	fc.peekGate, fc.peekReport = gate, broker.PeekProgress{Read: 2, Want: 8}
	fc.mu.Unlock()
	h.key("u")
	h.mustContain("unblock orders.retry.1m: reading the queue… 2 of 8")
	if r := b.reading; r == nil || r.kind != readUnblock || r.queue != "orders.retry.1m" {
		t.Fatalf("home's u is not the browser's read: %+v", r)
	}
	h.key("enter") // open the queue: it waits for the unblock, which is cancelled
	fc.mu.Lock()
	fc.peekGate = nil
	fc.mu.Unlock()
	close(gate)
	h.mustContain("orders.retry.1m · classic")
	if b.reading != nil || h.m.top() != h.m.browser {
		t.Fatalf("after the unblock: reading %+v, top %T", b.reading, h.m.top())
	}
	h.mustNotContain("canceled", "Confirm move")
}
