package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/retry"
)

// RabbitMQ 4.3's delayed retry of a main queue shows as a row of its
// ladder with its whole policy at 80 columns, the broker's text sanitised.
func TestHomeShowsTheDelayedRetryRowAt80Columns(t *testing.T) {
	fc := newFake()
	fc.snap.Ladders[1].DelayedRetry = &retry.DelayedRetry{Type: "failed", Min: time.Second, Max: 30 * time.Second}
	h := newHarness(t, fc, Options{}, 80, 24).start()
	frame := h.plain()
	l := lineWith(frame, "delayed retry")
	if want := "  └─delayed retry      retry failed, 1s × count ≤ 30s"; !strings.HasPrefix(l, want) {
		t.Errorf("delayed retry row %q, want it to start %q\n%s", l, want, frame)
	}
	if ansi.StringWidth(l) != 80 {
		t.Errorf("the row is %d cells wide, want 80: %q", ansi.StringWidth(l), l)
	}
	// The last row of payments' ladder, under its wait queue.
	rows := strings.Split(frame, "\n")
	for i, r := range rows {
		if r == l && (i == 0 || !strings.Contains(rows[i-1], "├─payments.wait")) {
			t.Errorf("the row is not the last of payments' ladder:\n%s", frame)
		}
	}

	fc = newFake()
	fc.snap.Ladders[1].DelayedRetry = &retry.DelayedRetry{Type: "fa\x1b[2Jiled", Min: time.Second}
	h = newHarness(t, fc, Options{}, 80, 24).start()
	if strings.Contains(h.raw(), "\x1b[2J") {
		t.Error("the broker's delayed-retry type reached the terminal raw")
	}
	h.mustContain(`retry fa\x1b[2Jiled, 1s × count`)
}
