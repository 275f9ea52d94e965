package cli

import (
	"os"
	"path/filepath"
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

// --log-file is taken by every command (it was refused by all but the UI):
// a failed run appends its whole error chain there, password hidden,
// while stderr keeps its one line.
func TestLogFileTakesTheErrorChain(t *testing.T) {
	port := freePort(t)
	secret := secretWord(t)
	log := filepath.Join(t.TempDir(), "debug.log")
	for _, cmd := range []string{"ping", "topology"} {
		code, _, errOut := runLadder(t, cmd, "--amqp-url", "amqp://ops:"+secret+"@127.0.0.1:"+port+"/", "--log-file", log)
		if code != exitError || strings.Count(errOut, "\n") != 1 {
			t.Fatalf("%s: exit %d %q", cmd, code, errOut)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if strings.Count(got, ": exit 1\n") != 2 || !strings.Contains(got, "ladder ping --amqp-url amqp://ops:xxxxx@127.0.0.1:"+port+"/") ||
		!strings.Contains(got, "dial tcp 127.0.0.1:"+port+": connect: connection refused") || strings.Contains(got, secret) {
		t.Errorf("log:\n%s", got)
	}
}
