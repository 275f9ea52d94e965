package movedialog

import (
	"context"
	"errors"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/ui/style"
)

// Read-only mode refuses the dialog's move and replay before their dry
// run, with the commands' error (broker.RefuseReadOnly): nothing reaches
// the broker.
func TestReadOnlyRefusedBeforeTheDryRun(t *testing.T) {
	s := sim.New(sim.Options{Quiet: true, ReadOnly: true})
	defer s.Close()
	keys := keymap.Default()
	m := New(Env{Keys: &keys, Styles: style.New(style.DefaultTheme(), true),
		Client: func() Mover { return s }, Context: context.Background})
	for _, spec := range []Spec{{Queue: sim.OrdersDLQ, Depth: 3}, {Queue: sim.OrdersDLQ, ReplayFile: "d.jsonl"}} {
		m.Open(spec)
		cmd := m.preflight(broker.MoveRequest{From: sim.OrdersDLQ, To: broker.Target{Kind: broker.TargetOrigin}})
		what := "move from " + sim.OrdersDLQ
		if spec.ReplayFile != "" {
			what = "replay d.jsonl"
		}
		if cmd != nil || !errors.Is(m.err, broker.ErrReadOnly) || m.err.Error() != broker.RefuseReadOnly(true, what).Error() {
			t.Errorf("read-only %s: %v (a dry run was started: %v)", what, m.err, cmd != nil)
		}
	}
}
