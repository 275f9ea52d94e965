// Package files is where the terminal UI's dumps go (the browser's d) and
// where the dumps it replays come from (R). Local is ladder on one's own
// machine: the working directory and any path the person types. Confined is
// a session of ladder serve on a bastion: one directory the server owns,
// names the server makes, a byte quota per session and a read-only policy,
// so a person's key never writes where, or as much as, they choose as the
// server's user.
package files

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Ext is a dump file's extension: what the replay picker lists.
const Ext = ".jsonl"

// File is a dump file being written (a usecase.DumpWriter): Local's at a
// typed path, Confined's in its directory, counted against its session's
// quota.
type File struct {
	f     *os.File
	name  string // what the screen calls it
	path  string
	quota *quota // nil: none
}

// Name is what the screen calls the file: the path typed locally, the
// server's name in a session.
func (f *File) Name() string { return f.name }

// Write writes p whole or not at all where a quota counts it: a dump's
// line that would pass the quota is refused before any of it is written,
// so the file holds whole lines only.
func (f *File) Write(p []byte) (int, error) {
	if err := f.quota.take(int64(len(p))); err != nil {
		return 0, err
	}
	n, err := f.f.Write(p)
	f.quota.give(int64(len(p) - n))
	return n, err
}

// Sync makes what was written durable.
func (f *File) Sync() error { return f.f.Sync() }

// Close closes the file, keeping it.
func (f *File) Close() error { return f.f.Close() }

// Remove closes the file and removes it: a dump that wrote no message
// leaves nothing behind.
func (f *File) Remove() error {
	f.f.Close()
	return os.Remove(f.path)
}

// Local is ladder run by a person on their own machine, as it always was:
// a dump goes to the path they type (a new file: an existing one is
// refused), and the replay picker lists the working directory's dumps.
type Local struct{}

// Offer names a dump of queue after the queue and the time; the person may
// change it.
func (Local) Offer(queue string, now time.Time) (name string, ask bool, err error) {
	return strings.NewReplacer("/", "_", " ", "_").Replace(queue) + "-" + now.UTC().Format("20060102-150405") + Ext, true, nil
}

// Create makes the file the person named.
func (Local) Create(_, name string) (*File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("dump to %s: %w", name, err)
	}
	return &File{f: f, name: name, path: name}, nil
}

// List is the working directory's dump files, sorted.
func (Local) List() ([]string, error) {
	names, err := filepath.Glob("*" + Ext)
	slices.Sort(names)
	return names, err
}

// Where is the working directory.
func (Local) Where() string {
	wd, err := os.Getwd()
	if err != nil {
		return "the working directory"
	}
	return wd
}

// Path is the name itself: locally, a path.
func (Local) Path(name string) (string, error) { return name, nil }

// None is the files of a session whose server keeps none: no dump is
// written, no dump is offered to replay.
type None struct{}

var errNoFiles = errors.New("this server keeps no files: dumps and replays are not offered here (tell its operator)")

func (None) Offer(string, time.Time) (string, bool, error) { return "", false, errNoFiles }
func (None) Create(string, string) (*File, error)          { return nil, errNoFiles }
func (None) List() ([]string, error)                       { return nil, nil }
func (None) Where() string                                 { return "this server (it keeps no files)" }
func (None) Path(string) (string, error)                   { return "", errNoFiles }

// quota is a session's bytes left to write; a nil quota counts nothing.
type quota struct {
	mu    sync.Mutex
	limit int64
	used  int64
	// stopped: a write was refused; the session writes no more dumps
	// (one more would stop at its first lines too).
	stopped bool
}

// ErrQuota is a write refused because the session's quota is used.
var ErrQuota = errors.New("the session's file quota is used")

func (q *quota) take(n int64) error {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.used+n > q.limit {
		q.stopped = true
		return fmt.Errorf("%w (%s written of %s)", ErrQuota, FormatSize(q.used), FormatSize(q.limit))
	}
	q.used += n
	return nil
}

func (q *quota) give(n int64) {
	if q == nil || n <= 0 {
		return
	}
	q.mu.Lock()
	q.used -= n
	q.mu.Unlock()
}

func (q *quota) full() bool {
	if q == nil {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stopped || q.used >= q.limit
}
