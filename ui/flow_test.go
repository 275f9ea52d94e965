package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/ladder-tui/ladder/broker/sim"
)

// End-to-end flows: the real root model in a real tea.Program (teatest),
// keys typed in, output waited for.

func waitText(t *testing.T, tm *teatest.TestModel, texts ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, s := range texts {
			if !bytes.Contains(b, []byte(s)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func press(tm interface{ Send(tea.Msg) }, keys ...string) {
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
}

// TestFlowMoveWithDelay: home → queue → message → move with a delay →
// progress → summary → back in a re-peeked browser → quit.
func TestFlowMoveWithDelay(t *testing.T) {
	fc := newFake()
	fc.peeks["orders.dlq"] = fixturePeek(6)
	fc.moveStep = 250 * time.Millisecond // past a second, so the rate shows
	tm := teatest.NewTestModel(t, New(Options{Client: fc, Title: "flow"}), teatest.WithInitialTermSize(100, 30))

	waitText(t, tm, "orders.retry.5s", "● live")
	press(tm, "down", "down", "down", "enter")
	waitText(t, tm, "peeked 6 of 11", "msg-0005")
	press(tm, "a") // mark all six
	waitText(t, tm, "6 marked")
	press(tm, "down", "enter")
	waitText(t, tm, "message #1 in orders.dlq", "x-death timeline")
	press(tm, "esc", "m")
	waitText(t, tm, "Move / re-publish from orders.dlq", "marked messages (6)")
	// Target: the main queue; delay: the 5s tier's TTL.
	press(tm, "tab", "right", "tab", "right", "enter")
	waitText(t, tm, "Confirm move", "Move 6 messages")
	press(tm, "y")
	waitText(t, tm, "Moving from orders.dlq to queue orders")
	waitText(t, tm, "msg/s")
	waitText(t, tm, "Summary", "moved 6")
	press(tm, "enter")
	waitText(t, tm, "marks cleared")
	press(tm, "q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))

	if n := len(fc.moves); n != 2 || !fc.moves[0].DryRun || fc.moves[1].DryRun || fc.moves[1].Delay != 5*time.Second || len(fc.moves[1].Positions) != 6 {
		t.Fatalf("moves %+v", fc.moves)
	}
	if got := strings.Join(fc.peeked, ","); got != "orders.dlq,orders.dlq" {
		t.Fatalf("peeks %q", got)
	}
}

// TestFlowBrokerGoesAway: a live program loses the broker, says so with a
// countdown, and comes back by itself.
func TestFlowBrokerGoesAway(t *testing.T) {
	fc := newFake()
	tm := teatest.NewTestModel(t, New(Options{Client: fc, Refresh: 100 * time.Millisecond}), teatest.WithInitialTermSize(80, 24))
	waitText(t, tm, "● live")
	fc.mu.Lock()
	fc.snapErr = errTest("connection refused")
	fc.mu.Unlock()
	waitText(t, tm, "reconnecting (1) in 1s")
	fc.mu.Lock()
	fc.snapErr = nil
	fc.mu.Unlock()
	waitText(t, tm, "reconnected")
	press(tm, "ctrl+c")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

type errTest string

func (e errTest) Error() string { return string(e) }

// TestFlowDemoSim runs the UI against the embedded simulation the demo uses.
func TestFlowDemoSim(t *testing.T) {
	s := sim.New(sim.Options{Seed: 1, WarmUp: 2 * time.Minute})
	defer s.Close()
	tm := teatest.NewTestModel(t, New(Options{Client: s, Title: "demo"}), teatest.WithInitialTermSize(120, 40))
	waitText(t, tm, "LADDERS", "● live")
	press(tm, "enter")
	// The first queue has a consumer: the peek is asked first.
	waitText(t, tm, "them for the moment", "redelivered=true")
	press(tm, "enter")
	waitText(t, tm, "peeked")
	press(tm, "?")
	waitText(t, tm, "move/re-publish")
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
