package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
)

// startMCP runs `ladder mcp args...` as the command line would, over an
// in-memory transport, and connects the SDK's client to it as "test-agent
// 9". The server stops when the test's client closes.
func startMCP(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	return startMCPWith(t, func(args ...string) (int, string, string) { return runLadder(t, args...) }, args...)
}

// startMCPWith is startMCP run by run (runOnSim: on the simulation).
func startMCPWith(t *testing.T, run func(args ...string) (int, string, string), args ...string) *mcp.ClientSession {
	t.Helper()
	serverT, clientT := mcp.NewInMemoryTransports()
	old := mcpTransport
	mcpTransport = func(*app) mcp.Transport { return serverT }
	t.Cleanup(func() { mcpTransport = old })
	done := make(chan string, 1)
	go func() {
		code, _, errOut := run(append([]string{"mcp"}, args...)...)
		if code != exitOK {
			errOut = "exit " + errOut
		}
		done <- errOut
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "9"}, nil)
	cs, err := c.Connect(context.Background(), clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		if e := <-done; strings.HasPrefix(e, "exit") {
			t.Errorf("ladder mcp: %s", e)
		}
	})
	return cs
}

// call calls a tool and gives its result's JSON text (the structured
// content as sent), failing the test on an error unless wantErr.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, wantErr bool) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		if wantErr {
			return err.Error()
		}
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("%s: no content", tool)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError != wantErr {
		t.Fatalf("%s: error %v, want %v: %s", tool, res.IsError, wantErr, text)
	}
	return text
}

// The done-when of ladder mcp on a real broker: an MCP client lists the
// tools (no move without --allow-moves), reads the topology, peeks, groups
// and plans a move with the field names of -o json, and is refused the
// move; the same client of a server started with --allow-moves moves by
// the plan id (not by another), and the audit log names the client.
func TestMCPServerOnTheBroker(t *testing.T) {
	r := vhostEnv(t)
	src := testQueue(t, r, "dlq", 3, nil)
	dst := testQueue(t, r, "work", 0, nil)

	cs := startMCP(t)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"list_contexts", "list_vhosts", "topology", "explain_finding", "peek", "group", "explain_message", "plan_move"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	if slices.Contains(names, "move") {
		t.Errorf("a server without --allow-moves offers move: %v", names)
	}

	var topo present.TopologyReport
	if err := json.Unmarshal([]byte(call(t, cs, "topology", nil, false)), &topo); err != nil || topo.Vhost != r.Vhost {
		t.Fatalf("topology %v: %+v", err, topo)
	}
	var vhosts struct{ Vhosts []string }
	if err := json.Unmarshal([]byte(call(t, cs, "list_vhosts", nil, false)), &vhosts); err != nil || !slices.Contains(vhosts.Vhosts, r.Vhost) {
		t.Errorf("vhosts %v: %v", err, vhosts)
	}

	var peek usecase.GroupedPeek
	text := call(t, cs, "peek", map[string]any{"queue": src, "limit": 2}, false)
	if err := json.Unmarshal([]byte(text), &peek); err != nil || len(peek.Messages) != 2 || peek.Queue != src || peek.Messages[0].Retry.Count != 2 {
		t.Fatalf("peek %v: %s", err, text)
	}
	for _, field := range []string{`"side_effects"`, `"body_sha256"`, `"retry"`} {
		if !strings.Contains(text, field) {
			t.Errorf("peek lacks %s (peek -o json's field): %s", field, text)
		}
	}
	if e := call(t, cs, "peek", map[string]any{"queue": src, "limit": 1000}, true); !strings.Contains(e, "want 1 to 100") {
		t.Errorf("an unbounded peek: %s", e)
	}

	var grouped usecase.GroupedPeek
	if err := json.Unmarshal([]byte(call(t, cs, "group", map[string]any{"queue": src}, false)), &grouped); err != nil || grouped.Grouping == nil || grouped.Grouping.Grouped != 3 {
		t.Fatalf("group %v: %+v", err, grouped.Grouping)
	}

	var msg struct {
		Message broker.Message `json:"message"`
	}
	if err := json.Unmarshal([]byte(call(t, cs, "explain_message", map[string]any{"queue": src, "message_id": "dlq-1"}, false)), &msg); err != nil || msg.Message.Position != 1 || msg.Message.Properties.MessageID != "dlq-1" {
		t.Errorf("explain_message %v: %+v", err, msg.Message)
	}

	planArgs := map[string]any{"from": src, "to": "queue:" + dst}
	var plan struct {
		PlanID string `json:"plan_id"`
		broker.MoveReport
	}
	if err := json.Unmarshal([]byte(call(t, cs, "plan_move", planArgs, false)), &plan); err != nil || plan.PlanID == "" || !plan.DryRun || plan.Requested != 3 || len(plan.Planned) != 3 {
		t.Fatalf("plan_move %v: %+v", err, plan)
	}
	call(t, cs, "move", map[string]any{"plan_id": plan.PlanID}, true)
	if n := depthOf(t, r, src); n != 3 {
		t.Fatalf("a read-only server moved: %d left", n)
	}

	log := filepath.Join(t.TempDir(), "audit.log")
	cs = startMCP(t, "--allow-moves", "--audit-log", log)
	if err := json.Unmarshal([]byte(call(t, cs, "plan_move", planArgs, false)), &plan); err != nil || plan.PlanID == "" {
		t.Fatalf("plan_move %v: %+v", err, plan)
	}
	if e := call(t, cs, "move", map[string]any{"plan_id": "plan-0000000000000000"}, true); !strings.Contains(e, "plan_move") {
		t.Errorf("a move by an id no dry run returned: %s", e)
	}
	var moved broker.MoveReport
	if err := json.Unmarshal([]byte(call(t, cs, "move", map[string]any{"plan_id": plan.PlanID}, false)), &moved); err != nil || moved.Moved != 3 || moved.DryRun {
		t.Fatalf("move %v: %+v", err, moved)
	}
	if a, b := depthOf(t, r, src), depthOf(t, r, dst); a != 0 || b != 3 {
		t.Fatalf("after the move: %d in the source, %d in the target", a, b)
	}
	if e := call(t, cs, "move", map[string]any{"plan_id": plan.PlanID}, true); !strings.Contains(e, "plan_move") {
		t.Errorf("a plan moved twice: %s", e)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit log:\n%s", b)
	}
	for _, l := range lines {
		var ev broker.AuditEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.MCPClient != "test-agent 9" || ev.Role != "mcp" || ev.From != src || ev.Vhost != r.Vhost {
			t.Errorf("audit line %v: %s", err, l)
		}
	}
}

