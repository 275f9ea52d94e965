package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// dumpLines reads a dump file's records (without the header line).
func dumpLines(t *testing.T, path string) []dumpfile.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, lines, bad, err := dumpfile.Read(f)
	if err != nil || len(bad) > 0 {
		t.Fatalf("%s: %v %v", path, err, bad)
	}
	var out []dumpfile.Record
	for _, l := range lines {
		out = append(out, l.Record)
	}
	return out
}

// dump → drain → replay --to original → dump gives the same messages.
func TestDumpReplayRoundTripOnTheSimulation(t *testing.T) {
	s := newSim(t)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	before := dlqDepth(t, s)
	if code, _, errOut := runOnSim(t, s, "dump", sim.OrdersDLQ, "--out", first); code != exitOK {
		t.Fatalf("dump: exit %d %s", code, errOut)
	}
	if dlqDepth(t, s) != before {
		t.Fatal("a browsing dump removed messages")
	}
	if code, _, errOut := runOnSim(t, s, "dump", sim.OrdersDLQ, "--out", first); code != exitError || !strings.Contains(errOut, "the file exists") {
		t.Errorf("existing file: exit %d %q", code, errOut)
	}
	drained := filepath.Join(dir, "drained.jsonl")
	if code, _, errOut := runOnSim(t, s, "dump", sim.OrdersDLQ, "--out", drained, "--consume", "--yes"); code != exitOK {
		t.Fatalf("dump --consume: exit %d %s", code, errOut)
	}
	if dlqDepth(t, s) != 0 || len(dumpLines(t, drained)) != before {
		t.Fatalf("drain: DLQ %d, file %d lines, want 0 and %d", dlqDepth(t, s), len(dumpLines(t, drained)), before)
	}
	code, out, errOut := runOnSim(t, s, "replay", first, "--to", "original", "--yes", "-o", "json")
	if code != exitOK {
		t.Fatalf("replay: exit %d %s %s", code, errOut, out)
	}
	if dlqDepth(t, s) != before {
		t.Fatalf("after replay the DLQ holds %d, want %d", dlqDepth(t, s), before)
	}
	if code, _, errOut := runOnSim(t, s, "dump", sim.OrdersDLQ, "--out", second); code != exitOK {
		t.Fatalf("dump again: %d %s", code, errOut)
	}
	a, b := dumpLines(t, first), dumpLines(t, second)
	for i := range a {
		ha := a[i].Headers.Clone()
		hb := b[i].Headers.Clone()
		// ladder's own marks on the way back are the only difference.
		for _, k := range []string{moveplan.HeaderMovedFrom, moveplan.HeaderMoves, broker.HeaderMoveID} {
			delete(hb, k)
		}
		la, _ := dumpfile.MarshalRecord(dumpfile.Record{Exchange: a[i].Exchange, RoutingKey: a[i].RoutingKey, Properties: a[i].Properties, Headers: ha, Body: a[i].Body}, false)
		lb, _ := dumpfile.MarshalRecord(dumpfile.Record{Exchange: b[i].Exchange, RoutingKey: b[i].RoutingKey, Properties: b[i].Properties, Headers: hb, Body: b[i].Body}, false)
		if string(la) != string(lb) {
			t.Fatalf("line %d differs:\n%s\n%s", i+2, la, lb)
		}
	}
	// Replayed before: refused without --resume.
	if code, _, errOut := runOnSim(t, s, "replay", first, "--to", "original", "--yes"); code != exitError || !strings.Contains(errOut, "--resume") {
		t.Errorf("second replay: exit %d %q", code, errOut)
	}
}

