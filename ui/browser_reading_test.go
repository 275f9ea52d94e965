package ui

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
)

// started runs cmd's work (a batch's, each part in its own goroutine, as
// the program would) and returns the messages they send, as they come.
func started(cmd tea.Cmd) <-chan tea.Msg {
	out := make(chan tea.Msg, 16)
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			msg := c()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					run(c)
				}
				return
			}
			// tea.Sequence's message type is unexported: a slice of commands.
			if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
				for i := range v.Len() {
					run(v.Index(i).Interface().(tea.Cmd))
				}
				return
			}
			if msg != nil {
				out <- msg
			}
		}()
	}
	run(cmd)
	return out
}

// next is the next message of kind T from msgs (others are dropped),
// within a generous bound.
func next[T tea.Msg](t *testing.T, msgs <-chan tea.Msg) T {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-msgs:
			if v, ok := m.(T); ok {
				return v
			}
		case <-timeout:
			var zero T
			t.Fatalf("no %T came", zero)
			return zero
		}
	}
}

// While the browser reads (a peek that takes a while), its progress shows,
// and r, u and d start no second read: they say one runs. Opening another
// queue cancels the peek, whose answer is dropped, and peeks the new queue
// once it has ended.
func TestOneReadAtATimeWithItsProgress(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 100, 30).start()
	h.send(openQueueMsg{queue: "orders.dlq"}) // a first peek, answered at once
	h.mustContain("msg-0002")
	b := h.m.browser

	gate := make(chan struct{})
	fc.mu.Lock()
	fc.peekGate, fc.peekReport = gate, broker.PeekProgress{Read: 412, Want: 1000}
	fc.peeked = nil
	fc.mu.Unlock()
	msgs := started(b.Update(keyMsg("r")))
	h.send(next[readProgressMsg](t, msgs))
	h.mustContain("peek: reading the queue… 412 of 1000")

	for _, k := range []string{"r", "u", "d"} {
		h.key(k)
		h.mustContain("already reading orders.dlq (peek)")
		if top := h.m.top(); top != h.m.browser {
			t.Fatalf("%s opened %T", k, top)
		}
	}
	time.Sleep(50 * time.Millisecond) // a second Peek would have begun by now
	fc.mu.Lock()
	peeked := slices.Clone(fc.peeked)
	fc.mu.Unlock()
	if len(peeked) != 1 {
		t.Fatalf("peeks while one ran: %v, want just the one", peeked)
	}

	// Another queue: the running peek is cancelled, its answer dropped.
	h.send(openQueueMsg{queue: "orders.process"})
	h.mustContain("waiting for the peek of orders.dlq to end, then peeking orders.process…")
	cancelled := next[peekMsg](t, msgs)
	if cancelled.err == nil {
		t.Fatal("the replaced peek was not cancelled")
	}
	close(gate)
	fc.mu.Lock()
	fc.peekGate = nil
	fc.mu.Unlock()
	h.send(cancelled) // its end starts the new queue's peek
	h.mustNotContain("waiting for")
	if b.reading != nil || b.queue != "orders.process" || b.err != nil {
		t.Fatalf("after the cancelled peek: reading %+v, queue %s, err %v", b.reading, b.queue, b.err)
	}
	fc.mu.Lock()
	peeked = slices.Clone(fc.peeked)
	fc.mu.Unlock()
	if !slices.Equal(peeked, []string{"orders.dlq", "orders.process"}) {
		t.Errorf("peeked %v", peeked)
	}
	if strings.Contains(h.plain(), "context canceled") {
		t.Errorf("the cancelled peek's error is shown:\n%s", h.plain())
	}
}

