package cli

import (
	"strings"
	"testing"
)

// TERM=dumb cannot draw the full-screen UI: one line saying what to use
// instead, exit 2, on a real terminal (tmux) where it used to switch to
// the alternate screen and draw anyway.
func TestDumbTerminalRefusesTheUI(t *testing.T) {
	s := newTmux(t, "100", "10", []string{"TERM=dumb"}, "demo; echo exit=$?")
	scr := s.waitFor("exit=2")
	want := "ladder: TERM=dumb cannot show the terminal UI (it moves no cursor): use ladder topology, peek and move, or set TERM to your terminal's (xterm-256color)"
	// The pane wraps the line: compare without white space.
	if !strings.Contains(strings.Join(strings.Fields(scr), ""), strings.Join(strings.Fields(want), "")) {
		t.Errorf("screen:\n%s\nwant %q", scr, want)
	}
	if strings.Contains(scr, "ladder · demo") {
		t.Errorf("the UI drew on a dumb terminal:\n%s", scr)
	}
}

// --rate NaN/s and Inf/s parse as floats and read as "no limit": refused.
func TestRateMustBeFinite(t *testing.T) {
	s := newSim(t)
	for _, rate := range []string{"NaN/s", "Inf/s", "+Inf/m", "-1/s", "0/s"} {
		code, _, errOut := runOnSim(t, s, "move", "--from", "q", "--to", "queue:t", "--yes", "--rate", rate)
		if code != exitUsage || !strings.Contains(errOut, `--rate "`+rate+`": want a positive number of messages`) {
			t.Errorf("%s: exit %d %q", rate, code, errOut)
		}
	}
}
