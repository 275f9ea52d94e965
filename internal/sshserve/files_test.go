package sshserve

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/ladder-tui/ladder/internal/files"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/ui"
)

// A server given no Files gives its sessions none: d says so, R offers
// nothing, and nothing is written where the server runs (not the working
// directory, not a typed path).
func TestSessionWithoutFilesWritesNone(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	if err := os.WriteFile("audit.jsonl", []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := start(t, nil)
	c, err := f.dial("alice", gossh.PublicKeys(f.operator))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tm := f.shell(t, c, 120, 30)
	tm.out.waitText(t, "LADDERS")
	tm.toDLQ(t)
	tm.keys(t, keyEnter)
	tm.out.waitText(t, "peeked")
	tm.keys(t, "d")
	tm.out.waitText(t, "this server keeps no files")
	tm.keys(t, "R")
	tm.out.waitText(t, "no *.jsonl dump file in this server")
	tm.keys(t, "q")
	if err := tm.wait(t, f.log); err != nil {
		t.Errorf("q: %v", err)
	}
	if ents, _ := os.ReadDir(work); len(ents) != 1 {
		t.Errorf("the working directory: %v", ents)
	}
}

// Config.Files is asked once per session, with who it is: each session
// its own (its quota its own).
func TestSessionFilesAreEachSessions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	var (
		mu  sync.Mutex
		who []string
	)
	f := start(t, func(c *Config) {
		c.Files = func(s Session) ui.Files {
			mu.Lock()
			who = append(who, s.User+" "+string(s.Role))
			mu.Unlock()
			return files.NewConfined(dir, files.ConfinedOptions{User: s.User, Writes: s.Principal("").May(gate.WriteFile)})
		}
	})
	for _, u := range []struct {
		name string
		key  gossh.Signer
		want string
	}{{"bob", f.readOnly, "read-only: this key may not write files"}, {"alice", f.operator, "Dump orders.dlq to a file in the server's files directory?"}} {
		c, err := f.dial(u.name, gossh.PublicKeys(u.key))
		if err != nil {
			t.Fatal(err)
		}
		tm := f.shell(t, c, 120, 30)
		tm.out.waitText(t, "LADDERS")
		tm.toDLQ(t)
		tm.keys(t, keyEnter)
		tm.out.waitText(t, "peeked")
		tm.keys(t, "d")
		tm.out.waitText(t, u.want)
		tm.keys(t, "\x03")
		if err := tm.wait(t, f.log); err != nil {
			t.Errorf("%s: %v", u.name, err)
		}
		c.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(who, []string{"bob read-only", "alice operator"}) {
		t.Errorf("Files asked for %q", who)
	}
}
