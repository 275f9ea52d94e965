package sim

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
)

// dumpBuf is a dump file in memory.
type dumpBuf struct{ bytes.Buffer }

func (*dumpBuf) Sync() error { return nil }

// A browse that hands its messages on (a dump, a grouping scan) keeps none
// in its result, yet reports what its returns dead-lettered as a peek
// does: on 4.0, three forced peeks bring a limit-3 quorum queue's
// messages to their last delivery, and the forced dump that follows says
// it dead-lettered all three.
func TestForcedDumpReportsWhatItDeadLettered(t *testing.T) {
	s := New(Options{Seed: 1, Now: fixedClock, Quiet: true, BrokerVersion: "4.0.5"})
	t.Cleanup(func() { s.Close() })
	s.testDeclare(t, "dlq", nil)
	s.testDeclare(t, "qq", map[string]any{"x-queue-type": "quorum", "x-delivery-limit": int64(3), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"})
	for i := range 3 {
		s.testPublish(t, "", "qq", fmt.Sprintf("m-%d", i), "", nil)
	}
	ctx := context.Background()
	for range 3 {
		if _, err := s.Peek(ctx, "qq", broker.PeekOptions{Limit: 3, Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	var w dumpBuf
	rep, err := usecase.Dump(ctx, s, usecase.DumpOptions{Queue: "qq", Force: true}, &w)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != 3 || rep.Released != 3 || !strings.Contains(strings.Join(rep.SideEffects, " "), "3 messages were dead-lettered to queue dlq by this peek (position 0, 1, 2)") {
		t.Fatalf("wrote %d, released %d, side effects %q", rep.Written, rep.Released, rep.SideEffects)
	}
	if got := depth(t, s, "dlq"); got != 3 {
		t.Fatalf("dlq holds %d", got)
	}
}
