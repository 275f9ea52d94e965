package usecase

import (
	"context"
	"fmt"

	"github.com/ladder-tui/ladder/broker"
)

// PreviewCap bounds the dry run a confirmation shows of a queue: it browses
// every message it plans and the report holds every plan. A dump file's
// dry run reads the file whole (it browses nothing).
const PreviewCap = 10000

// DefaultMaxMoves is the loop guard of the moves and replays ladder runs
// (--max-moves, the TUI's): a message ladder already moved this many times
// stays where it is.
const DefaultMaxMoves = 5

// RefuseReadOnly refuses a run that changes the broker under read-only
// mode, before anything is read or asked; what names it ("move from Q").
func RefuseReadOnly(readOnly bool, what string) error {
	if readOnly {
		return fmt.Errorf("%s: %w", what, broker.ErrReadOnly)
	}
	return nil
}

// Confirmation is how a face runs "dry run, confirm, then run exactly that
// plan" (ConfirmThenBind): the command line asks on its terminal, the TUI
// runs the same steps from its dialog (PreviewRequest, CheckPreview, Bind).
type Confirmation struct {
	// What names the run in its refusals: "move from Q", "replay FILE".
	What string
	// File: the source is a dump file (a replay), its dry run not capped.
	File bool
	// DryRun runs a dry run: Client.Move, or Replay for a dump file.
	DryRun func(ctx context.Context, req broker.MoveRequest) (*broker.MoveReport, error)
	// Consent, when set, asks for a dry run the broker refused because its
	// read of the source counts a delivery toward a delivery limit; yes
	// runs it again with ForcePeek, which the run then carries.
	Consent func(err error, dry broker.MoveRequest) bool
	// Ask shows the plan and asks; an error is the user's no.
	Ask func(plan *broker.MoveReport) error
}

// ConfirmThenBind dry-runs req, has the plan confirmed and returns the
// request to run: bound to that plan (Bind). Read-only mode is refused
// before (RefuseReadOnly).
func ConfirmThenBind(ctx context.Context, req broker.MoveRequest, c Confirmation) (broker.MoveRequest, error) {
	dry := PreviewRequest(req, c.File)
	plan, err := c.DryRun(ctx, dry)
	if err != nil && c.Consent != nil && c.Consent(err, dry) {
		dry.ForcePeek, req.ForcePeek = true, true
		plan, err = c.DryRun(ctx, dry)
	}
	if err != nil {
		return req, err
	}
	if err := CheckPreview(c.What, c.File, plan); err != nil {
		return req, err
	}
	if err := c.Ask(plan); err != nil {
		return req, err
	}
	return Bind(req, plan), nil
}

// PreviewRequest is the dry run that confirms req: what the run would
// take, at most PreviewCap messages of a queue.
func PreviewRequest(req broker.MoveRequest, file bool) broker.MoveRequest {
	req.DryRun = true
	if !file && len(req.Positions) == 0 && (req.Limit == 0 || req.Limit > PreviewCap) {
		req.Limit = PreviewCap
	}
	return req
}

// CheckPreview refuses a plan with nothing in it: there is nothing to
// confirm, and a run bound to no plan would take what arrives meanwhile.
func CheckPreview(what string, file bool, plan *broker.MoveReport) error {
	switch {
	case plan.Requested > 0:
		return nil
	case file:
		return fmt.Errorf("%s: no line to publish: nothing to replay", what)
	}
	return fmt.Errorf("%s: no message is ready: nothing to move", what)
}

// Bind is req bound to the plan confirmed: each message is checked against
// its previewed route (Expect), and a run of the whole source takes as many
// as were planned, not what arrived since, unless the preview stopped at
// PreviewCap. ForcePeek, once said yes to, is req's already.
func Bind(req broker.MoveRequest, plan *broker.MoveReport) broker.MoveRequest {
	req.Expect = plan.Planned
	if len(req.Positions) == 0 && !PreviewCapped(req, plan) && (req.Limit == 0 || plan.Requested < req.Limit) {
		req.Limit = plan.Requested
	}
	return req
}

// PreviewCapped says the preview of req stopped at PreviewCap: the run may
// take more than it planned, each planned as it moves. (A dump file's
// preview is never cut: its caller asks only of a queue.)
func PreviewCapped(req broker.MoveRequest, plan *broker.MoveReport) bool {
	return len(req.Positions) == 0 && plan.Requested >= PreviewCap && (req.Limit == 0 || req.Limit > PreviewCap)
}