// Hostile message content comes back escaped: no rune a terminal acts on
// reaches the client raw, and the text is there, as data, in its fields.
func TestMCPPeekEscapesHostileMessages(t *testing.T) {
	r := vhostEnv(t)
	q := brokertest.Name(t, "hostile")
	brokertest.PublishHostile(t, r, q, brokertest.HostileMessages(0))
	cs := startMCP(t)
	for _, tool := range []struct {
		name string
		args map[string]any
	}{
		{"peek", map[string]any{"queue": q}},
		{"explain_message", map[string]any{"queue": q, "position": 0}},
		{"group", map[string]any{"queue": q, "by": "error-text"}},
	} {
		text := call(t, cs, tool.name, tool.args, false)
		if strings.ContainsAny(text, "\x1b\x07\u009b\u202e") {
			t.Errorf("%s: a raw control rune in %q", tool.name, text)
		}
		if !strings.Contains(text, `\u001b]0;pwned`) {
			t.Errorf("%s: the hostile text is not there escaped: %s", tool.name, text)
		}
	}
}

// The CLI's consent rules, for an agent: a wait queue whose overdue
// messages any read past its head would release is refused to peek, group,
// explain_message and plan_move (nothing released, the refusal naming the
// flag that allows it), unless the server was started with
// --allow-peek-cost; then the peek reports what it released, as ladder peek
// --force-peek does.
func TestMCPPeekCostNeedsTheServersConsent(t *testing.T) {
	r := vhostEnv(t)
	ctx := context.Background()
	ch := brokertest.Channel(t, r, "test mcp overdue")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	declareDelayQueue(t, ch, "a")
	var published time.Time
	pub := func(id, exp string) {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", "a.delay", false, false, amqp.Publishing{
			MessageId: id, Expiration: exp, Timestamp: time.Now(), Body: []byte(id)})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish %s: %v", id, err)
		}
		published = time.Now()
	}
	pub("head", "3600000")
	for i := range 10 {
		pub(fmt.Sprint("short-", i), "1000")
	}
	time.Sleep(time.Until(published.Add(2 * time.Second)))

	cs := startMCP(t)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"peek", map[string]any{"queue": "a.delay"}},
		{"group", map[string]any{"queue": "a.delay"}},
		{"explain_message", map[string]any{"queue": "a.delay", "message_id": "short-3"}},
		{"plan_move", map[string]any{"from": "a.delay", "to": "queue:a"}},
	} {
		e := call(t, cs, c.tool, c.args, true)
		if !strings.Contains(e, "--allow-peek-cost") || !strings.Contains(e, "a.delay") {
			t.Errorf("%s refused without naming the queue and --allow-peek-cost: %s", c.tool, e)
		}
		if d := depthOf(t, r, "a.delay"); d != 11 {
			t.Fatalf("after a refused %s a.delay holds %d, want 11", c.tool, d)
		}
	}

	cs = startMCP(t, "--allow-peek-cost")
	var res struct {
		Released   int64  `json:"released"`
		ReleasedTo string `json:"released_to"`
	}
	if err := json.Unmarshal([]byte(call(t, cs, "peek", map[string]any{"queue": "a.delay"}, false)), &res); err != nil || res.Released != 10 || res.ReleasedTo != "queue a" {
		t.Errorf("peek with --allow-peek-cost: %v, released %d to %q", err, res.Released, res.ReleasedTo)
	}
}

