// Package learned remembers, between runs, what ladder's reads of a
// broker's messages showed about its queues' roles (topology.Evidence: the
// queues a shared error queue's messages failed in, per-message
// expirations, what a peek saw of a head): a peek teaches the next
// topology. It is a cache: per broker, one JSON file under the user's
// cache directory, each queue's evidence with when it was learned,
// forgotten after a day, bounded, and never a failure (a file that cannot
// be read is ignored; one that cannot be written is skipped). It holds no
// message body: Evidence holds none.
package learned

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/internal/filelock"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Bounds: what one broker's file and the directory hold at most.
const (
	// TTL is how long evidence is remembered: roles change (an
	// application redeployed with another error queue), and a day covers
	// the incident one is working on.
	TTL = 24 * time.Hour
	// MaxQueues is the queues remembered per vhost (the latest learned).
	MaxQueues = 1000
	// MaxVhosts is the vhosts remembered per broker (the latest learned).
	MaxVhosts = 100
	// MaxBrokers is the brokers remembered (files; the latest written).
	MaxBrokers = 50
)

// Entry is one queue's evidence and when it was learned.
type Entry struct {
	Learned time.Time     `json:"learned"`
	Seen    topology.Seen `json:"seen"`
}

// Memory is what is remembered of one broker: by vhost, by queue.
type Memory map[string]map[string]Entry

// Evidence is m's evidence by vhost, without the times.
func (m Memory) Evidence() map[string]topology.Evidence {
	out := make(map[string]topology.Evidence, len(m))
	for vhost, queues := range m {
		e := make(topology.Evidence, len(queues))
		for q, en := range queues {
			e[q] = en.Seen
		}
		out[vhost] = e
	}
	return out
}

// file is one broker's file.
type file struct {
	// Broker is the key the file is named after (addresses, never
	// credentials): a file that does not say it is another's.
	Broker string `json:"broker"`
	Vhosts Memory `json:"vhosts"`
}

// Store is the cache directory.
type Store struct {
	// Dir holds the files (Dir()'s unless a test's).
	Dir string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Note hears what was ignored and why (a corrupt file): a debug note,
	// never an error.
	Note func(string)
}

// Dir is where the user's cache keeps ladder's: $XDG_CACHE_HOME/ladder/learned
// (~/.cache/ladder/learned; ~/Library/Caches on macOS).
func Dir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("learned evidence: no cache directory: %w", err)
	}
	return filepath.Join(dir, "ladder", "learned"), nil
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) note(format string, args ...any) {
	if s.Note != nil {
		s.Note(fmt.Sprintf(format, args...))
	}
}

// path is broker's file: named by a hash of the key, so that no address
// needs escaping.
func (s *Store) path(broker string) string {
	sum := sha256.Sum256([]byte(broker))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:12])+".json")
}

// Load is what is remembered of broker and not yet expired (empty when
// nothing is, or the file cannot be read: noted).
func (s *Store) Load(broker string) Memory {
	m, err := s.read(broker)
	if err != nil {
		s.note("learned evidence of %s ignored: %v", broker, err)
		return Memory{}
	}
	return m
}

func (s *Store) read(broker string) (Memory, error) {
	p := s.path(broker)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Memory{}, nil
	}
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if f.Broker != broker {
		return nil, fmt.Errorf("%s is of broker %q", p, f.Broker)
	}
	cut := s.now().Add(-TTL)
	m := Memory{}
	for vhost, queues := range f.Vhosts {
		for q, en := range queues {
			// A time ahead of the clock is not trusted to expire.
			if en.Learned.Before(cut) || en.Learned.After(s.now().Add(time.Hour)) {
				continue
			}
			if m[vhost] == nil {
				m[vhost] = map[string]Entry{}
			}
			m[vhost][q] = en
		}
	}
	return m, nil
}