// A malformed line is reported by number and skipped (exit 3); --strict
// refuses the file.
func TestReplaySkipsMalformedLinesOrRefusesThemStrictly(t *testing.T) {
	s := newSim(t)
	file := filepath.Join(t.TempDir(), "d.jsonl")
	if code, _, errOut := runOnSim(t, s, "dump", sim.OrdersDLQ, "--out", file, "-n", "3"); code != exitOK {
		t.Fatalf("dump: %d %s", code, errOut)
	}
	raw, _ := os.ReadFile(file)
	lines := strings.SplitAfter(string(raw), "\n")
	broken := lines[0] + lines[1] + "{not json\n" + lines[2] + lines[3]
	os.WriteFile(file, []byte(broken), 0o600)
	code, _, errOut := runOnSim(t, s, "replay", file, "--to", "queue:"+sim.OrdersMain, "--strict", "--yes")
	if code != exitError || !strings.Contains(errOut, "line 3:") || !strings.Contains(errOut, "nothing published") {
		t.Errorf("strict: exit %d %q", code, errOut)
	}
	code, out, errOut := runOnSim(t, s, "replay", file, "--to", "queue:"+sim.OrdersMain, "--yes", "-o", "json")
	var rep broker.MoveReport
	json.Unmarshal([]byte(out), &rep)
	// The others are published; the skipped line makes the replay partial
	// (exit 3, as the help says), with its number and why.
	if code != exitPartial || rep.Moved != 3 || rep.Skipped != 1 || len(rep.Planned) != 1 || rep.Planned[0].Position != 3 || !strings.Contains(rep.Planned[0].Skip, "malformed line") {
		t.Errorf("lenient: exit %d %s %+v", code, errOut, rep)
	}
	// In text, one line names it.
	os.Remove(dumpfile.ProgressFile(file))
	code, out, _ = runOnSim(t, s, "replay", file, "--to", "queue:"+sim.OrdersMain, "--yes")
	if code != exitPartial || !strings.Contains(out, "skipped #3: malformed line: ") {
		t.Errorf("text: exit %d %s", code, out)
	}
}

// The loop guard: the 6th time ladder moves the same message (a replay,
// then moves back and forth) it is left in place.
func TestLoopGuardStopsTheSixthMove(t *testing.T) {
	s := sim.New(sim.Options{Quiet: true})
	t.Cleanup(func() { s.Close() })
	file := writeDump(t, dumpfile.Record{Exchange: "", RoutingKey: "x", Headers: retry.Headers{"x-retry-count": int32(1)}, Body: []byte("loop"),
		Properties: dumpfile.Properties{MessageID: "looping"}})
	if code, _, errOut := runOnSim(t, s, "replay", file, "--to", "queue:"+sim.OrdersDLQ, "--yes"); code != exitOK {
		t.Fatalf("replay: %d %s", code, errOut)
	}
	a, b := sim.OrdersDLQ, sim.OrdersMain
	for i := 2; i <= 6; i++ {
		code, out, errOut := runOnSim(t, s, "move", "--from", a, "--to", "queue:"+b, "--yes", "-o", "json")
		var rep broker.MoveReport
		json.Unmarshal([]byte(out), &rep)
		if i <= 5 && (code != exitOK || rep.Moved != 1) {
			t.Fatalf("move %d: exit %d %s %+v", i, code, errOut, rep)
		}
		if i == 6 && (code != exitPartial || rep.Moved != 0 || len(rep.Planned) != 1 || !strings.Contains(rep.Planned[0].Skip, "moved it 5 times")) {
			t.Fatalf("move 6: exit %d %+v", code, rep)
		}
		a, b = b, a
	}
	// --force moves it all the same.
	if code, _, errOut := runOnSim(t, s, "move", "--from", a, "--to", "queue:"+b, "--force", "--yes"); code != exitOK {
		t.Errorf("--force: exit %d %s", code, errOut)
	}
}

