package ui

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// A slow management API (a test-local proxy holding every answer back
// past --api-timeout) is not a broker down: the UI says "management API
// slow", keeps the ladder with its age, shows depths AMQP still tells, and
// comes back when the API answers again. From the start, it draws and
// says what it waits for.

// slowUI runs the UI on r with its management API behind a delaying proxy.
func slowUI(t *testing.T, r *rabbit.Resolved, delay time.Duration) (*brokertest.DelayedAPI, screenTap, func()) {
	t.Helper()
	slow := brokertest.NewDelayedAPI(t, r.APIURL)
	slow.SetDelay(delay)
	cr, err := rabbit.Config{AMQPURL: r.AMQPURL, APIURL: slow.URL, Vhost: r.Vhost, APITimeout: time.Second}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	live, err := rabbit.NewLive(cr, "test slow api")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	frame := ""
	tap := screenTap{Model: New(Options{Client: live, Refresh: 500 * time.Millisecond, APITimeout: time.Second}), mu: &mu, frame: &frame}
	in, keys := io.Pipe()
	p := tea.NewProgram(tap, tea.WithInput(in), tea.WithOutput(io.Discard), tea.WithoutSignals(), tea.WithWindowSize(120, 40))
	ran := make(chan error, 1)
	go func() { _, err := p.Run(); ran <- err }()
	stop := func() {
		press(programKeys{p}, "q")
		select {
		case <-ran:
		case <-time.After(30 * time.Second):
			t.Error("the UI did not end 30 s after q")
		}
		_ = keys.Close()
		_ = live.Close()
	}
	return slow, tap, stop
}

func TestSlowAPIMidSessionIsNotUnreachable(t *testing.T) {
	r := brokertest.OwnVhost(t)
	declareLadder(t, r, 3)
	slow, tap, stop := slowUI(t, r, 0)
	defer stop()
	tap.waitScreen(t, 30*time.Second, "the ladder", has("● live", "pay.wait.5s", "pay.dlq"))

	slow.SetDelay(3 * time.Second)
	tap.waitScreen(t, time.Minute, "the slow API said", has("management API slow", "slow: no answer in 1s (--api-timeout)", "old"))
	t.Logf("API slow:\n%s", tap.screen())
	if s := tap.screen(); strings.Contains(s, "unreachable") || strings.Contains(s, "● live") {
		t.Errorf("a slow API read as the broker down, or live:\n%s", s)
	}
	// Depths keep coming over AMQP while the API is slow.
	conn, err := r.DialAMQP(context.Background(), "test slow api publish")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	publish(t, ch, "pay.dlq", 2)
	_ = conn.Close()
	tap.waitScreen(t, time.Minute, "pay.dlq's depth from AMQP", func(s string) bool {
		return slices.Contains(row(s, "pay.dlq"), "5") && strings.Contains(s, "depths from AMQP at")
	})
	t.Logf("depths from AMQP:\n%s", tap.screen())

	slow.SetDelay(0)
	tap.waitScreen(t, time.Minute, "the API back", func(s string) bool {
		return has("● live", "pay.dlq")(s) && !strings.Contains(s, "API slow")
	})
}

func TestSlowAPIFromTheStartDraws(t *testing.T) {
	r := brokertest.OwnVhost(t)
	declareLadder(t, r, 1)
	slow, tap, stop := slowUI(t, r, 3*time.Second)
	defer stop()
	tap.waitScreen(t, 30*time.Second, "the title and the wait", has("ladder · vhost", "no answer"))
	tap.waitScreen(t, time.Minute, "why", has("management API slow", "slow: no answer in 1s (--api-timeout)", "AMQP answers"))
	t.Logf("from the start:\n%s", tap.screen())
	if s := tap.screen(); strings.Contains(s, "unreachable") {
		t.Errorf("a slow API read as the broker down:\n%s", s)
	}
	slow.SetDelay(0)
	tap.waitScreen(t, time.Minute, "the ladder once the API answers", has("● live", "pay.dlq"))
}
