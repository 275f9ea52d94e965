package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/ui"
)

// clientMethods says, for every method of the client contract, whether it
// acts on messages (and so must pass the gate: authorized, audited) or
// only reads. A method added to broker.Client fails the walk below until
// it is named here, so nobody adds an action the gate does not know.
var clientMethods = map[string]string{
	"Move": "acts", "Publish": "acts", "Drain": "acts",
	"Audit":    "the gate's hook (opens and closes an action)",
	"Failover": "opens another node's client (behind the same gate)",
	"Snapshot": "reads", "AllVhosts": "reads", "Topology": "reads", "BrokerVersion": "reads", "Vhost": "reads",
	"Peek": "reads", "PublishLimits": "reads", "Vhosts": "reads", "ReadOnly": "reads", "Close": "reads",
}

// watch is the broker every face reaches in the walk: the simulation,
// with each call that acts on messages checked, as it reaches the broker,
// against the audit log — an action must be open there (a start line,
// written only once the principal was authorized), by whom the face says.
type watch struct {
	broker.Client
	audit string

	mu      sync.Mutex
	reached map[string]int
	bad     []string
}

func newWatch(s *sim.Sim, audit string) *watch {
	return &watch{Client: s, audit: audit, reached: map[string]int{}}
}

func (w *watch) check(method, what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reached[method]++
	b, _ := os.ReadFile(w.audit)
	starts, dones := strings.Count(string(b), `"phase":"start"`), strings.Count(string(b), `"phase":"done"`)
	if starts <= dones {
		w.bad = append(w.bad, what+" reached the broker with no audited action open")
	}
}

func (w *watch) Move(ctx context.Context, req broker.MoveRequest, p func(broker.MoveProgress)) (*broker.MoveReport, error) {
	if !req.DryRun {
		w.check("Move", "move from "+req.From)
	}
	return w.Client.Move(ctx, req, p)
}

func (w *watch) Publish(ctx context.Context, b []broker.Outgoing) ([]broker.Outcome, error) {
	w.check("Publish", "a publish")
	return w.Client.Publish(ctx, b)
}

func (w *watch) Drain(ctx context.Context, q string, n int, h func(*broker.Message) (bool, error)) (int, error) {
	w.check("Drain", "a drain of "+q)
	return w.Client.Drain(ctx, q, n, h)
}

func (w *watch) Close() error { return nil }

// runWatched runs ladder's command line on w.
func runWatched(t *testing.T, w *watch, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	connect := func(cfg rabbit.Config, _ string) (broker.Client, func(), error) {
		if cfg.ReadOnly {
			return readOnlyWatch{w}, func() {}, nil
		}
		return w, func() {}, nil
	}
	code := run(args, strings.NewReader(""), &out, &errb, Build{Version: "dev"}, connect)
	return code, errb.String()
}

// readOnlyWatch is w as a read-only configuration's client says it is.
type readOnlyWatch struct{ *watch }

func (readOnlyWatch) ReadOnly() bool { return true }

