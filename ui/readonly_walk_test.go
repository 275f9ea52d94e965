package ui

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// recordingClient is a client that allows everything and records every
// call that would change the broker: Move (but a dry run), Publish, Drain.
type recordingClient struct {
	broker.Client
	mu        sync.Mutex
	mutations []string
}

func (r *recordingClient) record(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mutations = append(r.mutations, what)
}

func (r *recordingClient) Move(ctx context.Context, req broker.MoveRequest, p func(broker.MoveProgress)) (*broker.MoveReport, error) {
	if !req.DryRun {
		r.record("move from " + req.From)
	}
	return r.Client.Move(ctx, req, p)
}

func (r *recordingClient) Publish(ctx context.Context, b []broker.Outgoing) ([]broker.Outcome, error) {
	r.record("publish")
	return r.Client.Publish(ctx, b)
}

func (r *recordingClient) Drain(ctx context.Context, q string, n int, h func(*broker.Message) (bool, error)) (int, error) {
	r.record("drain " + q)
	return r.Client.Drain(ctx, q, n, h)
}

func (r *recordingClient) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.mutations...)
}

// In read-only mode every mutating path of the UI — m on home, browser
// (list and groups) and inspector, space and a (marks choose what to
// move), u unblock, R replay, a move dialog asked for directly (as the
// replay picker and unblock do) — opens no move dialog and calls nothing
// that changes the broker, on a client that would allow it. d (a dump is a
// browse) still works.
func TestReadOnlyRefusesEveryMutatingPath(t *testing.T) {
	t.Chdir(t.TempDir())
	// A dump file for R to offer, were it enabled.
	if err := os.WriteFile("old.jsonl", []byte(`{"ladder_dump":1}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := sim.New(sim.Options{Seed: 1, Now: func() time.Time { return fixedNow }, WarmUp: 10 * time.Minute})
	defer s.Close()
	rc := &recordingClient{Client: s}
	h := newHarnessOn(t, rc, Options{ReadOnly: true}, 120, 40).start()
	if !h.m.c.readOnly {
		t.Fatal("Options.ReadOnly did not make the UI read-only")
	}
	noMove := func(where string) {
		t.Helper()
		if h.m.top() == h.m.move {
			t.Fatalf("%s: the move dialog opened", where)
		}
		if m := rc.seen(); len(m) > 0 {
			t.Fatalf("%s: mutations %q", where, m)
		}
	}
	mutatingKeys := []string{"m", "space", "a", "u", "R"}
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows := len(snap.Topology.Queues)
	if rows < 5 {
		t.Fatalf("the simulation has %d queues", rows)
	}
	browsers, inspectors := 0, 0
	for i := range rows {
		h.key("home")
		for range i {
			h.key("down")
		}
		for _, k := range mutatingKeys {
			h.key(k)
			noMove("home row " + string(rune('0'+i)) + " " + k)
		}
		h.key("enter")
		if h.m.top() == h.m.prompt {
			h.key("y") // the peek-cost question
		}
		if h.m.top() != h.m.browser {
			continue // not a queue row (a ladder heading)
		}
		browsers++
		for _, k := range mutatingKeys {
			h.key(k)
			noMove("browser " + h.m.browser.queue + " " + k)
			for h.m.top() != h.m.browser && h.m.top() != h.m.move {
				h.key("esc")
			}
		}
		h.key("g") // grouped view: m moves a group
		h.key("enter", "m")
		noMove("browser groups " + h.m.browser.queue)
		for h.m.top() != h.m.browser {
			h.key("esc")
		}
		for range len(groupOrder) {
			if h.m.browser.groupBy == "" {
				break
			}
			h.key("g")
		}
		if h.m.browser.res != nil && len(h.m.browser.res.Messages) > 0 {
			h.key("home", "enter")
			if h.m.top() == h.m.inspector {
				inspectors++
				for _, k := range mutatingKeys {
					h.key(k)
					noMove("inspector " + h.m.browser.queue + " " + k)
				}
				h.key("esc")
			}
		}
		h.key("esc")
	}
	if browsers < 3 || inspectors < 1 {
		t.Fatalf("walked %d browsers and %d inspectors", browsers, inspectors)
	}
	// The root refuses the dialog itself, however it is asked for.
	req := broker.MoveRequest{From: "orders.wait.5s", To: moveplan.Target{Kind: moveplan.TargetOrigin}}
	for name, spec := range map[string]movedialog.Spec{
		"move":    {Queue: "orders.dlq", Depth: 3},
		"replay":  {Queue: "orders.dlq", ReplayFile: "old.jsonl"},
		"unblock": {Queue: "orders.wait.5s", Unblock: &req, UnblockPlan: &moveplan.UnblockPlan{}},
	} {
		h.send(openMoveMsg{spec: spec})
		noMove("openMoveMsg " + name)
		h.mustContain("read-only")
	}

	// d is a browse: it writes the file and changes nothing.
	h.key("home")
	for h.m.top() != h.m.browser {
		h.key("down", "enter")
		if h.m.top() == h.m.prompt {
			h.key("y")
		}
	}
	h.key("d", "enter")
	noMove("dump")
	files, _ := filepath.Glob("*.jsonl")
	if len(files) != 2 {
		t.Fatalf("d wrote no dump file: %q", files)
	}
}

// A key read-only withholds says why on the screen, naming who may not:
// a served read-only key ("this key"), a local --read-only ("this run").
// It never does nothing silently.
func TestReadOnlyKeysSayWhy(t *testing.T) {
	for _, c := range []struct {
		who gate.Principal
		by  string
	}{
		{gate.SSH("bob", "SHA256:b", "bob@laptop", gate.RoleReadOnly, ""), "this key"},
		{gate.Local("", true), "this run"},
	} {
		s := sim.New(sim.Options{Seed: 1, Now: func() time.Time { return fixedNow }, WarmUp: 10 * time.Minute})
		h := newHarnessOn(t, s, Options{ReadOnly: true, Who: c.who}, 120, 40).start()
		h.send(openQueueMsg{queue: sim.OrdersDLQ})
		h.mustContain("orders.dlq", "peeked ")
		for _, k := range []struct{ key, action string }{{"m", "move"}, {"space", "move"}, {"a", "move"}, {"u", "unblock"}, {"R", "replay"}} {
			h.key(k.key)
			if want := "read-only: " + c.by + " may not " + k.action; h.m.status != want+" (--read-only, or the context's read-only)" && h.m.status != want {
				t.Errorf("%s %s: status %q, want %q", c.by, k.key, h.m.status, want)
			}
			if h.m.top() != h.m.browser {
				t.Fatalf("%s %s: left the browser for %T", c.by, k.key, h.m.top())
			}
		}
		s.Close()
	}
}
