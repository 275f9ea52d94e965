package filelock

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A second open file of the same path cannot take the lock while the first
// holds it, and can once it is released. flock locks belong to the open
// file, so two opens in one process exclude each other as two processes do.
func TestSecondOpenIsRefusedUntilReleased(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.progress")
	a, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.OpenFile(p, os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := TryLock(a); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if err := TryLock(b); !errors.Is(err, ErrHeld) {
		t.Fatalf("second lock while the first holds it: %v, want ErrHeld", err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(b); err != nil {
		t.Fatalf("lock after release: %v", err)
	}
}

// The lock dies with its process: a child that locks and exits (as kill -9
// would end it) leaves the file free.
func TestLockEndsWithItsProcess(t *testing.T) {
	if os.Getenv("FILELOCK_CHILD") != "" {
		f, err := os.OpenFile(os.Getenv("FILELOCK_CHILD"), os.O_RDWR, 0o600)
		if err != nil || TryLock(f) != nil {
			os.Exit(2)
		}
		os.Exit(0) // without unlocking or closing
	}
	p := filepath.Join(t.TempDir(), "x.progress")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLockEndsWithItsProcess$")
	cmd.Env = append(os.Environ(), "FILELOCK_CHILD="+p)
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v", err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := TryLock(f); err != nil {
		t.Fatalf("lock after its holder exited: %v", err)
	}
}

// A locked file stays readable and writable through another open file of
// the same process: a replay locks its progress file and then reads it
// again, and a refused replay reads the holder's lock record. (Windows
// byte-range locks are mandatory: a lock over the file's bytes would
// refuse both; the lock is a byte past its end there.)
func TestLockedFileStaysReadableThroughAnotherOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.progress")
	if err := os.WriteFile(p, []byte(`{"lock":{"pid":1}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	holder, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := TryLock(holder); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.WriteString(`{"sent":[2]}` + "\n"); err != nil {
		t.Fatalf("the holder's own write: %v", err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != `{"lock":{"pid":1}}`+"\n"+`{"sent":[2]}`+"\n" {
		t.Fatalf("read through another open file while locked: %q, %v", b, err)
	}
	other, err := os.OpenFile(p, os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := TryLock(other); !errors.Is(err, ErrHeld) {
		t.Fatalf("second lock: %v, want ErrHeld", err)
	}
}
