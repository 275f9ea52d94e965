package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// Issue 32 in the terminal UI: the first view of a Spring AMQP
// application's failures (brokertest.SpringRetry), by a fresh client,
// shows the 2 retries x-death records in the retry queue, in the list and
// in the inspector, which says what the count rests on; r (peek again)
// shows the same.
func TestFirstViewOfSpringFailuresCountsTheRetries(t *testing.T) {
	r := brokertest.OwnVhost(t)
	ch := brokertest.Channel(t, r, "test spring retry")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	s := brokertest.NewSpringRetry("orders")
	if err := s.Declare(ch); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(context.Background(), ch, "spring", 3, time.Minute); err != nil {
		t.Fatal(err)
	}
	live, err := rabbit.NewLive(r, "test spring first view")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	h := newHarnessOn(t, live, Options{}, 200, 48).start()
	h.send(openQueueMsg{queue: s.Failed, confirmed: true})
	const why = "~2 (from x-death in orders.retry: its ladder's retry queues as the messages read showed them"
	for _, look := range []string{"first", "after r"} {
		h.mustContain("peeked ", "spring-2")
		if row := lineWith(h.plain(), "spring-0"); !strings.Contains(row, "~2 x") {
			t.Errorf("%s view: row %q, want ~2 retries from x-death", look, row)
		}
		h.key("enter")
		h.mustContain(why)
		h.key("esc")
		prev := h.m.browser.res
		h.key("r")
		for deadline := time.Now().Add(60 * time.Second); h.m.browser.res == prev; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("r peeked nothing within 60 s")
			}
			h.deliver()
		}
	}
}
