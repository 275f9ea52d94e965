package gate

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/termtext"
)

// Log is an audit log: JSON lines, one per event, shared by every gate
// that writes there (a server's sessions, a run's clients).
type Log struct {
	mu sync.Mutex
	w  io.Writer
}

// NewLog writes to w (an *os.File opened for appending, in use).
func NewLog(w io.Writer) *Log { return &Log{w: w} }

// write appends ev as one whole line. Names from the broker may hold runes
// a terminal acts on (bidi overrides, C1 controls): they are written as
// JSON escapes, so the log can be read with cat or tail. The line is built
// whole and written at once; a write cut short (a full disk) is taken back,
// so the log never keeps half a line.
func (l *Log) write(ev broker.AuditEvent) error {
	ev.Time = time.Now().UTC()
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	line := append(termtext.EscapeJSON(b), '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	f, isFile := l.w.(truncater)
	var size int64 = -1
	if isFile {
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
	}
	n, err := l.w.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		err = fmt.Errorf("audit log: %w", err)
		if n > 0 && size >= 0 {
			if terr := f.Truncate(size); terr != nil {
				err = fmt.Errorf("%w (and its partial line could not be taken back: %v)", err, terr)
			}
		}
	}
	return err
}

// truncater is an audit log that can take back a partial line (*os.File).
// Found by assertion on the writer, not a capability of a client: an
// io.Writer that is a file can be truncated.
type truncater interface {
	Stat() (os.FileInfo, error)
	Truncate(size int64) error
}
