package cli

import (
	"bytes"
	"testing"

	"github.com/ladder-tui/ladder/broker"
)

// Off a terminal, progress prints nothing but a resource alarm's wait: one
// line when the broker starts blocking publishes, one when it stops.
func TestProgressPrinterSaysBlockedOffTerminal(t *testing.T) {
	var errb bytes.Buffer
	p := progressPrinter(&app{stderr: &errb})
	p(broker.MoveProgress{Total: 10, Done: 1, Moved: 1})
	p(broker.MoveProgress{Total: 10, Done: 2, Moved: 2, Blocked: "low on memory\x1b]0;x\a"})
	p(broker.MoveProgress{Total: 10, Done: 2, Moved: 2, Blocked: "low on memory\x1b]0;x\a"})
	p(broker.MoveProgress{Total: 10, Done: 5, Moved: 5})
	p(broker.MoveProgress{Total: 10, Done: 10, Moved: 10})
	want := "ladder: broker is blocking publishes (low on memory\\x1b]0;x\\x07); waiting\n" +
		"ladder: broker no longer blocks publishes; continuing\n"
	if got := errb.String(); got != want {
		t.Fatalf("stderr\n%q\nwant\n%q", got, want)
	}
}
