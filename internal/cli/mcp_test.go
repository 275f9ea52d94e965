package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/topology"
)

// explain_finding gives each finding of a code as topology lists it (its
// fields), with what it means and the command that answers it; a code the
// vhost does not show now is an error, not an invented finding.
func TestMCPExplainFindingOnTheSimulation(t *testing.T) {
	s := newSim(t)
	cs := startMCPWith(t, func(args ...string) (int, string, string) { return runOnSim(t, s, args...) })
	var topo struct {
		Findings []topology.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(call(t, cs, "topology", nil, false)), &topo); err != nil || len(topo.Findings) == 0 {
		t.Fatalf("topology: %v, %d findings", err, len(topo.Findings))
	}
	f := topo.Findings[0]
	var got struct {
		Findings []struct {
			topology.Finding
			Meaning string `json:"meaning"`
			Next    string `json:"next"`
		} `json:"findings"`
	}
	text := call(t, cs, "explain_finding", map[string]any{"code": f.Code, "queue": f.Queue}, false)
	if err := json.Unmarshal([]byte(text), &got); err != nil || len(got.Findings) == 0 {
		t.Fatalf("explain_finding %v: %s", err, text)
	}
	for _, g := range got.Findings {
		if g.Code != f.Code || g.Queue != f.Queue || g.Message == "" || g.Meaning == "" || !strings.HasPrefix(g.Next, "ladder ") {
			t.Errorf("%+v", g)
		}
	}
	if e := call(t, cs, "explain_finding", map[string]any{"code": "no-such-code"}, true); !strings.Contains(e, "no finding") {
		t.Errorf("an unknown code: %s", e)
	}
}

// A plan's id is its plan's: the same dry run on an unchanged broker gives
// the same id, another target another; plan_move changes nothing.
func TestMCPPlanIDNamesThePlan(t *testing.T) {
	s := newSim(t)
	cs := startMCPWith(t, func(args ...string) (int, string, string) { return runOnSim(t, s, args...) })
	id := func(to string) string {
		var p struct {
			PlanID    string `json:"plan_id"`
			Requested int    `json:"requested"`
			DryRun    bool   `json:"dry_run"`
		}
		text := call(t, cs, "plan_move", map[string]any{"from": sim.OrdersDLQ, "to": to}, false)
		if err := json.Unmarshal([]byte(text), &p); err != nil || p.PlanID == "" || !p.DryRun || p.Requested == 0 {
			t.Fatalf("plan_move %v: %s", err, text)
		}
		return p.PlanID
	}
	a, b, c := id("origin"), id("origin"), id("queue:"+sim.OrdersMain)
	if a != b || a == c {
		t.Errorf("ids %s %s %s: want the first two equal, the third not", a, b, c)
	}
}

// An assistant may call tools at once (the SDK runs calls concurrently):
// each call opens its own client through the one factory, and every one
// answers.
func TestMCPConcurrentCallsOnTheSimulation(t *testing.T) {
	s := newSim(t)
	cs := startMCPWith(t, func(args ...string) (int, string, string) { return runOnSim(t, s, args...) }, "--audit-log", filepath.Join(t.TempDir(), "audit.log"))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			tool, args := "topology", map[string]any(nil)
			if i%2 == 1 {
				tool, args = "peek", map[string]any{"queue": sim.OrdersDLQ, "limit": 3}
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
			if err == nil && res.IsError {
				err = fmt.Errorf("%s: %v", tool, res.Content)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// A group result stays small whatever the queue: the largest groups, the
// first positions of each, partial saying what was left out.
func TestMCPBoundGroups(t *testing.T) {
	res := &usecase.GroupedPeek{PeekResult: &broker.PeekResult{}}
	for i := range mcpGroupsMax + 10 {
		res.Groups = append(res.Groups, usecase.Group{Key: fmt.Sprint(i), Count: i, Positions: make([]int, i*3)})
	}
	res = boundGroups(res)
	if len(res.Groups) != mcpGroupsMax || res.Groups[0].Count != mcpGroupsMax+9 || res.Groups[mcpGroupsMax-1].Count != 10 {
		t.Errorf("%d groups, first of %d, last of %d", len(res.Groups), res.Groups[0].Count, res.Groups[len(res.Groups)-1].Count)
	}
	for _, g := range res.Groups {
		if len(g.Positions) > mcpPositionsMax {
			t.Errorf("group %s: %d positions", g.Key, len(g.Positions))
		}
	}
	if len(res.Partial) != 2 || !strings.Contains(res.Partial[0], "50 largest of 60 groups") {
		t.Errorf("partial %q", res.Partial)
	}
}
