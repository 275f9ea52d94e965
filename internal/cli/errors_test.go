package cli

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/ladder-tui/ladder/broker"
)

// Ctrl+C is said in the user's words, not Go's "context canceled"; a
// cancellation nobody asked for by a signal keeps Go's words.
func TestCtrlCSaysStopped(t *testing.T) {
	err := fmt.Errorf("%w: %w", fmt.Errorf("move from q: %w", context.Canceled), broker.ErrPartial)
	for by, want := range map[string]string{
		"ctrl+c":  "ladder: move from q: stopped (ctrl+c): some messages were not moved\n",
		"SIGTERM": "ladder: move from q: stopped (SIGTERM): some messages were not moved\n",
		"":        "ladder: move from q: context canceled: some messages were not moved\n",
	} {
		a := &app{}
		if by != "" {
			a.stoppedBy.Store(by)
		}
		var b bytes.Buffer
		printError(&b, a, err)
		if b.String() != want {
			t.Errorf("%q: %q, want %q", by, b.String(), want)
		}
	}
}