// Save remembers known, everything a run's client knew of broker by vhost:
// a queue's evidence as loaded (base) keeps the time it was learned, new
// or changed evidence is learned now. What the file holds of other queues
// and vhosts (another run's) stays, unless expired or past the bounds.
func (s *Store) Save(broker string, base Memory, known map[string]topology.Evidence) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("learned evidence: %w", err)
	}
	// Runs that end together (a TUI and a peek) each add what they
	// learned: one at a time, or one's would be lost.
	unlock, err := s.lock(broker)
	if err != nil {
		return fmt.Errorf("learned evidence: %w", err)
	}
	defer unlock()
	now := s.now()
	m, err := s.read(broker)
	if err != nil {
		s.note("learned evidence of %s replaced: %v", broker, err)
		m = Memory{}
	}
	changed := false
	for vhost, e := range known {
		for q, seen := range e {
			en := Entry{Learned: now, Seen: seen}
			if was, ok := base[vhost][q]; ok && was.Seen.Equal(seen) {
				en.Learned = was.Learned
			}
			if cur, ok := m[vhost][q]; ok && cur.Seen.Equal(seen) && !cur.Learned.Before(en.Learned) {
				continue
			}
			if m[vhost] == nil {
				m[vhost] = map[string]Entry{}
			}
			m[vhost][q] = en
			changed = true
		}
	}
	if !changed {
		return nil
	}
	bound(m)
	b, err := json.Marshal(file{Broker: broker, Vhosts: m})
	if err != nil {
		return fmt.Errorf("learned evidence: %w", err)
	}
	if err := writeAtomic(s.path(broker), b); err != nil {
		return fmt.Errorf("learned evidence: %w", err)
	}
	s.prune()
	return nil
}

// lockWait bounds how long Save waits for another run's save.
const lockWait = 5 * time.Second

// lock takes broker's lock file, waiting up to lockWait for another run
// holding it.
func (s *Store) lock(broker string) (unlock func(), err error) {
	path := strings.TrimSuffix(s.path(broker), ".json") + ".lock"
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := filelock.TryLock(f)
		if err == nil {
			return func() { _ = filelock.Unlock(f); f.Close() }, nil
		}
		if !errors.Is(err, filelock.ErrHeld) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// bound keeps the MaxQueues latest learned queues of each vhost and the
// MaxVhosts vhosts learned latest.
func bound(m Memory) {
	latest := map[string]time.Time{}
	for vhost, queues := range m {
		if len(queues) > MaxQueues {
			names := make([]string, 0, len(queues))
			for q := range queues {
				names = append(names, q)
			}
			slices.SortFunc(names, func(a, b string) int {
				return cmp.Or(queues[b].Learned.Compare(queues[a].Learned), strings.Compare(a, b))
			})
			for _, q := range names[MaxQueues:] {
				delete(queues, q)
			}
		}
		for _, en := range queues {
			if en.Learned.After(latest[vhost]) {
				latest[vhost] = en.Learned
			}
		}
	}
	if len(m) <= MaxVhosts {
		return
	}
	vhosts := make([]string, 0, len(m))
	for v := range m {
		vhosts = append(vhosts, v)
	}
	slices.SortFunc(vhosts, func(a, b string) int {
		return cmp.Or(latest[b].Compare(latest[a]), strings.Compare(a, b))
	})
	for _, v := range vhosts[MaxVhosts:] {
		delete(m, v)
	}
}

// writeAtomic writes b to path through a temporary file renamed over it:
// a reader sees the old file or the new one, never half of one.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".learned-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// prune removes the files past MaxBrokers, the least recently written
// first, and those not written for TTL (all they held has expired): by
// the files' times, the wall clock's.
func (s *Store) prune() {
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return
	}
	type f struct {
		path string
		mod  time.Time
	}
	var files []f
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		files = append(files, f{filepath.Join(s.Dir, e.Name()), info.ModTime()})
	}
	slices.SortFunc(files, func(a, b f) int { return b.mod.Compare(a.mod) })
	cut := time.Now().Add(-TTL)
	for i, x := range files {
		if i >= MaxBrokers || x.mod.Before(cut) {
			os.Remove(x.path)
			os.Remove(strings.TrimSuffix(x.path, ".json") + ".lock")
		}
	}
}
