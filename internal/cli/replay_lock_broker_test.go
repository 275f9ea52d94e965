package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Two replays of one dump started at once, as two processes: one publishes
// every line once; the other is refused in one line naming the first's
// pid, exit 1, publishing nothing.
func TestTwoReplaysOfOneDumpAtOnce(t *testing.T) {
	r := brokerEnv(t)
	const n = 10000
	src := testQueue(t, r, "src", n, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	file := filepath.Join(t.TempDir(), "twice.jsonl")
	if code, _, errOut := runLadder(t, "dump", src, "--out", file); code != exitOK {
		t.Fatalf("dump: %d %s", code, errOut)
	}
	bin := ladderBinary(t)
	type run struct {
		cmd    *exec.Cmd
		stderr bytes.Buffer
	}
	runs := make([]*run, 2)
	for i := range runs {
		// Paced, so the first is still publishing when the second starts.
		runs[i] = &run{cmd: exec.Command(bin, "replay", file, "--to", "queue:"+dst, "--rate", "2000/s", "--yes")}
		runs[i].cmd.Env = os.Environ()
		runs[i].cmd.Stderr = &runs[i].stderr
		if err := runs[i].cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	codes := make([]int, 2)
	for i, rr := range runs {
		err := rr.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			codes[i] = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
	}
	won, lost := 0, 1
	if codes[0] != exitOK {
		won, lost = 1, 0
	}
	refusal := strings.TrimSpace(runs[lost].stderr.String())
	if codes[won] != exitOK || codes[lost] != exitError || strings.Contains(refusal, "\n") ||
		!strings.Contains(refusal, fmt.Sprintf("another replay of this dump is running: pid %d on ", runs[won].cmd.Process.Pid)) {
		t.Fatalf("exits %v; the refused one said %q; the other %q", codes, refusal, runs[won].stderr.String())
	}
	conn, err := r.DialAMQP(context.Background(), "test count")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	seen := map[string]int{}
	for {
		d, ok, err := ch.Get(dst, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		seen[d.MessageId]++
	}
	for i := 0; i < n; i++ {
		if c := seen[fmt.Sprintf("src-%d", i)]; c != 1 {
			t.Fatalf("src-%d is on the broker %d times", i, c)
		}
	}
	t.Logf("refused: %s", refusal)
}
