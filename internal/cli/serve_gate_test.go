package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
)

// auditLines reads an audit log's lines.
func auditLines(t *testing.T, path string) []broker.AuditEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []broker.AuditEvent
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var ev broker.AuditEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// An operator's replay from the TUI of a served session (R in the browser)
// writes its start and done lines naming the SSH user, the key's
// fingerprint and comment, and its role; a read-only key's m says on
// the screen that this key may not, and write nothing (every withheld key:
// ui's TestReadOnlyKeysSayWhy). (The replay once
// went through the session's idle wrapper, which dropped the audit hook.)
func TestServeReplayFromTheTUIIsAudited(t *testing.T) {
	s := newSim(t)
	work := t.TempDir()
	op, viewer := serveSigner(t), serveSigner(t)
	keys := writeKeys(t, keyLine("role=operator", op, "alice@laptop"), keyLine("", viewer, "bob@laptop"))
	audit := filepath.Join(work, "audit.jsonl")
	filesDir := filepath.Join(work, "files")
	sv := startServe(t, s, "serve", "--ssh", "127.0.0.1:0", "--authorized-keys", keys, "--host-key", filepath.Join(work, "host_key"),
		"--audit-log", audit, "--files", filesDir, "--idle-timeout", "1h", "--no-color")
	toDLQ := [2]string{"/" + sim.OrdersDLQ + "\r\r", "peeked "}

	sv.screen(t, "bob", viewer, [2]string{"", "LADDERS"}, toDLQ,
		[2]string{"m", "read-only: this key may not move"},
		[2]string{"q", ""})
	before := s.Stats().Published
	sv.screen(t, "alice", op, [2]string{"", "LADDERS"}, toDLQ,
		[2]string{"d", "Dump " + sim.OrdersDLQ + " to a file in the server's files directory?"},
		[2]string{"y", "to alice-orders.dlq-"},
		[2]string{"R", "Replay a dump file"},
		[2]string{"\r", "every message in alice-orders.dlq-"},
		// The plan is shown (its dry run over) before it is confirmed.
		[2]string{"\r", "move now"},
		[2]string{"y", "Summary"},
		[2]string{"\r", "q quit"},
		[2]string{"q", ""})
	if err := sv.stop(); err != nil {
		t.Fatal(err)
	}
	published := int(s.Stats().Published - before)
	if published == 0 {
		t.Fatal("the replay published nothing")
	}
	fp := gossh.FingerprintSHA256(op.PublicKey())
	var phases []string
	for _, ev := range auditLines(t, audit) {
		if ev.SSHUser == "bob" {
			t.Errorf("the read-only key's session wrote %+v", ev)
		}
		if ev.Action != "replay" {
			continue
		}
		phases = append(phases, ev.Phase)
		if ev.SSHUser != "alice" || ev.SSHKey != fp || ev.SSHKeyComment != "alice@laptop" || ev.Role != "operator" {
			t.Errorf("the replay's %s line names %q %q %q %q", ev.Phase, ev.SSHUser, ev.SSHKey, ev.SSHKeyComment, ev.Role)
		}
		if ev.Phase == "done" && (ev.Report == nil || ev.Report.Moved != published || len(ev.Messages) != published) {
			t.Errorf("done line: report %+v, %d ids, %d published", ev.Report, len(ev.Messages), published)
		}
	}
	if strings.Join(phases, ",") != "start,done" {
		t.Fatalf("replay lines %v in %s", phases, audit)
	}
}
