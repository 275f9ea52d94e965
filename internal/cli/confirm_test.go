package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// movesRecorded is a client that keeps every move it was asked for.
type movesRecorded struct {
	broker.Client
	moves []broker.MoveRequest
}

func (r *movesRecorded) Move(ctx context.Context, req broker.MoveRequest, p func(broker.MoveProgress)) (*broker.MoveReport, error) {
	r.moves = append(r.moves, req)
	return r.Client.Move(ctx, req, p)
}

// The confirmation's dry run of a whole queue stops at usecase.PreviewCap
// (the TUI's too), one of picked messages plans them all; the question
// says when the plan was cut.
func TestConfirmCapsThePreview(t *testing.T) {
	s := newSim(t)
	for _, c := range []struct {
		req   broker.MoveRequest
		limit int
	}{
		{broker.MoveRequest{From: sim.OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}}, usecase.PreviewCap},
		{broker.MoveRequest{From: sim.OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}, Limit: 2}, 2},
		{broker.MoveRequest{From: sim.OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}, Positions: []int{0, 1}}, 0},
	} {
		rec := &movesRecorded{Client: s}
		var out, errb bytes.Buffer
		a := &app{stdin: strings.NewReader("y\n"), stdout: &out, stderr: &errb}
		// Not a terminal: the question is refused, after the dry run.
		_, err := confirm(t.Context(), a, rec, c.req)
		var ex *exitErr
		if !errors.As(err, &ex) || ex.code != exitUsage || len(rec.moves) != 1 {
			t.Fatalf("%+v: %v, moves %+v", c.req, err, rec.moves)
		}
		if d := rec.moves[0]; !d.DryRun || d.Limit != c.limit {
			t.Errorf("%+v: dry run %+v, want limit %d", c.req, d, c.limit)
		}
	}
	whole := broker.MoveRequest{From: "q", To: moveplan.Target{Kind: moveplan.TargetOrigin}}
	cut := present.PreviewCapped(usecase.PreviewCap)
	if q := moveQuestion(whole, &broker.MoveReport{Requested: usecase.PreviewCap}, false); !strings.Contains(q, cut) {
		t.Errorf("a cut plan: %q", q)
	}
	if q := moveQuestion(whole, &broker.MoveReport{Requested: usecase.PreviewCap}, true); strings.Contains(q, cut) {
		t.Errorf("a dump's plan is never cut: %q", q)
	}
}

// --delay follows usecase.ParseDelay, as the TUI does: a unit required,
// the error one line naming what was typed; the help still reads
// "--delay duration", with no default.
func TestDelayWantsAUnit(t *testing.T) {
	s := newSim(t)
	file := writeDump(t, dumpfile.Record{RoutingKey: sim.OrdersDLQ, Body: []byte("x")})
	for _, args := range [][]string{
		{"move", "--from", sim.OrdersDLQ, "--to", "origin", "--dry-run"},
		{"replay", file, "--to", "original", "--dry-run"},
	} {
		code, out, errOut := runOnSim(t, s, append(args, "--delay", "500")...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, `delay "500": add a unit (500ms, 30s, 5m)`) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s --delay 500: exit %d %q", args[0], code, errOut)
		}
		if code, _, errOut := runOnSim(t, s, append(args, "--delay", "-5s")...); code != exitUsage || !strings.Contains(errOut, `delay "-5s": must not be negative`) {
			t.Errorf("%s --delay -5s: exit %d %q", args[0], code, errOut)
		}
		code, out, errOut = runOnSim(t, s, append(args, "--delay", "500ms", "-o", "json")...)
		var rep broker.MoveReport
		if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.DelayMS != 500 {
			t.Errorf("%s --delay 500ms: exit %d %s %s", args[0], code, errOut, out)
		}
		_, help, _ := runOnSim(t, s, args[0], "--help")
		if line := helpLine(help, "--delay"); !strings.Contains(line, "--delay duration") || strings.Contains(line, "default") {
			t.Errorf("%s --help: %q", args[0], line)
		}
	}
}

// helpLine is flag's line among the flags of a command's help.
func helpLine(help, flag string) string {
	for l := range strings.Lines(help) {
		if strings.HasPrefix(l, " ") && strings.HasPrefix(strings.TrimSpace(l), flag+" ") {
			return l
		}
	}
	return ""
}

// Read-only mode refuses move, replay and unblock before connecting, with
// the error the TUI's move dialog gives (usecase.RefuseReadOnly).
func TestReadOnlyRefusesTheConfirmedRuns(t *testing.T) {
	file := writeDump(t, dumpfile.Record{RoutingKey: "q", Body: []byte("x")})
	connect := func(rabbit.Config, string) (broker.Client, func(), error) {
		t.Error("a refused run connected to the broker")
		return nil, nil, errors.New("no")
	}
	for _, c := range []struct {
		args []string
		what string
	}{
		{[]string{"move", "--from", "q", "--to", "origin"}, "move from q"},
		{[]string{"replay", file, "--to", "original"}, "replay " + file},
		{[]string{"unblock", "q"}, "unblock q"},
	} {
		for _, yes := range []string{"--yes", "--limit=0"} {
			if c.args[0] == "unblock" && yes != "--yes" {
				yes = "--look=5"
			}
			var out, errb bytes.Buffer
			code := run(append([]string{"--read-only"}, append(c.args, yes)...), strings.NewReader(""), &out, &errb, Build{}, connect)
			want := usecase.RefuseReadOnly(true, c.what).Error()
			if code != exitError || !strings.Contains(errb.String(), want) || out.Len() != 0 {
				t.Errorf("%v %s: exit %d %q, want %q", c.args, yes, code, errb.String(), want)
			}
		}
	}
}
