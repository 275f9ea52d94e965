package ui

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/files"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// Golden frames, ANSI stripped, at 80×24 and 160×48. Regenerate with
// go test ./ui -run TestGolden -update
func TestGolden(t *testing.T) {
	sizes := [][2]int{{80, 24}, {160, 48}}
	screens := []struct {
		name string
		opts Options
		to   func(h *harness)
	}{
		{"home", Options{Title: "demo"}, func(h *harness) {}},
		{"home_finding", Options{Title: "demo"}, func(h *harness) { h.key("down", "down", "down", "down", "down") }},
		// Sorted by findings (s three times: depth, growth, findings): the
		// payments ladder's error comes before orders' warning.
		{"home_sorted", Options{Title: "demo"}, func(h *harness) { h.key("s", "s", "s") }},
		// payments' ladder and audit emptied: e hides them.
		{"home_hidden", Options{Title: "demo"}, func(h *harness) {
			emptyQueues(h, "payments.wait", "audit")
			h.key("e")
		}},
		// f on home, then down: the second finding selected.
		{"findings", Options{Title: "demo"}, func(h *harness) { h.key("f", "down") }},
		{"browser", Options{}, func(h *harness) { h.key("down", "down", "down", "enter", "space") }},
		// orders has consumers: opening it asks before peeking.
		{"peek_question", Options{}, func(h *harness) { h.key("enter") }},
		{"inspector", Options{}, func(h *harness) { h.key("down", "down", "down", "enter", "down", "enter") }},
		{"inspector_body", Options{}, func(h *harness) { h.key("down", "down", "down", "enter", "enter", "G") }},
		{"move_form", Options{}, func(h *harness) { h.key("down", "down", "down", "enter", "space", "m", "tab", "right", "tab", "right") }},
		{"move_typed", Options{}, func(h *harness) {
			h.key("down", "down", "down", "enter", "m", "tab", "left")
			h.typeText("exchange:orders-x:orders.created")
			h.key("tab", "left")
			h.typeText("90s")
		}},
		// The command line's flags as fields: -n, --where, --rate, --max-moves.
		{"move_flags", Options{}, func(h *harness) {
			h.key("down", "down", "down", "enter", "m", "right", "tab", "tab", "tab", "tab", "tab")
			h.typeText(`reason=rejected error~"card declined"`)
			h.key("tab")
			h.typeText("50/s")
		}},
		{"move_preview", Options{}, func(h *harness) {
			h.key("down", "down", "down", "enter", "space", "space", "m", "tab", "right", "tab", "right", "enter")
		}},
		{"move_progress", Options{}, func(h *harness) {
			h.key("down", "down", "down", "enter", "m", "enter")
			mv := h.m.move
			mv.SetRunning(broker.MoveProgress{}, nil)
			h.send(movedialog.ProgressMsg{ID: mv.ID(), Progress: broker.MoveProgress{Total: 40, Done: 10, Moved: 9, Failed: 1, Elapsed: 4 * time.Second}})
		}},
		{"move_summary", Options{}, func(h *harness) {
			h.key("down", "down", "down", "enter", "space", "m", "tab", "right", "enter", "enter")
		}},
		// A served session's d: a yes, no file name asked; a read-only
		// key's, refused on the status line (files.Confined; no file is
		// touched before the yes).
		{"dump_served", Options{Files: files.NewConfined("/nonexistent/files", files.ConfinedOptions{User: "alice"})}, func(h *harness) {
			h.key("down", "down", "down", "enter", "d")
		}},
		{"dump_served_readonly", Options{ReadOnly: true, Who: gate.SSH("bob", "", "", gate.RoleReadOnly, ""), Files: files.NewConfined("/nonexistent/files", files.ConfinedOptions{User: "bob", Writes: gate.SSH("bob", "", "", gate.RoleReadOnly, "").May(gate.WriteFile)})}, func(h *harness) {
			h.key("down", "down", "down", "enter", "d")
		}},
		{"help", Options{}, func(h *harness) { h.key("?") }},
		{"help_readonly", Options{ReadOnly: true}, func(h *harness) { h.key("?") }},
		// Over the move form: its keys, then what each field is (the flags).
		{"help_move", Options{}, func(h *harness) { h.key("down", "down", "down", "enter", "m", "?") }},
		{"disconnected", Options{Title: "demo"}, func(h *harness) {
			h.send(snapshotMsg{gen: h.m.gen, err: errors.New("dial tcp 127.0.0.1:15672: connect: connection refused")})
			h.send(snapshotMsg{gen: h.m.gen, err: errors.New("dial tcp 127.0.0.1:15672: connect: connection refused")})
		}},
	}
	for _, sc := range screens {
		for _, sz := range sizes {
			t.Run(sc.name+"_"+strconv.Itoa(sz[0])+"x"+strconv.Itoa(sz[1]), func(t *testing.T) {
				h := newHarness(t, newFake(), sc.opts, sz[0], sz[1]).start()
				sc.to(h)
				golden.RequireEqual(t, h.plain())
			})
		}
	}
	t.Run("too_small_79x23", func(t *testing.T) {
		h := newHarness(t, newFake(), Options{}, 79, 23).start()
		golden.RequireEqual(t, h.plain())
	})
}

// emptyQueues refreshes the harness's fake with the named queues empty.
func emptyQueues(h *harness, names ...string) {
	fc := h.m.client.(*fakeClient)
	fc.mu.Lock()
	for i := range fc.snap.Topology.Queues {
		q := &fc.snap.Topology.Queues[i]
		if slices.Contains(names, q.Name) {
			q.Messages, q.Ready, q.Unacked = 0, 0, 0
		}
	}
	fc.mu.Unlock()
	h.send(pollMsg{gen: h.m.gen})
}
