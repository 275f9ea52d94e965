package ui

import (
	"context"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// frameSafe fails when a frame holds anything but our own SGR styling that
// acts on a terminal: ESC, BEL, C1 controls, other controls, invalid UTF-8.
func frameSafe(t *testing.T, where, raw string) {
	t.Helper()
	rest := sgrSeq.ReplaceAllString(raw, "")
	if !utf8.ValidString(rest) {
		t.Fatalf("%s: invalid UTF-8 in the frame", where)
	}
	for i, r := range rest {
		if r == '\n' {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\u202e' {
			t.Fatalf("%s: control %U at byte %d: %q", where, r, i, rest[max(0, i-60):min(len(rest), i+20)])
		}
	}
}

// The browser and the inspector on a real peek of the hostile messages
// (escape sequences and invalid UTF-8 in every field, 8192 headers,
// 32-deep tables, a 16 MiB body) in a 255-byte emoji queue: every frame is
// safe, at a wide and a narrow size, scrolled through.
func TestHostileMessagesInBrowserAndInspector(t *testing.T) {
	r := brokertest.Require(t)
	q := brokertest.EmojiQueueName()
	msgs := brokertest.HostileMessages(brokertest.HugeBody)
	brokertest.PublishHostile(t, r, q, msgs)
	l, err := rabbit.NewLive(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// A broker whose send to a starved client times out (tcp send_timeout
	// on a machine with both cores busy) resets the connection mid-body:
	// nothing is lost (the messages return), so the read is tried again.
	res, err := l.Peek(context.Background(), q, broker.PeekOptions{})
	for try := 1; try < 3 && errors.Is(err, broker.ErrConnLost); try++ {
		t.Logf("peek %d: %v; again", try, err)
		res, err = l.Peek(context.Background(), q, broker.PeekOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != len(msgs) {
		t.Fatalf("peeked %d of %d", len(res.Messages), len(msgs))
	}
	for _, size := range [][2]int{{160, 50}, {80, 24}} {
		fc := newFake()
		fc.snap.Topology.Queues = append(fc.snap.Topology.Queues, queue(q, int64(len(msgs)), 0, 0, 0, 0))
		fc.peeks[q] = res
		h := newHarness(t, fc, Options{}, size[0], size[1]).start()
		frameSafe(t, "home", h.raw())
		h.key("G")
		frameSafe(t, "home, emoji queue selected", h.raw())
		h.send(openQueueMsg{queue: q})
		if h.m.top() != h.m.browser {
			t.Fatalf("%T on top, not the browser", h.m.top())
		}
		frameSafe(t, "browser", h.raw())
		h.mustContain(`rk\x1b]0`, `\u009b31m`)
		for i := range msgs {
			h.key("home")
			for range i {
				h.key("down")
			}
			frameSafe(t, "browser on "+msgs[i].Name, h.raw())
			h.key("enter")
			if h.m.top() != h.m.inspector {
				t.Fatalf("%s: no inspector", msgs[i].Name)
			}
			for page := 0; page < 30; page++ {
				frameSafe(t, "inspector of "+msgs[i].Name, h.raw())
				h.key("pgdown")
			}
			h.key("G")
			frameSafe(t, "inspector end of "+msgs[i].Name, h.raw())
			h.key("esc")
		}
		for _, k := range []string{"g", "g", "g", "g", "g", "?"} {
			h.key(k)
			frameSafe(t, "browser after "+k, h.raw())
		}
	}
}
