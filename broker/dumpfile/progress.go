package dumpfile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ladder-tui/ladder/internal/filelock"
)

// A replay holds an exclusive lock on its dump's progress file while it
// runs: two replays of one dump at once would each publish every line. The
// operating system drops the lock when the process ends, however it ends,
// so a killed replay never blocks the next. Who holds it is written into
// the progress file as a lock record, for the refusal to name.

// ErrReplayRunning refuses a replay of a dump another replay is publishing.
var ErrReplayRunning = errors.New("another replay of this dump is running")

// LockRecord says who holds a progress file.
type LockRecord struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
}

func NewLockRecord() *LockRecord {
	host, _ := os.Hostname()
	return &LockRecord{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Second)}
}

// LockProgress opens (creating) the progress file for appending and locks
// it; a lock another replay holds is refused, naming it.
func LockProgress(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("progress file: %w", err)
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, filelock.ErrHeld) {
			return nil, heldBy(path)
		}
		return nil, fmt.Errorf("progress file: %w", err)
	}
	return f, nil
}

// CheckUnlocked refuses when another replay holds the progress file (a dry
// run takes no lock, but planning one while another publishes would plan
// from progress about to change).
func CheckUnlocked(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("progress file: %w", err)
	}
	defer f.Close()
	switch err := filelock.TryLock(f); {
	case errors.Is(err, filelock.ErrHeld):
		return heldBy(path)
	case err != nil:
		return fmt.Errorf("progress file: %w", err)
	}
	return filelock.Unlock(f)
}

// heldBy is the refusal naming the holder from its lock record (the last
// one in the file). The holder writes its record just after it takes the
// lock: a refusal that meets the lock first waits a moment for it.
func heldBy(path string) error {
	var last *LockRecord
	for deadline := time.Now().Add(recordWait); ; time.Sleep(20 * time.Millisecond) {
		if last = lastLockRecord(path); last != nil || time.Now().After(deadline) {
			break
		}
	}
	if last == nil {
		return fmt.Errorf("%w (it holds %s): wait for it to end", ErrReplayRunning, path)
	}
	return fmt.Errorf("%w: pid %d on %s, started %s (it holds %s): wait for it to end, or stop it",
		ErrReplayRunning, last.PID, last.Host, last.Started.Local().Format("2006-01-02 15:04:05 MST"), path)
}

// recordWait bounds how long a refusal waits for the holder's lock record.
const recordWait = 3 * time.Second

// lastLockRecord is the last lock record in the progress file at path.
func lastLockRecord(path string) *LockRecord {
	var last *LockRecord
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), progressLineMax)
		for sc.Scan() {
			var e ProgressEntry
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Lock != nil {
				last = e.Lock
			}
		}
		f.Close()
	}
	return last
}

// progressLineMax bounds one line of a progress file (a batch's lines).
const progressLineMax = 16 << 20

// ProgressState is what earlier runs of a replay left in its progress file.
type ProgressState struct {
	// Done: lines published and confirmed.
	Done map[int]bool
	// Doubt: for lines not settled, how many times one was published
	// without an answer (a confirm, a return or a refusal): each of those
	// copies may be on the broker.
	Doubt map[int]int
	// Exists: the file records a replay (a lock record alone does not).
	Exists bool
}

// ReadProgress reads the progress file at path, written for the dump head
// describes. A progress file of another dump is refused.
func ReadProgress(path string, head Header) (ProgressState, error) {
	st := ProgressState{Done: map[int]bool{}, Doubt: map[int]int{}}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	defer f.Close()
	pending := map[int]bool{} // sent, not yet answered
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), progressLineMax)
	for sc.Scan() {
		var e ProgressEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// A torn last line (killed while writing): what it said is lost,
			// and its lines count as in flight.
			continue
		}
		if d := e.Dump; d != nil && (d.Queue != head.Queue || !d.DumpedAt.Equal(head.DumpedAt)) {
			return st, fmt.Errorf("it is the progress of another dump (of %s at %s), not of this one (of %s at %s): remove it",
				d.Queue, d.DumpedAt.Format(time.RFC3339), head.Queue, head.DumpedAt.Format(time.RFC3339))
		}
		if e.Dump != nil || len(e.Sent)+len(e.Done)+len(e.Failed) > 0 {
			st.Exists = true
		}
		for _, l := range e.Sent {
			if pending[l] {
				st.Doubt[l]++ // sent before and never answered
			}
			pending[l] = true
		}
		for _, l := range e.Done {
			st.Done[l], pending[l] = true, false
		}
		for _, l := range e.Failed {
			pending[l] = false
		}
	}
	for l, p := range pending {
		if p {
			st.Doubt[l]++
		}
	}
	for l := range st.Doubt {
		if st.Done[l] {
			delete(st.Doubt, l) // a later run published it and said so
		}
	}
	return st, sc.Err()
}

// progress file: JSON lines beside the dump, {"sent":[lines]} before a batch
// is published and {"done":[…]} / {"failed":[…]} once it is settled, each
// synced. A line sent but neither done nor failed was in flight when the
// replay stopped: it may have reached the broker. Each run first writes who
// it is ({"lock":…}, see replaylock.go).
type ProgressEntry struct {
	// Dump names the dump the progress is of: a progress file of another
	// dump (one written over this file's name) is refused.
	Dump   *ProgressDump `json:"dump,omitempty"`
	Run    string        `json:"run,omitempty"`
	Lock   *LockRecord   `json:"lock,omitempty"`
	Sent   []int         `json:"sent,omitempty"`
	Done   []int         `json:"done,omitempty"`
	Failed []int         `json:"failed,omitempty"`
}

type ProgressDump struct {
	Queue    string    `json:"queue"`
	DumpedAt time.Time `json:"dumped_at"`
}

// ProgressFile is where a replay of file keeps its progress (and its lock):
// beside the file a symbolic link leads to, so a replay through a link and
// one of the file itself share one progress and one lock, never publishing
// the dump twice. (A hard link is another name the lock does not see.)
func ProgressFile(file string) string {
	if real, err := filepath.EvalSymlinks(file); err == nil {
		file = real
	}
	return file + ".progress"
}
