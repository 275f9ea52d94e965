package gate

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// An MCP client of a server started without --allow-moves is refused a
// move before anything is written or reaches the broker, and told which
// flag allows it; a dry run passes. It never writes files.
func TestGateRefusesAnMCPClientWithoutAllowMoves(t *testing.T) {
	var buf bytes.Buffer
	var log []string
	g := New(&recorder{log: &log}, Options{Principal: MCP("agent 1.0", "", false, false), Log: NewLog(&buf)})
	req := broker.MoveRequest{From: "dlq", To: moveplan.Target{Kind: moveplan.TargetOrigin}}
	_, err := g.Move(context.Background(), req, nil)
	var refused *Refused
	if !errors.As(err, &refused) || !errors.Is(err, broker.ErrReadOnly) || !strings.Contains(err.Error(), "--allow-moves") {
		t.Fatalf("move: %v", err)
	}
	if len(log) != 0 || buf.Len() != 0 {
		t.Fatalf("a refused move reached %v, wrote %q", log, buf.String())
	}
	if !g.ReadOnly() {
		t.Error("the gate of a server without --allow-moves says it may change things")
	}
	req.DryRun = true
	if _, err := g.Move(context.Background(), req, nil); err != nil || len(log) != 1 {
		t.Fatalf("dry run: %v %v", err, log)
	}
	if err := MCP("agent", "", false, true).May(WriteFile); err == nil {
		t.Error("an MCP client may write files")
	}
}

// With --allow-moves the move passes, and both audit lines name the MCP
// client and the role "mcp"; the context's read-only still refuses.
func TestGateAuditsAnMCPClientsMove(t *testing.T) {
	var buf bytes.Buffer
	var log []string
	g := New(&recorder{log: &log}, Options{Principal: MCP("agent 1.0", "prod", false, true), Log: NewLog(&buf)})
	if _, err := g.Move(context.Background(), broker.MoveRequest{From: "dlq", To: moveplan.Target{Kind: moveplan.TargetOrigin}}, nil); err != nil {
		t.Fatal(err)
	}
	evs := lines(t, &buf)
	if len(evs) != 2 {
		t.Fatalf("%d lines", len(evs))
	}
	for _, ev := range evs {
		if ev.MCPClient != "agent 1.0" || ev.Role != "mcp" || ev.Context != "prod" {
			t.Errorf("%+v", ev)
		}
	}
	if err := MCP("agent", "prod", true, true).May(Move); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("a read-only context lets an MCP client move: %v", err)
	}
	if who := MCP("", "", false, true).Who(); !strings.Contains(who, "unnamed MCP client") {
		t.Errorf("Who %q", who)
	}
}
