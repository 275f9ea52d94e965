package cli

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry/topology"
)

// ladder check reports topology's findings (the one analysis), prints those
// at or above --fail-on, one a line, and exits 4 exactly when there are any.
func TestCheckOnTheSimulation(t *testing.T) {
	s := newSim(t)
	code, out, errOut := runOnSim(t, s, "topology", "-o", "json")
	if code != exitOK {
		t.Fatalf("topology: exit %d %s", code, errOut)
	}
	var topo present.TopologyReport
	if err := json.Unmarshal([]byte(out), &topo); err != nil {
		t.Fatal(err)
	}
	count := func(floor topology.Severity) int {
		n := 0
		for _, f := range topo.Findings {
			if f.Severity.Rank() <= floor.Rank() {
				n++
			}
		}
		return n
	}
	if count(topology.SeverityWarning) == 0 {
		t.Fatalf("the simulation shows no warning or error: %+v", topo.Findings)
	}
	for _, level := range []topology.Severity{topology.SeverityError, topology.SeverityWarning} {
		want := count(level)
		code, out, errOut := runOnSim(t, s, "check", "--fail-on", string(level), "-o", "json")
		var rep checkReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", level, err, out)
		}
		if !reflect.DeepEqual(rep.Findings, topo.Findings) || rep.Failing != want {
			t.Errorf("%s: check's findings %+v (failing %d), topology's %+v (want %d failing)", level, rep.Findings, rep.Failing, topo.Findings, want)
		}
		wantCode := exitOK
		if want > 0 {
			wantCode = exitFindings
		}
		if code != wantCode {
			t.Errorf("%s -o json: exit %d, want %d (%s)", level, code, wantCode, errOut)
		}
		code, out, errOut = runOnSim(t, s, "check", "--fail-on", string(level))
		if code != wantCode || strings.Count(out, "\n") != want {
			t.Errorf("%s: exit %d (want %d), %d lines (want %d):\n%s%s", level, code, wantCode, strings.Count(out, "\n"), want, out, errOut)
		}
		if want > 0 && (strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "at or above "+string(level))) {
			t.Errorf("%s: stderr %q", level, errOut)
		}
	}
	if code, _, errOut := runOnSim(t, s, "check", "--fail-on", "info"); code != exitUsage {
		t.Errorf("--fail-on info: exit %d %s", code, errOut)
	}
}
