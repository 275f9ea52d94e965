package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Confined is one session's files on a server: dumps are written only in
// Dir, under names it makes from the session's user, the queue and the
// time (never a name the person gives), up to a quota of bytes for the
// session; the replay picker lists Dir's dump files only, and a name is
// resolved inside Dir only (no path, no "..", no symbolic link). One is
// made per session: its quota is that session's.
type Confined struct {
	dir    string
	user   string
	writes error // why this session may write no file; nil: it may
	quota  *quota
	now    func() time.Time
}

// ConfinedOptions configure a session's Confined.
type ConfinedOptions struct {
	// User names the session's files (its SSH user).
	User string
	// Writes is why the session may write no file: the gate's refusal
	// (gate.Principal.May(gate.WriteFile): a read-only key, unless the
	// server's --read-only-dumps); nil: it may.
	Writes error
	// Quota bounds the bytes the session writes, every dump counted (0:
	// no bound).
	Quota int64
	// Now is the clock of the names (time.Now when nil).
	Now func() time.Time
}

// NewConfined is a session's files in dir (see CheckDir).
func NewConfined(dir string, o ConfinedOptions) *Confined {
	c := &Confined{dir: dir, user: o.User, now: o.Now, writes: o.Writes}
	if c.now == nil {
		c.now = time.Now
	}
	if o.Quota > 0 {
		c.quota = &quota{limit: o.Quota}
	}
	return c
}

// CheckDir checks dir, where it is there, is a directory and not a
// symbolic link to one: the server's files live there. Where it is not
// there, the first dump makes it (0700): a server nobody dumps from makes
// no directory.
func CheckDir(dir string) error {
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("files directory: %w", err)
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("files directory %s: a symbolic link (give the directory it leads to)", dir)
	case !st.IsDir():
		return fmt.Errorf("files directory %s: not a directory", dir)
	}
	return nil
}

// Offer asks nothing: the server names the file. A session that may not
// write, or whose quota is used, is told so before any read.
func (c *Confined) Offer(string, time.Time) (name string, ask bool, err error) {
	if c.writes != nil {
		return "", false, c.writes
	}
	if c.quota.full() {
		return "", false, fmt.Errorf("%w (%s): no more dumps in this session", ErrQuota, FormatSize(c.quota.limit))
	}
	return "", false, nil
}

// Create makes a new dump file of queue in the directory, named by the
// server (Name): typed is ignored. An existing file is never opened (two
// dumps in the same second get -2, -3, …).
func (c *Confined) Create(queue, _ string) (*File, error) {
	if c.writes != nil {
		return nil, c.writes
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return nil, fmt.Errorf("dump: files directory: %w", err)
	}
	root, err := os.OpenRoot(c.dir)
	if err != nil {
		return nil, fmt.Errorf("dump: files directory: %w", err)
	}
	defer root.Close()
	base := Name(c.user, queue, c.now())
	for i := 1; i <= 100; i++ {
		name := base + Ext
		if i > 1 {
			name = base + "-" + strconv.Itoa(i) + Ext
		}
		// O_EXCL: a name already there (a file, or a link planted
		// there) is never opened; the Root keeps the open inside dir.
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("dump to %s: %w", name, err)
		}
		return &File{f: f, name: name, path: filepath.Join(c.dir, name), quota: c.quota}, nil
	}
	return nil, fmt.Errorf("dump to %s%s: 100 files of that name already", base, Ext)
}

// List is the directory's dump files (regular files only, no link),
// sorted.
func (c *Confined) List() ([]string, error) {
	ents, err := os.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) { // no dump made yet
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("files directory: %w", err)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), Ext) && checkName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// Where is what the screen calls the directory.
func (c *Confined) Where() string { return "the server's files directory" }

// Path is the file a replay reads for name, one List gave: a plain name of
// a regular file in the directory, never a path, a link or a name that
// leads elsewhere.
func (c *Confined) Path(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(c.dir)
	if err != nil {
		return "", fmt.Errorf("files directory: %w", err)
	}
	defer root.Close()
	st, err := root.Lstat(name)
	if err != nil {
		return "", fmt.Errorf("replay %s: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("replay %s: not a regular file in the server's files directory", name)
	}
	return filepath.Join(c.dir, name), nil
}

// checkName refuses what is not a plain dump file name.
func checkName(name string) error {
	if name == "" || name != filepath.Base(name) || strings.ContainsAny(name, `/\`+"\x00") ||
		strings.HasPrefix(name, ".") || !strings.HasSuffix(name, Ext) {
		return fmt.Errorf("%q: not a dump file of the server's files directory", name)
	}
	return nil
}

// Name is the server's name of a dump (without Ext):
// <user>-<queue>-<UTC time>, each part reduced to letters, digits, '.',
// '_' and '-' (the others become '_'), bounded in length and never
// starting with a dot, so it is one plain file name whatever the user or
// queue is called.
func Name(user, queue string, at time.Time) string {
	return part(user) + "-" + part(queue) + "-" + at.UTC().Format("20060102T150405Z")
}

// maxPart bounds each part of a name: a file name is at most 255 bytes.
const maxPart = 80

func part(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= maxPart {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" || out[0] == '.' {
		out = "_" + out
	}
	return out
}
