package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// Issue 33: ladder demo honours --audit-log as every other face does: a
// move made in the demo's UI (the real binary, in tmux) writes its start
// and done lines, naming the broker "demo".
func TestDemoWritesTheAuditLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	s := newTmux(t, "120", "40", nil, "demo", "--audit-log", log)
	s.waitFor("LADDERS", "orders.dlq")
	selected := func() bool { // the cursor's row, drawn ▸ … orders.dlq
		for _, l := range strings.Split(ansi.Strip(s.screen()), "\n") {
			if strings.HasPrefix(l, "▸") && strings.Contains(l, "orders.dlq") {
				return true
			}
		}
		return false
	}
	// The home filter selects the one queue it matches.
	s.keys("/")
	s.keys("-l", "orders.dlq")
	s.keys("Enter")
	if !brokertest.WaitFor(20*time.Second, selected) {
		t.Fatalf("orders.dlq never selected:\n%s", ansi.Strip(s.screen()))
	}
	s.keys("Enter")
	s.waitFor("peeked")
	s.keys("m")
	s.waitFor("Move / re-publish from orders.dlq", "this message (#0)")
	s.keys("Enter")
	s.waitFor("Confirm move", "move now")
	s.keys("Enter")
	s.waitFor("Moved the message")
	s.keys("Escape", "q")

	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the demo wrote no audit log: %v", err)
	}
	var phases []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev struct{ Phase, Broker, Action, From string }
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if ev.Broker != "demo" || ev.Action != "move" || ev.From != "orders.dlq" {
			t.Errorf("audit line %s", l)
		}
		phases = append(phases, ev.Phase)
	}
	if strings.Join(phases, ",") != "start,done" {
		t.Errorf("audit phases %q, want start then done:\n%s", phases, b)
	}
}
