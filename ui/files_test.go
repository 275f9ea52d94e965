package ui

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/internal/files"
	"github.com/ladder-tui/ladder/internal/gate"
)

// The browser's files in a served session (Options.Files a
// files.Confined): the server's directory, its names, its quota.

// servedHarness is simHarness with opts (their Files a session's).
func servedHarness(t *testing.T, opts Options) (*harness, *sim.Sim) {
	t.Helper()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := sim.New(sim.Options{Seed: 3, Now: func() time.Time { return now }, WarmUp: 10 * time.Minute})
	t.Cleanup(func() { s.Close() })
	h := newHarnessOn(t, gate.New(s, gate.Options{Principal: gate.Local("", false)}), opts, 160, 48).start()
	h.send(openQueueMsg{queue: sim.OrdersDLQ})
	h.mustContain("orders.dlq", "peeked ")
	return h, s
}

// filesIn lists dir's file names.
func filesIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func filesDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "files")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// In a served session d asks no file name, only a yes: the server names
// the file (user, queue, time) in its directory. A name typed anyway (an
// answer carrying one) is never written.
func TestServedDumpAsksNoNameAndWritesInTheDirectory(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	dir := filesDir(t)
	at := time.Date(2026, 3, 1, 12, 0, 7, 0, time.UTC)
	h, s := servedHarness(t, Options{Files: files.NewConfined(dir, files.ConfinedOptions{User: "alice", Now: func() time.Time { return at }})})
	n := dlqReady(t, s)
	h.key("d")
	if h.m.top() != h.m.prompt || !h.m.prompt.ask.confirm {
		t.Fatalf("d in a served session: want a yes/no question, no field:\n%s", h.plain())
	}
	h.mustContain("Dump orders.dlq to a file in the server's files directory? ladder names it")
	h.mustNotContain("> ")
	h.key("enter")
	h.mustContain("dumped " + itoa(n) + " messages to alice-orders.dlq-20260301T120007Z.jsonl")
	b, err := os.ReadFile(filepath.Join(dir, "alice-orders.dlq-20260301T120007Z.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines != n+1 {
		t.Errorf("%d lines for %d messages", lines, n)
	}

	typed := filepath.Join(t.TempDir(), "typed.jsonl")
	h.send(dumpAskMsg{queue: sim.OrdersDLQ, file: typed})
	h.mustContain("dumped " + itoa(n) + " messages to alice-orders.dlq-20260301T120007Z-2.jsonl")
	if _, err := os.Lstat(typed); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the typed path was written: %v", err)
	}
	if got := filesIn(t, cwd); len(got) != 0 {
		t.Errorf("the working directory has %q", got)
	}
}

// A read-only key's d is refused on the screen, before any read, and
// writes nothing; the server may allow it (--read-only-dumps).
func TestServedReadOnlyDumpRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	dir := filesDir(t)
	bob := gate.SSH("bob", "", "", gate.RoleReadOnly, "")
	allowed := bob
	allowed.FileWrites = true
	h, s := servedHarness(t, Options{ReadOnly: true, Files: files.NewConfined(dir, files.ConfinedOptions{User: "bob", Writes: bob.May(gate.WriteFile)})})
	h.key("d")
	h.mustContain("dump orders.dlq: read-only: this key may not write files on the server")
	if h.m.top() != h.m.browser || h.m.browser.reading != nil {
		t.Errorf("d refused still asked or read (top %T)", h.m.top())
	}
	if got := filesIn(t, dir); len(got) != 0 {
		t.Errorf("files written: %q", got)
	}

	h, _ = servedHarness(t, Options{ReadOnly: true, Files: files.NewConfined(dir, files.ConfinedOptions{User: "bob", Writes: allowed.May(gate.WriteFile)})})
	h.key("d", "enter")
	h.mustContain("dumped " + itoa(dlqReady(t, s)) + " messages to bob-orders.dlq-")
	if got := filesIn(t, dir); len(got) != 1 || !strings.HasPrefix(got[0], "bob-orders.dlq-") {
		t.Errorf("files %q", got)
	}
}

// The replay picker lists the server's directory only (not the working
// directory, where the audit log is); the replay reads the file there.
func TestServedReplayPickerListsTheDirectoryOnly(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	for _, name := range []string{"audit.jsonl", "elsewhere.jsonl"} {
		if err := os.WriteFile(name, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := filesDir(t)
	if err := os.Symlink(filepath.Join(cwd, "audit.jsonl"), filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	h, s := servedHarness(t, Options{Files: files.NewConfined(dir, files.ConfinedOptions{User: "alice"})})
	n := dlqReady(t, s)
	h.key("R")
	h.mustContain("no *.jsonl dump file in the server's files directory")
	h.key("d", "enter")
	h.mustContain("dumped " + itoa(n) + " messages")
	dumps := filesIn(t, dir)
	dumps = slices.DeleteFunc(dumps, func(s string) bool { return s == "link.jsonl" })
	h.key("R")
	h.mustContain("Replay a dump file", dumps[0])
	h.mustNotContain("audit.jsonl", "elsewhere.jsonl", "link.jsonl")
	if got := h.m.picker.ask.items; !slices.Equal(got, dumps) {
		t.Errorf("the picker offers %q, the directory's dumps are %q", got, dumps)
	}
	h.key("enter")
	h.mustContain("every message in " + dumps[0])
	h.key("enter") // the dry run
	h.mustContain("Confirm replay", "Replay "+itoa(n)+" messages")
	h.key("enter")
	h.mustContain("Moved all " + itoa(n) + " messages")
	if _, err := os.Stat(filepath.Join(dir, dumps[0]+".progress")); err != nil {
		t.Errorf("the replay's progress is not beside its dump: %v", err)
	}
	if got := filesIn(t, cwd); !slices.Equal(got, []string{"audit.jsonl", "elsewhere.jsonl"}) {
		t.Errorf("the working directory has %q", got)
	}
}

// The quota stops a dump with a clear message: the file keeps the lines
// written, the queue every message (a dump browses).
func TestServedDumpStopsAtTheQuota(t *testing.T) {
	t.Chdir(t.TempDir())
	dir := filesDir(t)
	h, s := servedHarness(t, Options{Files: files.NewConfined(dir, files.ConfinedOptions{User: "alice", Quota: 4 << 10})})
	n := dlqReady(t, s)
	h.key("d", "enter")
	h.mustContain("the session's file quota is used", "of 4 KiB", "keeps the first", "and nothing was")
	got := filesIn(t, dir)
	if len(got) != 1 {
		t.Fatalf("files %q", got)
	}
	b, _ := os.ReadFile(filepath.Join(dir, got[0]))
	if len(b) > 4<<10 || !strings.HasSuffix(string(b), "\n") {
		t.Errorf("%d bytes, ending %q", len(b), b[max(0, len(b)-10):])
	}
	if lines := strings.Count(string(b), "\n") - 1; lines < 1 || lines >= n {
		t.Errorf("%d of %d messages written: want the quota to stop it midway", lines, n)
	}
	if after := dlqReady(t, s); after != n {
		t.Errorf("the DLQ holds %d after the dump, %d before", after, n)
	}
	// The quota used, d says so at once.
	h.key("d")
	h.mustContain("dump orders.dlq: the session's file quota is used")
}
