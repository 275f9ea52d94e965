package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Command tests on the embedded simulation: no broker needed. The
// simulation's clock is fixed, so every command sees the same broker.

func newSim(t *testing.T) *sim.Sim {
	t.Helper()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := sim.New(sim.Options{Seed: 3, Now: func() time.Time { return now }, WarmUp: 10 * time.Minute})
	t.Cleanup(func() { s.Close() })
	return s
}

// runOnSim runs ladder with the simulation as its broker.
func runOnSim(t *testing.T, s *sim.Sim, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	connect := func(rabbit.Config, string) (broker.Client, func(), error) { return s, func() {}, nil }
	code = run(args, strings.NewReader(""), &out, &errb, Build{Version: "dev"}, connect)
	return code, out.String(), errb.String()
}

func TestTopologyOnTheSimulation(t *testing.T) {
	s := newSim(t)
	code, out, errOut := runOnSim(t, s, "topology", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var rep present.TopologyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var mains []string
	for _, l := range rep.Ladders {
		mains = append(mains, l.Main.Name)
	}
	if !strings.Contains(strings.Join(mains, " "), sim.OrdersMain) || len(rep.Findings) == 0 {
		t.Errorf("ladders %v, %d findings", mains, len(rep.Findings))
	}
	code, out, _ = runOnSim(t, s, "topology")
	if code != exitOK || !strings.Contains(out, sim.OrdersWait30s) || !strings.Contains(out, "FINDINGS") && !strings.Contains(out, "finding") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

func TestPeekOnTheSimulation(t *testing.T) {
	s := newSim(t)
	code, out, errOut := runOnSim(t, s, "peek", sim.OrdersDLQ, "-n", "3", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var res broker.PeekResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 3 || len(res.Messages[0].Deaths) == 0 || res.Messages[0].Origin == nil {
		t.Errorf("peek %+v", res)
	}
	code, _, errOut = runOnSim(t, s, "peek", "no.such.queue")
	if code != exitError || !strings.Contains(errOut, `"no.such.queue"`) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("missing queue: exit %d %q", code, errOut)
	}
}

// ladder peek asks nothing (it says it is a peek) but never keeps its cost
// quiet: the side effects lead the table, grouped or filtered to nothing
// too, and are in the JSON, the same sentences either way.
func TestPeekOutputKeepsItsSideEffects(t *testing.T) {
	s := newSim(t)
	want := broker.PeekSideEffectsVia(broker.PeekModeOf(topology.Queue{Type: topology.QueueClassic}, sim.BrokerVersion), topology.QueueClassic, sim.BrokerVersion)
	if len(want) == 0 {
		t.Fatal("a classic peek has no side effects to check")
	}
	code, out, errOut := runOnSim(t, s, "peek", sim.OrdersDLQ, "-n", "3", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var res struct {
		SideEffects []string `json:"side_effects"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.SideEffects, "|") != strings.Join(want, "|") {
		t.Errorf("JSON side_effects %q, want %q", res.SideEffects, want)
	}
	for _, args := range [][]string{
		{"peek", sim.OrdersDLQ, "-n", "3"},
		{"peek", sim.OrdersDLQ, "-n", "3", "--group-by", "reason"},
		{"peek", sim.OrdersDLQ, "-n", "3", "--where", "retries>=1000"},
	} {
		code, out, errOut := runOnSim(t, s, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		lines := strings.Split(out, "\n")
		for i, effect := range want {
			if i+1 >= len(lines) || lines[i+1] != "! "+effect {
				t.Errorf("%v: line %d is not the side effect %q:\n%s", args, i+2, effect, out)
			}
		}
	}
}

// The dry run's plan is what the move does: same routes, same counts.
func TestMoveOnTheSimulationDoesWhatTheDryRunSaid(t *testing.T) {
	s := newSim(t)
	args := []string{"move", "--from", sim.OrdersDLQ, "--to", "origin", "--delay", "5s", "-n", "4", "-o", "json"}
	code, out, errOut := runOnSim(t, s, append(args, "--dry-run")...)
	if code != exitOK {
		t.Fatalf("dry run: exit %d %s", code, errOut)
	}
	var plan broker.MoveReport
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Planned) != 4 || plan.Via[topology.ViaTier] == 0 {
		t.Fatalf("plan %+v", plan)
	}
	before := dlqDepth(t, s)
	code, out, errOut = runOnSim(t, s, append(args, "--yes")...)
	if code != exitOK && code != exitPartial {
		t.Fatalf("move: exit %d %s", code, errOut)
	}
	var rep broker.MoveReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Moved != plan.Requested-plan.Skipped || !equalRoutes(rep.Routes, plan.Routes) {
		t.Errorf("moved %d via %v; the dry run planned %d via %v", rep.Moved, rep.Routes, plan.Requested-plan.Skipped, plan.Routes)
	}
	if after := dlqDepth(t, s); after != before-rep.Moved {
		t.Errorf("DLQ %d → %d after moving %d", before, after, rep.Moved)
	}
}

func equalRoutes(a, b []moveplan.RouteCount) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func dlqDepth(t *testing.T, s *sim.Sim) int {
	t.Helper()
	snap, err := s.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	q, _ := snap.Queue(sim.OrdersDLQ)
	return int(q.Ready)
}

func TestMoveRefusalsNeverReachTheBroker(t *testing.T) {
	var out, errb bytes.Buffer
	connect := func(rabbit.Config, string) (broker.Client, func(), error) {
		t.Error("a refused move connected to the broker")
		return nil, nil, nil
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--read-only", "move", "--from", "q", "--to", "origin", "--yes"}, exitError, "read-only"},
		{[]string{"move", "--from", "q", "--to", "origin"}, exitUsage, "--yes"},
		{[]string{"move", "--to", "origin", "--yes"}, exitUsage, "--from is required"},
		{[]string{"move", "--from", "q", "--to", "topic:x", "--yes"}, exitUsage, `--to "topic:x"`},
		{[]string{"move", "--from", "q", "--to", "origin", "--delay", "-1s", "--yes"}, exitUsage, "--delay"},
	} {
		out.Reset()
		errb.Reset()
		code := run(c.args, strings.NewReader(""), &out, &errb, Build{}, connect)
		if code != c.code || !strings.Contains(errb.String(), c.want) || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out.String(), errb.String())
		}
	}
}

func TestScheduleOnTheSimulation(t *testing.T) {
	s := newSim(t)
	code, out, errOut := runOnSim(t, s, "schedule", "--backoff", "exponential", "--base", "5s", "--factor", "5", "--attempts", "3", "--ladder", sim.OrdersMain)
	if code != exitOK || !strings.Contains(out, sim.OrdersWait5s) || !strings.Contains(out, sim.OrdersWait30s+" (longer)") {
		t.Fatalf("exit %d %s\n%s", code, errOut, out)
	}
	code, _, errOut = runOnSim(t, s, "schedule", "--backoff", "fixed", "--base", "5s", "--ladder", "no.such.queue")
	if code != exitError || !strings.Contains(errOut, `--ladder "no.such.queue"`) {
		t.Errorf("exit %d %q", code, errOut)
	}
	code, _, errOut = runOnSim(t, s, "schedule", "--backoff", "fixed")
	if code != exitUsage || !strings.Contains(errOut, "--base is required") {
		t.Errorf("missing --base: exit %d %q", code, errOut)
	}
}

// Usage errors are typed: the exit code never depends on cobra's wording.
func TestUsageErrorsAreTyped(t *testing.T) {
	s := newSim(t)
	for _, args := range [][]string{{"nope"}, {"--nope"}, {"peek"}, {"peek", "a", "b"}, {"topology", "extra"}, {"peek", "q", "-n", "x"}} {
		if code, _, errOut := runOnSim(t, s, args...); code != exitUsage {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
}

// A rate that is not a finite positive number is a bad flag value, not "no
// limit" (strconv reads NaN and Inf): exit 2 naming the flag, nothing moved.
func TestRateMustBeFinite(t *testing.T) {
	s := newSim(t)
	before := countReady(t, s, sim.OrdersDLQ)
	for _, r := range []string{"NaN/s", "Inf/s", "+Inf", "+Inf/m", "-inf/m", "nan", "-1/s", "0/s"} {
		code, _, errOut := runOnSim(t, s, "move", "--from", sim.OrdersDLQ, "--to", "queue:"+sim.OrdersMain, "--rate", r, "--yes")
		if code != exitUsage || !strings.Contains(errOut, "--rate") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("--rate %s: exit %d %q", r, code, errOut)
		}
	}
	if got := countReady(t, s, sim.OrdersDLQ); got != before {
		t.Errorf("the DLQ went from %d to %d", before, got)
	}
}

func countReady(t *testing.T, s *sim.Sim, q string) int64 {
	t.Helper()
	res, err := s.Peek(t.Context(), q, broker.PeekOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ready == 0 {
		t.Fatalf("%s is empty: nothing to see moved", q)
	}
	return int64(res.Ready)
}
