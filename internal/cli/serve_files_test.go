package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker/sim"
)

// A session's files on the server (ladder serve --files): a read-only
// key's dump is refused on its screen; an operator's lands in the
// directory under the server's name, no path asked; the replay picker
// offers that directory's dumps only, never the audit log beside the
// server; --read-only-dumps lets a read-only key dump there.
func TestServeFilesStayInTheServersDirectory(t *testing.T) {
	s := newSim(t)
	work := t.TempDir()
	t.Chdir(work) // the server's working directory: its audit log, another dump
	audit := filepath.Join(work, "audit.jsonl")
	if err := os.WriteFile(filepath.Join(work, "elsewhere.jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	op, viewer := serveSigner(t), serveSigner(t)
	keys := writeKeys(t, keyLine("role=operator", op, "alice@laptop"), keyLine("", viewer, "bob@laptop"))
	dir := t.TempDir()
	filesDir := filepath.Join(dir, "files")
	args := []string{"serve", "--ssh", "127.0.0.1:0", "--authorized-keys", keys, "--host-key", filepath.Join(dir, "host_key"),
		"--audit-log", audit, "--files", filesDir, "--no-color"}
	sv := startServe(t, s, args...)

	toDLQ := [2]string{"/" + sim.OrdersDLQ + "\r\r", "peeked "}
	out := sv.screen(t, "bob", viewer, [2]string{"", "LADDERS"}, toDLQ,
		[2]string{"d", "read-only: this key may not write files on the server"}, [2]string{"q", ""})
	if strings.Contains(out, "Dump "+sim.OrdersDLQ) {
		t.Errorf("the read-only session was asked about a dump:\n%s", out)
	}
	if _, err := os.Stat(filesDir); !os.IsNotExist(err) {
		t.Errorf("the read-only session's d made files: %v", err)
	}

	out = sv.screen(t, "alice", op, [2]string{"", "LADDERS"}, toDLQ,
		[2]string{"d", "Dump " + sim.OrdersDLQ + " to a file in the server's files directory?"},
		[2]string{"y", "to alice-orders.dlq-"},
		[2]string{"R", "Replay a dump file"},
		[2]string{"", "alice-orders.dlq-"},
		[2]string{"\x03", ""}) // ctrl+c quits from the picker
	after := out[strings.LastIndex(out, "Replay a dump file"):]
	for _, name := range []string{"audit.jsonl", "elsewhere.jsonl"} {
		if strings.Contains(after, name) {
			t.Errorf("the replay picker offers %s:\n%s", name, after)
		}
	}
	if err := sv.stop(); err != nil {
		t.Fatal(err)
	}
	dumps := dumpsIn(t, filesDir)
	if len(dumps) != 1 || !strings.HasPrefix(dumps[0], "alice-orders.dlq-") {
		t.Fatalf("the files directory has %q", dumps)
	}
	if st, err := os.Stat(filesDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the files directory: %v %v", st, err)
	}
	if got := dumpsIn(t, work); !slices.Equal(got, []string{"audit.jsonl", "elsewhere.jsonl"}) {
		t.Errorf("the working directory has %q", got)
	}

	sv = startServe(t, s, append(args, "--read-only-dumps")...)
	sv.screen(t, "bob", viewer, [2]string{"", "LADDERS"}, toDLQ,
		[2]string{"d", "Dump " + sim.OrdersDLQ + " to a file in the server's files directory?"},
		[2]string{"y", "to bob-orders.dlq-"}, [2]string{"q", ""})
	if err := sv.stop(); err != nil {
		t.Fatal(err)
	}
	if got := dumpsIn(t, filesDir); len(got) != 2 || !strings.HasPrefix(got[1], "bob-orders.dlq-") {
		t.Errorf("after bob's dump with --read-only-dumps: %q", got)
	}
}

// --files is refused where it holds the audit log (the picker would
// offer it), or is a file.
func TestServeFilesRefusesTheAuditLogsDirectory(t *testing.T) {
	s := newSim(t)
	op := serveSigner(t)
	keys := writeKeys(t, keyLine("role=operator", op, "alice"))
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--files", dir, "--audit-log", filepath.Join(dir, "audit.jsonl")}, "holds the audit log"},
		{[]string{"--files", keys, "--audit-log", filepath.Join(dir, "audit.jsonl")}, "not a directory"},
		{[]string{"--session-quota", "lots", "--audit-log", filepath.Join(dir, "audit.jsonl")}, "--session-quota"},
	} {
		code, _, errOut := runOnSim(t, s, append([]string{"serve", "--ssh", "127.0.0.1:0", "--authorized-keys", keys, "--host-key", filepath.Join(dir, "hk")}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d %s, want a usage error naming %q", tc.args, code, errOut, tc.want)
		}
	}
}

// dumpsIn lists dir's file names (not its progress files).
func dumpsIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			names = append(names, e.Name())
		}
	}
	return names
}