// writeDump writes a dump file of records.
func writeDump(t *testing.T, recs ...dumpfile.Record) string {
	t.Helper()
	head, _ := json.Marshal(dumpfile.Header{LadderDump: dumpfile.Format, Vhost: "/", Queue: "elsewhere"})
	out := string(head) + "\n"
	for _, r := range recs {
		line, err := dumpfile.MarshalRecord(r, false)
		if err != nil {
			t.Fatal(err)
		}
		out += string(line) + "\n"
	}
	file := filepath.Join(t.TempDir(), "hand.jsonl")
	if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// --where chooses what moves; the rest stays.
func TestMoveWhereMovesOnlyTheChosen(t *testing.T) {
	s := newSim(t)
	const key = sim.OrdersExchange + ":orders.created"
	code, out, _ := runOnSim(t, s, "peek", sim.OrdersDLQ, "-n", "1000", "--group-by", "origin", "-o", "json")
	var res usecase.GroupedPeek
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil || len(res.Groups) < 2 {
		t.Fatalf("group-by: %d %s", code, out)
	}
	total, rejected := len(res.Messages), 0
	for _, g := range res.Groups {
		if g.Key == key {
			rejected = g.Count
			if len(g.Positions) != g.Count || len(g.SampleIDs) == 0 {
				t.Errorf("group %+v", g)
			}
		}
	}
	if rejected == 0 || rejected == total {
		t.Fatalf("the demo's DLQ holds %d of %d from %s: nothing to tell apart", rejected, total, key)
	}
	code, out, errOut := runOnSim(t, s, "move", "--from", sim.OrdersDLQ, "--to", "queue:"+sim.OrdersMain, "--where", "origin="+key, "--yes", "-o", "json")
	var rep broker.MoveReport
	json.Unmarshal([]byte(out), &rep)
	if code != exitOK || rep.Moved != rejected || rep.Unmatched != total-rejected {
		t.Fatalf("exit %d %s: moved %d unmatched %d, want %d and %d", code, errOut, rep.Moved, rep.Unmatched, rejected, total-rejected)
	}
	code, out, _ = runOnSim(t, s, "peek", sim.OrdersDLQ, "-n", "1000", "--where", "origin="+key, "-o", "json")
	json.Unmarshal([]byte(out), &res)
	if code != exitOK || len(res.Messages) != 0 {
		t.Errorf("rejected messages left: %d", len(res.Messages))
	}
}

// A progress file belongs to one dump: a new dump under the same name
// removes it, and one of another dump is refused, never used to skip lines.
func TestReplayProgressBelongsToItsDump(t *testing.T) {
	s := newSim(t)
	file := filepath.Join(t.TempDir(), "d.jsonl")
	if code, _, errOut := runOnSim(t, s, "dump", sim.OrdersDLQ, "--out", file, "--consume", "--yes"); code != exitOK {
		t.Fatalf("dump: %d %s", code, errOut)
	}
	if code, _, errOut := runOnSim(t, s, "replay", file, "--to", "original", "--yes"); code != exitOK {
		t.Fatalf("replay: %d %s", code, errOut)
	}
	n := dlqDepth(t, s)
	stale, _ := os.ReadFile(dumpfile.ProgressFile(file))
	code, _, errOut := runOnSim(t, s, "dump", sim.OrdersDLQ, "--out", file, "--consume", "--yes", "--force")
	if code != exitOK || !strings.Contains(errOut, "removed") {
		t.Fatalf("dump --force: %d %q", code, errOut)
	}
	if _, err := os.Stat(dumpfile.ProgressFile(file)); err == nil {
		t.Fatal("the stale progress file is still there")
	}
	// Put the old progress back, as if another copy of the file had it.
	os.WriteFile(dumpfile.ProgressFile(file), stale, 0o600)
	code, _, errOut = runOnSim(t, s, "replay", file, "--to", "original", "--resume", "--yes")
	if code != exitError || !strings.Contains(errOut, "progress of another dump") {
		t.Fatalf("resume with another dump's progress: %d %q", code, errOut)
	}
	os.Remove(dumpfile.ProgressFile(file))
	if code, _, errOut := runOnSim(t, s, "replay", file, "--to", "original", "--yes"); code != exitOK || dlqDepth(t, s) != n {
		t.Fatalf("replay: %d %s, DLQ %d want %d", code, errOut, dlqDepth(t, s), n)
	}
}
