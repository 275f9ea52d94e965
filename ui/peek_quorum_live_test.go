package ui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry/topology"
)

// watchedLive is the live client, telling the test each peek it ran.
type watchedLive struct {
	*rabbit.Live
	peeks chan watchedPeek
}

type watchedPeek struct {
	res   *broker.PeekResult
	err   error
	force bool
}

func (w watchedLive) Peek(ctx context.Context, queue string, opt broker.PeekOptions) (*broker.PeekResult, error) {
	res, err := w.Live.Peek(ctx, queue, opt)
	w.peeks <- watchedPeek{res, err, opt.Force}
	return res, err
}

func (w watchedLive) next(t *testing.T) watchedPeek {
	t.Helper()
	select {
	case p := <-w.peeks:
		return p
	case <-time.After(90 * time.Second):
		// Generous: the live rounds run several packages and brokers at
		// once on two cores.
		t.Fatal("no peek within 90 s")
	}
	return watchedPeek{}
}

// none says no peek ran (a refused open asks nothing of the broker).
func (w watchedLive) none(t *testing.T) {
	t.Helper()
	select {
	case p := <-w.peeks:
		t.Fatalf("a peek ran: %v", p.err)
	default:
	}
}

// Issue 20's done-when in the terminal UI: a quorum queue with
// x-delivery-limit 3 opened and re-peeked (r) ten times, read-only and
// not, on the test broker (make test runs ui on 3.10), 4.0 and 4.3:
// nothing is dead-lettered, the order stays. On 4.3 every peek runs and counts nothing; before, each peek is
// asked for and answered yes until the counts seen say one more would
// dead-letter: then it is refused, re-peek or reopened.
func TestTenTUIPeeksOfALimitedQuorumQueueLoseNothing(t *testing.T) {
	for _, version := range []string{"", "4.0", "4.3"} {
		for _, readOnly := range []bool{false, true} {
			t.Run(fmt.Sprintf("broker %s read-only %v", version, readOnly), func(t *testing.T) {
				r := brokertest.Require(t)
				if version != "" {
					r = brokertest.RequireVersion(t, version)
				}
				tenTUIPeeks(t, brokertest.OwnVhostOn(t, r), readOnly)
			})
		}
	}
}

func tenTUIPeeks(t *testing.T, r *rabbit.Resolved, readOnly bool) {
	ch := brokertest.Channel(t, r, "test tui peeks")
	for _, q := range []struct {
		name string
		args amqp.Table
	}{
		{"work.dlq", nil},
		{"work", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work.dlq"}},
	} {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, ch, "work", 5)

	lr := *r
	lr.ReadOnly = readOnly
	live, err := rabbit.NewLive(&lr, "test tui peeks")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	version, err := live.BrokerVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	costless := topology.VersionAtLeast(version, 4, 3)
	w := watchedLive{Live: live, peeks: make(chan watchedPeek, 16)}
	var mu sync.Mutex
	frame := ""
	tap := screenTap{Model: New(Options{Client: w, Refresh: 500 * time.Millisecond, PeekLimit: 50}), mu: &mu, frame: &frame}
	in, keys := io.Pipe()
	defer keys.Close()
	p := tea.NewProgram(tap, tea.WithInput(in), tea.WithOutput(io.Discard), tea.WithoutSignals(), tea.WithWindowSize(160, 40))
	ran := make(chan error, 1)
	go func() { _, err := p.Run(); ran <- err }()
	tm := programKeys{p}
	tap.waitScreen(t, 30*time.Second, "home", has("work.dlq", "● live"))
	press(tm, "/")
	for _, c := range "work" {
		p.Send(tea.KeyPressMsg{Code: c, Text: string(c)})
	}
	press(tm, "enter")
	tap.waitScreen(t, 10*time.Second, "the filter", has("▸ work"))

	inOrder := func(what string) {
		t.Helper()
		tap.waitScreen(t, 30*time.Second, what, func(s string) bool {
			i := strings.Index(s, "m-0")
			for _, id := range []string{"m-1", "m-2", "m-3", "m-4"} {
				j := strings.Index(s, id)
				if i < 0 || j < i {
					return false
				}
				i = j
			}
			return strings.Contains(s, "peeked 5")
		})
	}
	ranPeeks := 0
	inBrowser, repeeks := false, 0
	for attempt := 1; attempt <= 10; attempt++ {
		opening := !inBrowser || repeeks == 2 // open, r, r, esc and open again …
		if opening {
			if inBrowser {
				press(tm, "esc")
				tap.waitScreen(t, 10*time.Second, "home", has("LADDERS"))
				inBrowser = false
			}
			press(tm, "enter")
			repeeks = 0
		} else {
			press(tm, "r")
			repeeks++
		}
		switch {
		case costless:
			pk := w.next(t)
			if pk.err != nil {
				t.Fatalf("peek %d: %v", attempt, pk.err)
			}
			for _, m := range pk.res.Messages {
				if _, ok := m.Headers["x-delivery-count"]; ok {
					t.Fatalf("peek %d counted a delivery", attempt)
				}
			}
			ranPeeks++
			inBrowser = true
			inOrder(fmt.Sprintf("peek %d in order", attempt))
		case readOnly:
			tap.waitScreen(t, 10*time.Second, "the read-only refusal", has("read-only: a peek of this quorum queue counts a delivery"))
			w.none(t)
		default:
			if !opening {
				// r: the unforced peek, refused before touching the queue.
				if pk := w.next(t); pk.err == nil || pk.force {
					t.Fatalf("re-peek %d ran unasked", attempt)
				}
			}
			// Asked (the cost), or refused: the counts seen say another
			// peek would dead-letter.
			tap.waitScreen(t, 10*time.Second, "the question or the refusal", func(s string) bool {
				return strings.Contains(s, "enter/y peek") || strings.Contains(s, "another peek would dead-letter")
			})
			if strings.Contains(tap.screen(), "another peek would dead-letter") {
				w.none(t)
				continue
			}
			if strings.Contains(tap.screen(), "--force") {
				t.Fatalf("the question names --force:\n%s", tap.screen())
			}
			press(tm, "y")
			pk := w.next(t)
			if pk.err != nil || !pk.force {
				t.Fatalf("peek %d after yes: force %v, %v", attempt, pk.force, pk.err)
			}
			ranPeeks++
			inBrowser = true
			inOrder(fmt.Sprintf("peek %d in order", attempt))
		}
	}
	press(tm, "q")
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("the UI: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the UI did not end 30 s after q")
	}

	// Nothing dead-lettered, the order as it was.
	if !brokertest.WaitFor(10*time.Second, func() bool { return readyOf(t, ch, "work") == 5 }) {
		t.Fatalf("work holds %d", readyOf(t, ch, "work"))
	}
	if n := readyOf(t, ch, "work.dlq"); n != 0 {
		t.Fatalf("RabbitMQ %s: %d dead-lettered", version, n)
	}
	var ids []string
	for {
		d, ok, err := ch.Get("work", true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		ids = append(ids, d.MessageId)
	}
	if fmt.Sprint(ids) != "[m-0 m-1 m-2 m-3 m-4]" {
		t.Fatalf("RabbitMQ %s: work holds %v", version, ids)
	}
	t.Logf("RabbitMQ %s, read-only %v: 10 attempts, %d peeks ran", version, readOnly, ranPeeks)
}

func readyOf(t *testing.T, ch *amqp.Channel, q string) int {
	t.Helper()
	st, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st.Messages
}