// A quorum queue with a delivery limit: where a peek would count a
// delivery toward it (before RabbitMQ 4.3), the peek tool refuses before
// touching the queue, naming --allow-peek-cost, and a server started with
// it peeks; where the browse is free (4.3+), it peeks either way.
func TestMCPPeekOfALimitedQuorumQueue(t *testing.T) {
	r := vhostEnv(t)
	q := testQueue(t, r, "limited", 2, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3)})
	cs := startMCP(t)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "peek", Arguments: map[string]any{"queue": q}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError {
		t.Logf("browsed at no cost: %.200s", text)
		return
	}
	if !strings.Contains(text, "--allow-peek-cost") {
		t.Errorf("refusal without the flag that allows it: %s", text)
	}
	cs = startMCP(t, "--allow-peek-cost")
	var peek usecase.GroupedPeek
	if err := json.Unmarshal([]byte(call(t, cs, "peek", map[string]any{"queue": q}, false)), &peek); err != nil || len(peek.Messages) != 2 {
		t.Fatalf("peek with --allow-peek-cost: %v, %d messages", err, len(peek.Messages))
	}
	// The refused peek counted nothing: only the allowed one did (once).
	ids, counted := takeAll(t, r, q)
	if len(ids) != 2 || len(counted) > 2 {
		t.Errorf("ids %v, counted %v", ids, counted)
	}
	for _, c := range counted {
		if !strings.HasSuffix(c, ":1") {
			t.Errorf("delivery counted more than once: %v", counted)
		}
	}
}

// Replays, as moves: a server with --files offers the directory's dump
// files and plans a replay of one (nothing published), never a path out of
// it; the replay tool exists only with --allow-moves, runs only the plan
// id plan_replay returned (not a move's), and its audit lines name the
// client.
func TestMCPReplayByPlanID(t *testing.T) {
	r := vhostEnv(t)
	src := testQueue(t, r, "src", 2, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	dir := t.TempDir()
	if code, _, errOut := runLadder(t, "dump", src, "--out", filepath.Join(dir, "src.jsonl")); code != exitOK {
		t.Fatalf("dump: exit %d %s", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(t.TempDir(), "outside.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	cs := startMCP(t, "--files", dir)
	var dumps struct{ Files []string }
	if err := json.Unmarshal([]byte(call(t, cs, "list_dumps", nil, false)), &dumps); err != nil || !slices.Equal(dumps.Files, []string{"src.jsonl"}) {
		t.Fatalf("list_dumps %v: %v", err, dumps)
	}
	if e := call(t, cs, "plan_replay", map[string]any{"file": "../outside.jsonl", "to": "queue:" + dst}, true); !strings.Contains(e, "not a dump file") {
		t.Errorf("a path out of --files: %s", e)
	}
	call(t, cs, "replay", map[string]any{"plan_id": "x"}, true)

	log := filepath.Join(t.TempDir(), "audit.log")
	cs = startMCP(t, "--files", dir, "--allow-moves", "--audit-log", log)
	var plan struct {
		PlanID string `json:"plan_id"`
		broker.MoveReport
	}
	if err := json.Unmarshal([]byte(call(t, cs, "plan_replay", map[string]any{"file": "src.jsonl", "to": "queue:" + dst}, false)), &plan); err != nil || plan.PlanID == "" || !plan.DryRun || plan.Requested != 2 {
		t.Fatalf("plan_replay %v: %+v", err, plan)
	}
	if n := depthOf(t, r, dst); n != 0 {
		t.Fatalf("a dry run published %d", n)
	}
	var move struct {
		PlanID string `json:"plan_id"`
	}
	if err := json.Unmarshal([]byte(call(t, cs, "plan_move", map[string]any{"from": src, "to": "queue:" + dst}, false)), &move); err != nil || move.PlanID == "" {
		t.Fatal(err)
	}
	if e := call(t, cs, "replay", map[string]any{"plan_id": move.PlanID}, true); !strings.Contains(e, "plan_replay") {
		t.Errorf("a replay by a move's plan id: %s", e)
	}
	var rep broker.MoveReport
	if err := json.Unmarshal([]byte(call(t, cs, "replay", map[string]any{"plan_id": plan.PlanID}, false)), &rep); err != nil || rep.Moved != 2 {
		t.Fatalf("replay %v: %+v", err, rep)
	}
	if n := depthOf(t, r, dst); n != 2 {
		t.Fatalf("%s holds %d after the replay, want 2", dst, n)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit log:\n%s", b)
	}
	for _, l := range lines {
		var ev broker.AuditEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Action != "replay" || ev.MCPClient != "test-agent 9" || ev.Role != "mcp" {
			t.Errorf("audit line %v: %s", err, l)
		}
	}
}
