package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/topology"
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

// cancelAfterFirst is a dump file that stops the run (as Ctrl+C does)
// once its header and first message are written.
type cancelAfterFirst struct {
	bytes.Buffer
	lines  int
	cancel func()
}

func (w *cancelAfterFirst) Write(p []byte) (int, error) {
	if w.lines++; w.lines == 2 {
		defer w.cancel()
	}
	return w.Buffer.Write(p)
}

func (w *cancelAfterFirst) Sync() error { return nil }

// stoppableBrowse browses three messages, stopping as the live client does
// when its context ends.
type stoppableBrowse struct{ broker.Client }

func (stoppableBrowse) Vhost() string { return "/" }
func (stoppableBrowse) Topology(context.Context) (topology.Vhost, error) {
	return topology.Vhost{Name: "/", Queues: []topology.Queue{{Name: "q", Type: topology.QueueClassic, Messages: 3, Ready: 3}}}, nil
}
func (stoppableBrowse) BrokerVersion(context.Context) (string, error) { return "3.13.7", nil }
func (stoppableBrowse) Peek(ctx context.Context, q string, opt broker.PeekOptions) (*broker.PeekResult, error) {
	for i := range 3 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := opt.Each(&broker.Message{Position: i, Properties: broker.Properties{MessageID: fmt.Sprint("m", i)}, Body: []byte("{}")}); err != nil {
			return nil, err
		}
	}
	return &broker.PeekResult{Queue: q, Ready: 3, Total: 3}, nil
}

// A dump Ctrl+C stopped says so in the user's words too, not Go's
// "(context canceled)" (issue 31), and still says it is partial.
func TestCtrlCStoppedDumpSaysStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelAfterFirst{cancel: cancel}
	_, err := usecase.Dump(ctx, stoppableBrowse{}, usecase.DumpOptions{Queue: "q"}, w)
	if !errors.Is(err, broker.ErrPartial) {
		t.Fatalf("err %v, want a partial dump", err)
	}
	a := &app{}
	a.stoppedBy.Store("ctrl+c")
	var b bytes.Buffer
	printError(&b, a, err)
	if got := b.String(); !strings.Contains(got, "(stopped (ctrl+c)): the rest is not in the file") || strings.Contains(got, "context canceled") {
		t.Errorf("%q", got)
	}
}
