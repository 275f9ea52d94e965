package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/sim"
)

// asLadderEnv makes the test binary run as ladder on a simulation instead
// of running tests: the SIGTERM test starts it in a terminal, where only a
// separate process can receive a signal.
const asLadderEnv = "LADDER_TEST_AS_LADDER"

// dlqMessages is what the helper puts in orders.dlq: more than one batch
// of the simulation's move (100), so a move can be held between batches.
const dlqMessages = 300

func TestMain(m *testing.M) {
	if os.Getenv(asLadderEnv) == "1" {
		os.Exit(asLadder(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "ladder-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	// What runs learn is remembered in the user's cache: the tests' runs
	// remember in theirs, never the user's (nor read what the user's
	// runs learned).
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// The real binary, built once for the package's tests (a build each took
// seconds of the package's critical path).
var (
	binDir  string
	binOnce sync.Once
	binPath string
	binErr  error
)

// ladderBinaryEnv names a ladder binary built from this checkout before
// the tests (scripts/test.sh builds it once for every test process: a
// build in each, beside the race-built tests on two cores, took minutes).
const ladderBinaryEnv = "LADDER_TEST_BIN"

// ladderBinary is the path of the real ladder binary: LADDER_TEST_BIN's,
// else built on first use.
func ladderBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if p := os.Getenv(ladderBinaryEnv); p != "" {
			binPath = p
			if _, err := os.Stat(p); err != nil {
				binErr = fmt.Errorf("%s: %w", ladderBinaryEnv, err)
			}
			return
		}
		binPath = filepath.Join(binDir, "ladder")
		if out, err := exec.Command("go", "build", "-o", binPath, "github.com/ladder-tui/ladder").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// asLadder is ladder with a quiet simulation as its broker, orders.dlq
// holding dlqMessages, and its moves held after their first batch. It
// writes its pid to LADDER_TEST_PIDFILE first.
func asLadder(args []string) int {
	if err := os.WriteFile(os.Getenv("LADDER_TEST_PIDFILE"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := sim.New(sim.Options{Quiet: true})
	defer s.Close()
	if err := brokertest.PublishCauses(context.Background(), s, sim.OrdersDLQ, brokertest.CauseMessages(dlqMessages, 9, s.Now())); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	connect := func(rabbit.Config, string) (broker.Client, func(), error) { return heldMover{s}, func() {}, nil }
	return run(args, os.Stdin, os.Stdout, os.Stderr, Build{Version: "dev"}, connect)
}

// heldMover pauses every move's gate after its first batch, as p in the
// dialog would: the move is running, with messages moved and messages left,
// for as long as the test needs to send its signal.
type heldMover struct{ broker.Client }

func (h heldMover) Move(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	if req.DryRun || req.Hold == nil {
		return h.Client.Move(ctx, req, progress)
	}
	return h.Client.Move(ctx, req, func(p broker.MoveProgress) {
		if p.Done > 0 && p.Done < p.Total {
			req.Hold.Pause()
		}
		if progress != nil {
			progress(p)
		}
	})
}

// SIGTERM to the UI during a move: the move stops after the batch in
// flight (its context is the program's), the audit log gets its "done"
// line with what moved, and then the process exits saying why. The real
// process in a terminal (tmux), since only it can take a signal.
func TestSIGTERMDuringAUIMoveStopsItAndWritesTheAuditLine(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: apt-get install tmux")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pidFile, rcFile, audit := filepath.Join(dir, "pid"), filepath.Join(dir, "rc"), filepath.Join(dir, "audit.jsonl")
	s := &tmuxSession{t: t, name: strings.NewReplacer("/", "-", ".", "-").Replace(brokertest.Name(t, ""))}
	// The shell records the exit code; the pane stays to show what was
	// printed after the UI left the screen.
	// Only what it needs of the tmux server's environment (see newTmux).
	cmdline := fmt.Sprintf(`env -i PATH="$PATH" HOME="$HOME" TERM="$TERM" %s=1 LADDER_TEST_PIDFILE=%s NO_COLOR=1 %s --audit-log %s; echo $? > %s; sleep 60`,
		asLadderEnv, pidFile, self, audit, rcFile)
	cmd := exec.Command("tmux", "new-session", "-d", "-s", s.name, "-x", "100", "-y", "30", cmdline)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", s.name).Run() })

	s.waitFor(sim.OrdersDLQ)
	// Select the DLQ's row, open the move dialog, choose the whole queue
	// and the main queue (the messages say nothing of their origin).
	// One key at a time, each waited for (the selection moved), so a busy
	// machine never runs the cursor past the row.
	for i := 0; !strings.Contains(selectedLine(s.screen()), sim.OrdersDLQ); i++ {
		if i > 40 {
			t.Fatalf("no row of %s to select:\n%s", sim.OrdersDLQ, s.screen())
		}
		was := selectedLine(s.screen())
		s.keys("Down")
		for deadline := time.Now().Add(10 * time.Second); selectedLine(s.screen()) == was; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the selection did not move past %q (the last row?):\n%s", was, s.screen())
			}
		}
	}
	s.keys("m")
	s.waitFor("Move / re-publish from " + sim.OrdersDLQ)
	s.keys("Space")
	s.waitFor("the whole queue")
	s.keys("Tab", "Space")
	s.waitFor("main queue orders.process")
	s.keys("Enter")
	s.waitFor("Confirm move", "move now")
	s.keys("Enter")
	s.waitFor("Moving from "+sim.OrdersDLQ, "paused")

	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rc := waitForFile(t, rcFile, 60*time.Second)
	if strings.TrimSpace(rc) != strconv.Itoa(exitError) {
		t.Errorf("exit code %q, want %d (stopped)\n%s", rc, exitError, s.screen())
	}
	s.waitFor("ladder: stopped (SIGTERM)")

	var events []broker.AuditEvent
	sc := bufio.NewScanner(strings.NewReader(readFile(t, audit)))
	for sc.Scan() {
		var ev broker.AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		events = append(events, ev)
	}
	if len(events) != 2 || events[0].Phase != "start" || events[1].Phase != "done" {
		t.Fatalf("audit log: want a start and a done line, got %+v", events)
	}
	done := events[1]
	if done.Report == nil || done.Report.Moved != 100 || done.Report.Requested != dlqMessages {
		t.Fatalf("the done line's report: %+v, want 100 of %d moved (one batch)", done.Report, dlqMessages)
	}
	if !strings.Contains(done.Error, context.Canceled.Error()) {
		t.Fatalf("the done line's error %q does not say the move was cancelled", done.Error)
	}
	if len(done.Messages) != 100 {
		t.Fatalf("the done line names %d moved messages, want 100", len(done.Messages))
	}
}

// selectedLine is the home screen's line of the selected row (the cursor
// mark ▸ starts it).
func selectedLine(screen string) string {
	for l := range strings.SplitSeq(screen, "\n") {
		if strings.Contains(l, "▸") {
			return l
		}
	}
	return ""
}

// waitForFile polls until path exists and is not empty.
func waitForFile(t *testing.T, path string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written within %v", path, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
