package ui

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// The broker restarts while the UI runs (the own node, stopped and started
// again): the UI says it is unreachable and counts down to the next try,
// reconnects by itself, and the ladder comes back with fresh depths; a
// peek works again on a new AMQP connection; nothing is left running.

// screenTap is the root model, keeping the frame it last drew (plain
// text) for the test to read while the program runs.
type screenTap struct {
	*Model
	mu    *sync.Mutex
	frame *string
}

func (s screenTap) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := s.Model.Update(msg)
	return s, cmd
}

func (s screenTap) View() tea.View {
	v := s.Model.View()
	s.mu.Lock()
	*s.frame = ansi.Strip(s.Model.render())
	s.mu.Unlock()
	return v
}

func (s screenTap) screen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.frame
}

// waitScreen polls the frame until ok holds, for at most d.
func (s screenTap) waitScreen(t *testing.T, d time.Duration, what string, ok func(string) bool) {
	t.Helper()
	if !brokertest.WaitFor(d, func() bool { return ok(s.screen()) }) {
		t.Fatalf("%s: not within %v; the screen:\n%s", what, d, s.screen())
	}
}

func has(subs ...string) func(string) bool {
	return func(s string) bool {
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				return false
			}
		}
		return true
	}
}

// programKeys sends key presses to a running program.
type programKeys struct{ p *tea.Program }

func (k programKeys) Send(msg tea.Msg) { k.p.Send(msg) }

// goroutines returns the running goroutines by id, with their stacks.
func goroutines() map[int]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[int]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		var id int
		if _, err := fmt.Sscanf(g, "goroutine %d ", &id); err == nil {
			out[id] = g
		}
	}
	return out
}

// newGoroutines are those running now that did not before.
func newGoroutines(before map[int]string) []string {
	var extra []string
	for id, g := range goroutines() {
		// os/signal's loop runs from the first signal.Notify in the
		// process (bubbletea's, in the first program) to its end.
		if _, ok := before[id]; !ok && !strings.Contains(g, "os/signal.loop") {
			extra = append(extra, g)
		}
	}
	sort.Strings(extra)
	return extra
}

// declareLadder makes pay (main), pay.wait.5s (a TTL tier dead-lettering
// back) and pay.dlq, with dlq messages in pay.dlq.
func declareLadder(t *testing.T, r *rabbit.Resolved, dlq int) {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test ladder")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		name string
		args amqp.Table
	}{
		{"pay.dlq", nil},
		{"pay", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "pay.wait.5s"}},
		{"pay.wait.5s", amqp.Table{"x-message-ttl": int32(5000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "pay"}},
	} {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			t.Fatalf("declare %s: %v", q.name, err)
		}
	}
	publish(t, ch, "pay.dlq", dlq)
}

func publish(t *testing.T, ch *amqp.Channel, q string, n int) {
	t.Helper()
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", q, false, false, amqp.Publishing{
			MessageId: "m-" + strconv.Itoa(i), DeliveryMode: amqp.Persistent, Body: []byte("x"),
			Headers: amqp.Table{"x-retry-count": int32(3)},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !dc.Wait() {
			t.Fatal("publish not confirmed")
		}
	}
}

// row is the screen's line for queue q ("" when none); a ladder member's
// name is drawn after its ├─ or └─.
func row(screen, q string) []string {
	for _, l := range strings.Split(screen, "\n") {
		f := strings.Fields(l)
		for i := range f {
			f[i] = strings.TrimLeft(f[i], "├└─")
		}
		if len(f) > 1 && slices.Contains(f, q) {
			return f
		}
	}
	return nil
}

func TestBrokerRestartWhileTheUIRuns(t *testing.T) {
	n := brokertest.RequireOwnNode(t)
	r := brokertest.OwnVhostOn(t, n.Resolved)
	// A test that fails with the node down brings it back for the next
	// (and for deleting its vhost).
	t.Cleanup(func() {
		if !n.Answers() {
			n.Start(t)
		}
	})
	declareLadder(t, r, 3)
	before := goroutines()
	start := time.Now()

	live, err := rabbit.NewLive(r, "test restart")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	frame := ""
	tap := screenTap{Model: New(Options{Client: live, Refresh: 500 * time.Millisecond}), mu: &mu, frame: &frame}
	// A program of its own, not teatest's (which leaves a goroutine
	// waiting for SIGINT behind), so every goroutine left is the UI's.
	in, keys := io.Pipe()
	p := tea.NewProgram(tap, tea.WithInput(in), tea.WithOutput(io.Discard), tea.WithoutSignals(), tea.WithWindowSize(120, 40))
	ran := make(chan error, 1)
	go func() { _, err := p.Run(); ran <- err }()
	defer keys.Close()
	tm := programKeys{p}

	tap.waitScreen(t, 30*time.Second, "the ladder", has("● live", "pay.wait.5s", "pay.dlq"))
	// A peek: the shared AMQP connection, which the restart will close.
	for !strings.Contains(tap.screen(), "▸ pay.dlq") && time.Since(start) < time.Minute {
		press(tm, "down")
		time.Sleep(50 * time.Millisecond)
	}
	press(tm, "enter")
	tap.waitScreen(t, 30*time.Second, "the first peek", has("pay.dlq", "peeked 3"))
	press(tm, "esc")
	tap.waitScreen(t, 30*time.Second, "home again", has("LADDERS"))

	n.Stop(t)
	tap.waitScreen(t, time.Minute, "the outage", has("broker unreachable", "reconnecting ("))
	outage := tap.screen()
	t.Logf("during the outage: %q", strings.TrimSpace(lineWith(outage, "unreachable")))
	if f := row(outage, "pay.dlq"); f == nil {
		t.Errorf("the ladder is gone during the outage (want its last rows, greyed):\n%s", outage)
	}
	n.Start(t)
	// Back by itself: the backoff doubles from 1 s to at most 30 s.
	tap.waitScreen(t, 2*time.Minute, "reconnected", func(s string) bool {
		return has("● live", "pay.wait.5s", "pay.dlq")(s) && !strings.Contains(s, "unreachable")
	})

	// Fresh depths: two more messages in pay.dlq show.
	conn, err := r.DialAMQP(context.Background(), "test restart publish")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	publish(t, ch, "pay.dlq", 2)
	_ = conn.Close()
	tap.waitScreen(t, time.Minute, "pay.dlq with 5 messages", func(s string) bool {
		return slices.Contains(row(s, "pay.dlq"), "5")
	})
	// A peek again, on a new connection.
	press(tm, "enter")
	tap.waitScreen(t, 30*time.Second, "the peek after the restart", has("pay.dlq", "peeked 5"))
	press(tm, "esc")
	tap.waitScreen(t, 30*time.Second, "home again", has("LADDERS"))
	press(tm, "q")
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("the UI: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the UI did not end 30 s after q")
	}
	_ = keys.Close()
	if err := live.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	t.Logf("restart seen and mended in %s", time.Since(start).Round(100*time.Millisecond))

	// Nothing the UI or the client started is left running.
	var extra []string
	if !brokertest.WaitFor(15*time.Second, func() bool { extra = newGoroutines(before); return len(extra) == 0 }) {
		t.Fatalf("%d goroutines left running:\n\n%s", len(extra), strings.Join(extra, "\n\n"))
	}
}