// Every path that acts on messages, from every face — the command line,
// the TUI, a session of ladder serve — reaches the broker only inside an
// action the gate authorized and wrote to the audit log; read-only
// principals reach it not at all.
func TestEveryActionPassesTheGate(t *testing.T) {
	for i := range reflect.TypeFor[broker.Client]().NumMethod() {
		m := reflect.TypeFor[broker.Client]().Method(i).Name
		if clientMethods[m] == "" {
			t.Errorf("broker.Client.%s: say in clientMethods whether it acts (an action must pass internal/gate, and this walk)", m)
		}
	}

	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	s := newSim(t)
	w := newWatch(s, audit)
	dump := filepath.Join(dir, "dlq.jsonl")

	// The command line.
	for _, args := range [][]string{
		{"dump", sim.OrdersDLQ, "--out", dump, "-n", "3"},
		{"move", "--from", sim.OrdersDLQ, "--to", "origin", "-n", "2", "--yes"},
		{"replay", dump, "--to", "queue:" + sim.OrdersDLQ, "--yes"},
		{"dump", sim.OrdersDLQ, "--out", filepath.Join(dir, "drained.jsonl"), "--consume", "-n", "2", "--yes"},
		{"unblock", sim.PaymentsWait, "--force-peek", "--yes"},
	} {
		if code, errOut := runWatched(t, w, append([]string{"--audit-log", audit}, args...)...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	// Read-only: refused before the broker.
	for _, args := range [][]string{
		{"move", "--from", sim.OrdersDLQ, "--to", "origin", "--yes"},
		{"replay", dump, "--to", "queue:" + sim.OrdersDLQ, "--resume", "--yes"},
		{"dump", sim.OrdersDLQ, "--out", filepath.Join(dir, "ro.jsonl"), "--consume", "--yes"},
	} {
		before := w.total()
		if code, _ := runWatched(t, w, append([]string{"--audit-log", audit, "--read-only"}, args...)...); code == exitOK || w.total() != before {
			t.Errorf("--read-only %v: exit %d, reached the broker %d times", args, code, w.total()-before)
		}
	}

	// The TUI, on the client the command line's factory gives it (as
	// ladder with no command does).
	a := &app{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, build: Build{Version: "dev"}, auditLog: audit,
		connect: func(rabbit.Config, string) (broker.Client, func(), error) { return w, func() {}, nil }}
	defer a.closeAudit()
	c, closeClient, err := a.client("ui")
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient()
	before := w.count("Move")
	tm := teatest.NewTestModel(t, ui.New(ui.Options{Client: c, NoColor: true}), teatest.WithInitialTermSize(120, 40))
	for _, step := range [][2]string{
		{"", "LADDERS"}, {"/" + sim.OrdersDLQ + "\r\r", "peeked "}, {"m", "Move / re-publish from " + sim.OrdersDLQ},
		{"\r", "Confirm move"},
	} {
		for _, r := range step[0] {
			if r == '\r' {
				tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
				continue
			}
			tm.Type(string(r))
		}
		t.Logf("TUI: waiting for %q", step[1])
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(step[1])) }, teatest.WithDuration(20*time.Second))
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	eventually(t, 20*time.Second, "the TUI's move", func() bool { return w.count("Move") > before }, func() string { return "no move reached the broker" })
	tm.Send(tea.QuitMsg{})

	// A session of ladder serve: an operator's move; a read-only key's m.
	op, viewer := serveSigner(t), serveSigner(t)
	keys := writeKeys(t, keyLine("role=operator", op, "alice@laptop"), keyLine("", viewer, "bob@laptop"))
	sv := startServeOn(t, w, readOnlyWatch{w}, "serve", "--ssh", "127.0.0.1:0", "--authorized-keys", keys, "--host-key", filepath.Join(dir, "host_key"),
		"--audit-log", audit, "--files", filepath.Join(dir, "files"), "--no-color")
	toDLQ := [2]string{"/" + sim.OrdersDLQ + "\r\r", "peeked "}
	before = w.total()
	sv.screen(t, "bob", viewer, [2]string{"", "LADDERS"}, toDLQ, [2]string{"m", "may not move"}, [2]string{"q", ""})
	if w.total() != before {
		t.Error("a read-only key's session reached the broker with an action")
	}
	sv.screen(t, "alice", op, [2]string{"", "LADDERS"}, toDLQ, [2]string{"m", "Move / re-publish from " + sim.OrdersDLQ},
		[2]string{"\r", "Confirm move"}, [2]string{"y", "Summary"}, [2]string{"\r", "q quit"}, [2]string{"q", ""})
	if err := sv.stop(); err != nil {
		t.Fatal(err)
	}
	if w.total() == before {
		t.Error("the served move did not reach the broker")
	}

	// An MCP client of ladder mcp: refused without --allow-moves before
	// the broker; with it, a move and a replay by their plan ids.
	mcpFiles := filepath.Join(dir, "mcp")
	if err := os.Mkdir(mcpFiles, 0o700); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(dump); err != nil || os.WriteFile(filepath.Join(mcpFiles, "dlq.jsonl"), b, 0o600) != nil {
		t.Fatalf("copying the dump: %v", err)
	}
	runMCP := func(args ...string) (int, string, string) {
		code, errOut := runWatched(t, w, args...)
		return code, "", errOut
	}
	var plan struct {
		PlanID string `json:"plan_id"`
	}
	planOf := func(cs *mcp.ClientSession, tool string, args map[string]any) string {
		if err := json.Unmarshal([]byte(call(t, cs, tool, args, false)), &plan); err != nil || plan.PlanID == "" {
			t.Fatalf("%s: %v", tool, err)
		}
		return plan.PlanID
	}
	cs := startMCPWith(t, runMCP, "--audit-log", audit, "--files", mcpFiles)
	before = w.total()
	id := planOf(cs, "plan_move", map[string]any{"from": sim.OrdersDLQ, "to": "origin"})
	call(t, cs, "move", map[string]any{"plan_id": id}, true)
	if w.total() != before { // a dry run is not counted
		t.Errorf("an MCP client without --allow-moves reached the broker %d times", w.total()-before)
	}
	cs = startMCPWith(t, runMCP, "--audit-log", audit, "--files", mcpFiles, "--allow-moves")
	call(t, cs, "move", map[string]any{"plan_id": planOf(cs, "plan_move", map[string]any{"from": sim.OrdersDLQ, "to": "origin", "limit": 1})}, false)
	call(t, cs, "replay", map[string]any{"plan_id": planOf(cs, "plan_replay", map[string]any{"file": "dlq.jsonl", "to": "queue:" + sim.OrdersDLQ})}, false)
	cs.Close()

	for m, kind := range clientMethods {
		if kind == "acts" && w.count(m) == 0 {
			t.Errorf("no face reached %s: the walk does not cover it", m)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.bad) > 0 {
		t.Fatalf("unaudited: %s", strings.Join(slices.Compact(w.bad), "; "))
	}
	evs := auditLines(t, audit)
	if !slices.ContainsFunc(evs, func(ev broker.AuditEvent) bool {
		return ev.SSHUser == "alice" && ev.Role == "operator" && ev.Action == "move"
	}) {
		t.Error("no audit line names the served operator's move")
	}
	for _, action := range []string{"move", "replay"} {
		if !slices.ContainsFunc(evs, func(ev broker.AuditEvent) bool {
			return ev.MCPClient == "test-agent 9" && ev.Role == "mcp" && ev.Action == action && ev.Phase == "done"
		}) {
			t.Errorf("no audit line names the MCP client's %s", action)
		}
	}
}

func (w *watch) count(m string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reached[m]
}

func (w *watch) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, c := range w.reached {
		n += c
	}
	return n
}