// A dump reads as a peek does: while it runs, r says so, and the reload
// that follows it waits for it.
func TestDumpIsARead(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 100, 30).start()
	h.send(openQueueMsg{queue: "orders.dlq"})
	gate := make(chan struct{})
	fc.mu.Lock()
	fc.peekGate, fc.peekReport = gate, broker.PeekProgress{Read: 7, Want: 3}
	fc.peeked, fc.topology = nil, true
	fc.mu.Unlock()
	b := h.m.browser
	msgs := started(b.Update(dumpAskMsg{queue: "orders.dlq", file: t.TempDir() + "/d.jsonl"}))
	h.send(next[readProgressMsg](t, msgs))
	h.mustContain("dump: reading the queue… 7 of 3")
	h.key("r")
	h.mustContain("already reading orders.dlq (dump)")
	close(gate)
	fc.mu.Lock()
	fc.peekGate = nil
	fc.mu.Unlock()
	done := next[dumpDoneMsg](t, msgs)
	if done.err != nil {
		t.Fatal(done.err)
	}
	h.send(done) // the reload after it peeks, now
	fc.mu.Lock()
	peeked := slices.Clone(fc.peeked)
	fc.mu.Unlock()
	if b.reading != nil || len(peeked) != 2 {
		t.Fatalf("after the dump: reading %+v, peeked %v (want the dump's read and the reload's)", b.reading, peeked)
	}
	h.mustContain("dumped 3 messages")
}

// A peek that stopped short says why on the banner, even when it read
// nothing (its side effects are then hidden: nothing was delivered).
func TestPeekBannerSaysWhyItIsIncomplete(t *testing.T) {
	st := newStylesForTest()
	for _, res := range []*broker.PeekResult{
		{Queue: "q", Incomplete: "stopped at the 20s deadline after 0 messages of 4: the rest was not read", SideEffects: []string{"redelivered flag is now set"}},
		{Queue: "q", Incomplete: "stopped at the 20s deadline after 1 message of 4: the rest was not read", Messages: []broker.Message{fixtureMessage(0)}},
	} {
		text := strings.Join(renderPeekBanner(res, fixedNow, 200, st), "\n")
		if !strings.Contains(text, "incomplete: "+res.Incomplete) {
			t.Errorf("banner lacks the reason:\n%s", text)
		}
		if len(res.Messages) == 0 && strings.Contains(text, "redelivered") {
			t.Errorf("a peek that read nothing shows side effects:\n%s", text)
		}
	}
}

// Grouping the whole queue (g, on a queue the peek did not cover) is a
// read like a peek: while it runs, r starts no second one, nor S; when it
// ends, the read is over.
func TestGroupScanIsARead(t *testing.T) {
	fc := newFake()
	fc.peeks["orders.dlq"].Ready = 50 // the peek saw only some: g scans the whole queue
	fc.topology = true                // a scan reads it, as a dump does
	h := newHarness(t, fc, Options{}, 100, 30).start()
	h.send(openQueueMsg{queue: "orders.dlq"})
	h.mustContain("msg-0002")
	b := h.m.browser
	gate := make(chan struct{})
	fc.mu.Lock()
	fc.peekGate, fc.peeked = gate, nil
	fc.mu.Unlock()
	h.key("g")
	if h.m.top() != h.m.browser {
		h.key("enter") // the cost question, when others feel the browse
	}
	if b.reading == nil || b.reading.kind != readGroups {
		t.Fatalf("g started no scan: %+v\n%s", b.reading, h.plain())
	}
	h.key("S") // a scan runs: S starts none
	if b.reading == nil || b.reading.kind != readGroups || b.gscan.id != 1 {
		t.Fatalf("S replaced the scan: %+v, scan %d", b.reading, b.gscan.id)
	}
	h.key("r") // the grouped view's refresh: a peek
	if b.reading == nil || b.reading.kind != readGroups {
		t.Fatalf("r replaced the scan's read: %+v", b.reading)
	}
	time.Sleep(50 * time.Millisecond) // a second Peek would have begun by now
	close(gate)
	fc.mu.Lock()
	fc.peekGate = nil
	fc.mu.Unlock()
	h.mustContain("the browse saw 3 of 50") // the scan's coverage
	if b.reading != nil {
		t.Fatalf("the scan's read did not end: %+v", b.reading)
	}
	fc.mu.Lock()
	peeked := len(fc.peeked)
	fc.mu.Unlock()
	if peeked != 1 {
		t.Errorf("%d reads, want the scan's alone", peeked)
	}
}
