package ui

import (
	"time"

	"github.com/ladder-tui/ladder/internal/files"
)

// Files is where the queue browser's dumps go (d) and where the dumps it
// replays come from (R), given to the UI by its caller (Options.Files):
// locally the working directory and the paths typed (files.Local), in a
// session of ladder serve a directory the server owns, its names and a
// quota (files.Confined). The UI names no path itself.
type Files interface {
	// Offer is what d offers for a dump of queue: a name the person may
	// change where ask, else none asked (the Files names the file); or why
	// no dump may be written, said before any read.
	Offer(queue string, now time.Time) (name string, ask bool, err error)
	// Create makes the dump file, new: typed is the name the person gave
	// where Offer asked (ignored otherwise).
	Create(queue, typed string) (*files.File, error)
	// List names the dump files R offers, sorted.
	List() ([]string, error)
	// Where is what the screen calls where List looks.
	Where() string
	// Path is the file a replay reads for a name List gave.
	Path(name string) (string, error)
}
