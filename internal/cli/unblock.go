package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// unblockResult is `ladder unblock -o json`.
type unblockResult struct {
	Unblock moveplan.UnblockPlan `json:"unblock"`
	// SideEffects are the peek's (it reads the queue as ladder peek does).
	SideEffects []string           `json:"side_effects"`
	Move        *broker.MoveReport `json:"move"`
}

func newUnblockCmd(a *app) *cobra.Command {
	var (
		look      int
		dryRun    bool
		yes       bool
		forcePeek bool
		maxMoves  int
		force     bool
	)
	cmd := &cobra.Command{
		Use:   "unblock QUEUE",
		Short: "Free a head-of-line-blocked wait queue: move the messages holding others back",
		Long: `A queue that relies on per-message expiration only expires the message at its
head: a long delay there holds back every shorter one behind it. unblock reads
the queue's first messages (a peek, with a peek's side effects), picks those
whose remaining delay is longer than that of a message behind them, and moves
each into a per-delay wait queue (ladder.delay.<ms>…) with its REMAINING delay,
dead-lettering to where the queue itself dead-letters. The remaining delay is
worked out as each message is published (the time spent confirming adds no
lateness). The picked messages still leave when they were due; everything left
behind is then in due order and leaves on time.

The move is loss-free (confirmed before acked) and goes through the same
planner as ladder move: a dry run first, then a confirmation on a terminal
(--yes skips it). A picked message is the one the peek saw (id, body,
expiration, timestamp, and no further back in the queue); one no longer there
is not moved, and not replaced by a look-alike. A message with no timestamp,
or one that never expires, stays, with a note. Exit 3 when some picked
messages stayed.

It reads the queue twice before moving anything: the look, then the move's
preview. Where each read counts a delivery toward a quorum queue's delivery
limit (RabbitMQ before 4.3) that is asked for first on a terminal (the
question ladder peek asks) and otherwise refused unless --force-peek;
--read-only refuses it. When the look shows that the preview would
dead-letter a message, the unblock is refused.

A picked message ladder already moved --max-moves times (x-ladder-moves, 5 by
default, as for move and replay) stays where it is, with a note: a loop
guard against unblocking the same message again and again; --force moves it
anyway.`,
		Args: exactlyOne("QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			queue := args[0]
			if look < 0 {
				return usageErr("--look %d: want 1 or more", look)
			}
			if err := moveplan.CheckMaxMoves(maxMoves); err != nil {
				return usageErr("%w", err)
			}
			c, closeClient, err := a.clientToRun("unblock", "unblock "+queue, dryRun, yes)
			if err != nil {
				return err
			}
			defer closeClient()
			opt := usecase.UnblockOptions{Look: look, ForcePeek: forcePeek}
			req, plan, peeked, err := usecase.PrepareUnblockWith(cmd.Context(), c, queue, opt)
			if _, ok := previewConsent(a, err, broker.MoveRequest{}, "ladder unblock reads the queue twice (its look, then the move's preview)"); ok {
				opt.ForcePeek = true
				req, plan, peeked, err = usecase.PrepareUnblockWith(cmd.Context(), c, queue, opt)
			}
			if err != nil {
				return previewHint(err)
			}
			req.MaxMoves, req.Force = maxMoves, force
			effects := []string{}
			if peeked != nil && peeked.SideEffects != nil {
				effects = peeked.SideEffects
			}
			if len(plan.Picks) == 0 {
				if a.json() {
					return writeJSON(a.stdout, unblockResult{Unblock: plan, SideEffects: effects})
				}
				fmt.Fprint(a.stdout, renderUnblock(plan, effects))
				return nil
			}
			var rep *broker.MoveReport
			switch {
			case dryRun:
				req.DryRun = true
			case !yes:
				fmt.Fprint(a.stderr, renderUnblock(plan, effects))
				if req, err = confirm(cmd.Context(), a, c, req); err != nil {
					return previewHint(err)
				}
			}
			rep, err = c.Move(cmd.Context(), req, progressPrinter(a))
			if err != nil && !errors.Is(err, broker.ErrPartial) && rep != nil && rep.Moved == 0 && !rep.DuplicatesPossible {
				return previewHint(err)
			}
			if a.json() {
				if jerr := writeJSON(a.stdout, unblockResult{Unblock: plan, SideEffects: effects, Move: rep}); jerr != nil {
					return jerr
				}
			} else {
				if dryRun || yes {
					fmt.Fprint(a.stdout, renderUnblock(plan, effects))
				}
				fmt.Fprint(a.stdout, renderMove(rep, queue))
			}
			if errors.Is(err, broker.ErrPartial) {
				return &exitErr{code: exitPartial, err: err}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&look, "look", usecase.DefaultUnblockLook, "read at most this many messages of the queue")
	f.BoolVar(&dryRun, "dry-run", false, "say what would move where; publish and acknowledge nothing")
	f.BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	f.BoolVar(&forcePeek, "force-peek", false, "read although each read costs something: a delivery toward a quorum queue's delivery limit, or releasing the overdue messages of a queue whose messages carry their own TTLs")
	f.IntVar(&maxMoves, "max-moves", usecase.DefaultMaxMoves, maxMovesUsage)
	f.BoolVar(&force, "force", false, "move picked messages past --max-moves")
	return cmd
}

// renderUnblock says which messages hold others back and the delay each
// keeps, after what reading the queue did (the peek's side effects, as
// ladder peek shows them).
func renderUnblock(u moveplan.UnblockPlan, effects []string) string {
	var b strings.Builder
	b.WriteString(clean(present.Unblock(u)) + "\n")
	for _, e := range effects {
		b.WriteString("! " + clean(e) + "\n")
	}
	if len(u.Picks) > 0 {
		rows := [][]string{{"POS", "MESSAGE ID", "DUE", "REMAINING"}}
		for _, p := range u.Picks {
			rows = append(rows, []string{fmt.Sprint(p.Position), clean(p.MessageID), present.Clock(p.DueAt), retry.FormatDelay(p.Remaining)})
		}
		b.WriteString(table(rows))
	}
	for _, n := range u.Notes {
		fmt.Fprintf(&b, "note: %s\n", clean(n))
	}
	return b.String()
}
