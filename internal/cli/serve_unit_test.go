package cli

import (
	"io"
	"os"
	"strings"
	"testing"
)

// The systemd unit the deb/rpm installs runs a command line ladder accepts:
// every flag it gives exists, with a value of the right kind.
func TestServeUnitCommandLineParses(t *testing.T) {
	b, err := os.ReadFile("../../examples/bastion/ladder-serve.service")
	if err != nil {
		t.Fatal(err)
	}
	var exec string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			exec = v
		}
	}
	args := strings.Fields(strings.ReplaceAll(exec, "${LADDER_SSH_ADDR}", "127.0.0.1:2222"))
	if len(args) < 2 || args[0] != "/usr/bin/ladder" || args[1] != "serve" {
		t.Fatalf("ExecStart %q: want /usr/bin/ladder serve …", exec)
	}
	root := newRootCmd(&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
	cmd, rest, err := root.Find(args[1:])
	if err != nil || cmd.Name() != "serve" {
		t.Fatalf("find serve: %v %v", cmd, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("ExecStart's flags: %v", err)
	}
	for _, f := range []string{"ssh", "authorized-keys", "host-key", "audit-log"} {
		if !cmd.Flags().Changed(f) {
			t.Errorf("ExecStart does not set --%s", f)
		}
	}
}
