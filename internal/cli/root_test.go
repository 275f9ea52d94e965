package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"testing"
)

// runLadder runs ladder against the real broker (see brokerEnv).
func runLadder(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb, Build{Version: "dev", Commit: "dev", Date: "dev"}, nil)
	return code, out.String(), errb.String()
}

func TestHelpListsEveryCommand(t *testing.T) {
	code, out, _ := runLadder(t, "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, c := range []string{"demo", "topology", "peek", "move", "dump", "replay", "schedule", "version", "completion"} {
		if !strings.Contains(out, "\n  "+c+" ") {
			t.Errorf("help does not list %q:\n%s", c, out)
		}
	}
	if strings.Contains(out, "guest:guest") {
		t.Errorf("help prints the default password:\n%s", out)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runLadder(t, "version")
	if code != exitOK || !strings.HasPrefix(out, "ladder dev (commit dev, built dev") {
		t.Fatalf("exit %d, %q", code, out)
	}
	code, out, _ = runLadder(t, "version", "-o", "json")
	var v map[string]string
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || v["version"] != "dev" || v["commit"] != "dev" {
		t.Fatalf("exit %d, %q", code, out)
	}
}

func TestUnknownFlagIsUsageError(t *testing.T) {
	code, _, errOut := runLadder(t, "ping", "--frobnicate")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d", code, exitUsage)
	}
	if !strings.Contains(errOut, "--frobnicate") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("want one line naming the flag, got %q", errOut)
	}
}

func TestBadOutputIsUsageError(t *testing.T) {
	code, _, errOut := runLadder(t, "version", "-o", "yaml")
	if code != exitUsage || !strings.Contains(errOut, "--output") {
		t.Fatalf("exit %d, %q", code, errOut)
	}
}

func TestBadPeekLimitIsUsageError(t *testing.T) {
	code, _, errOut := runLadder(t, "demo", "--peek-limit", "0")
	if code != exitUsage || !strings.Contains(errOut, "--peek-limit 0") {
		t.Fatalf("exit %d, %q", code, errOut)
	}
}

// freePort returns a local port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

func TestUnreachableBrokerNamesRedactedURLAndPort(t *testing.T) {
	port := freePort(t)
	code, out, errOut := runLadder(t, "ping", "--amqp-url", "amqp://ops:hunter2-secret@127.0.0.1:"+port+"/prod")
	if code != exitError {
		t.Fatalf("exit %d, want 1", code)
	}
	if out != "" {
		t.Errorf("stdout: %q", out)
	}
	want := "amqp://ops:xxxxx@127.0.0.1:" + port + "/prod"
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, "port "+port) {
		t.Errorf("error %q does not name %s and the port", errOut, want)
	}
	if strings.Contains(errOut, "hunter2") {
		t.Errorf("password leaked: %q", errOut)
	}
	if strings.Count(errOut, "\n") != 1 {
		t.Errorf("want one line, got %q", errOut)
	}
}

func TestEnvConfiguresAndFlagWins(t *testing.T) {
	port := freePort(t)
	t.Setenv("LADDER_AMQP_URL", "amqp://envuser:envpass99@127.0.0.1:"+port+"/")
	code, _, errOut := runLadder(t, "ping")
	if code != exitError || !strings.Contains(errOut, "envuser:xxxxx@127.0.0.1:"+port) || strings.Contains(errOut, "envpass99") {
		t.Fatalf("env not applied or leaked: exit %d %q", code, errOut)
	}
	other := freePort(t)
	code, _, errOut = runLadder(t, "ping", "--amqp-url", "amqp://flaguser:p@127.0.0.1:"+other+"/")
	if code != exitError || !strings.Contains(errOut, "flaguser") || strings.Contains(errOut, "envuser") {
		t.Fatalf("flag did not beat env: %q", errOut)
	}
}

func TestBadEnvValueNamesVariable(t *testing.T) {
	t.Setenv("LADDER_READ_ONLY", "maybe")
	code, _, errOut := runLadder(t, "version")
	if code != exitUsage || !strings.Contains(errOut, "$LADDER_READ_ONLY") {
		t.Fatalf("exit %d %q", code, errOut)
	}
}

func TestBadURLSchemeIsUsageError(t *testing.T) {
	code, _, errOut := runLadder(t, "ping", "--amqp-url", "http://u:topsecret@h/")
	if code != exitUsage || !strings.Contains(errOut, "--amqp-url") || strings.Contains(errOut, "topsecret") {
		t.Fatalf("exit %d %q", code, errOut)
	}
}

func TestCompletionScript(t *testing.T) {
	code, out, _ := runLadder(t, "completion", "bash")
	if code != exitOK || !strings.Contains(out, "__start_ladder") {
		t.Fatalf("exit %d, no bash completion", code)
	}
}

// A missing argument is named in the command's words, never cobra's.
func TestMissingArgumentSaysWhatIsNeeded(t *testing.T) {
	for cmd, want := range map[string]string{
		"peek":    "ladder: peek needs a QUEUE (ladder peek QUEUE)\n",
		"dump":    "ladder: dump needs a QUEUE (ladder dump QUEUE --out FILE)\n",
		"replay":  "ladder: replay needs a FILE (ladder replay FILE --to TARGET)\n",
		"unblock": "ladder: unblock needs a QUEUE (ladder unblock QUEUE)\n",
	} {
		code, out, errOut := runLadder(t, cmd)
		if code != exitUsage || out != "" || errOut != want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", cmd, code, out, errOut, want)
		}
	}
	if code, _, errOut := runLadder(t, "peek", "a", "b"); code != exitUsage || strings.Contains(errOut, "arg(s)") {
		t.Errorf("two queues: exit %d, %q", code, errOut)
	}
}
