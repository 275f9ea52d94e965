package sim

import (
	"errors"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// A read-only simulation refuses a move as the live client does (the
// error wraps broker.ErrReadOnly) and allows its dry run.
func TestReadOnlyMoveIsTheLiveRefusal(t *testing.T) {
	s := busy(t, Options{Seed: 1, Quiet: true, ReadOnly: true})
	req := broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}}
	if _, err := s.Move(t.Context(), req, nil); !errors.Is(err, broker.ErrReadOnly) || err.Error() != "sim: "+usecase.RefuseReadOnly(true, "move from "+OrdersDLQ).Error() {
		t.Errorf("move: %v", err)
	}
	req.DryRun = true
	if _, err := s.Move(t.Context(), req, nil); err != nil {
		t.Errorf("dry run: %v", err)
	}
}
