package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// choose are the flags that choose and pace what moves (move and replay).
type choose struct {
	where    []string
	rate     string
	maxMoves int
	force    bool
}

func (c *choose) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&c.where, "where", nil, "choose messages: reason=…, queue=Q, origin=X[:KEY], error~RE, header:N=V, header:N~RE, body~RE, age>DUR, age<DUR, retries>=N (repeatable, all must hold)")
	f.StringVar(&c.rate, "rate", "", "publish at most N messages a second (e.g. 50/s)")
	f.IntVar(&c.maxMoves, "max-moves", usecase.DefaultMaxMoves, maxMovesUsage)
	f.BoolVar(&c.force, "force", false, "move messages past --max-moves, and into a target its length limit would make drop")
}

// maxMovesUsage is the loop guard's flag, as move, replay and unblock take it.
const maxMovesUsage = "leave a message ladder already moved this many times in place (a loop guard; 0: none)"

// parse checks the flags, read as the UI's move dialog reads its fields
// (moveplan's parsers); a bad one is a usage error naming it.
func (c *choose) parse() (moveplan.Where, float64, error) {
	w, err := moveplan.ParseWhere(c.where)
	if err != nil {
		return w, 0, usageErr("%w", err)
	}
	if err := moveplan.CheckMaxMoves(c.maxMoves); err != nil {
		return w, 0, usageErr("%w", err)
	}
	rate, err := moveplan.ParseRate(c.rate)
	if err != nil {
		return w, 0, usageErr("%w", err)
	}
	return w, rate, nil
}

// replayQuestion is the confirmation a replay asks, from its dry run; a
// dump of another vhost says so first.
func replayQuestion(req usecase.ReplayRequest, plan *broker.MoveReport, dumpVhost, vhost string) string {
	q := strings.Replace(moveQuestion(replayMove(req), plan, true), "Move ", "Replay ", 1)
	if dumpVhost != vhost {
		q = fmt.Sprintf("! %s is a dump of vhost %s; this replays it into vhost %s\n", clean(req.File), clean(dumpVhost), clean(vhost)) + q
	}
	return q
}

// replayMove is a replay as the move it runs through: what confirms it.
func replayMove(req usecase.ReplayRequest) broker.MoveRequest {
	return broker.MoveRequest{From: req.File, To: req.To, Delay: req.Delay, ResetRetries: req.ResetRetries, Where: req.Where, Rate: req.Rate,
		Limit: req.Limit, MaxMoves: req.MaxMoves, Force: req.Force}
}

func newReplayCmd(a *app) *cobra.Command {
	var (
		req   usecase.ReplayRequest
		to    string
		delay delayFlag
		ch    choose
		yes   bool
	)
	cmd := &cobra.Command{
		Use:   "replay FILE --to TARGET",
		Short: "Publish messages saved by dump again, loss-free, through the move planner",
		Long: `Publish the messages of a dump file again. Each one is routed as ladder move
routes it (the same planner, confirms, mandatory publishes, returns watched);
headers go back with the types they were dumped with.

TARGET is as for move (queue:NAME, exchange:NAME[:KEY], origin) or original: the
exchange and routing key each message was dumped with.

Progress is kept beside the file (FILE.progress). An interrupted replay (Ctrl+C,
kill -9, a lost connection) restarted with --resume publishes each line once,
except those in flight when it stopped, which are published again and reported
as possible duplicates. A replayed file is refused without --resume. While a
replay runs it locks FILE.progress: a second replay of the file is refused,
naming the first (pid, host, start).

Every line is checked before anything is published: a malformed line, or one the
broker would refuse (a body over its maximum message size, properties and
headers over one frame, a property over 255 bytes), is reported with its number
and why and skipped; the others are published. --strict refuses the whole file
instead (nothing is published). Exit 3 when some lines were not published.`,
		Example: "  ladder replay orders.dlq.jsonl --to origin --delay 30s --rate 50/s\n  ladder replay orders.dlq.jsonl --to original --where reason=rejected --dry-run",
		Args:    exactlyOne("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.File = args[0]
			if to == "" {
				return usageErr("--to is required: queue:NAME, exchange:NAME[:KEY], origin or original")
			}
			t, err := moveplan.ParseTarget(to)
			if err != nil {
				return usageErr("%w", err)
			}
			req.Delay = time.Duration(delay)
			if req.Limit < 0 {
				return usageErr("--limit %d: want 0 (all) or more", req.Limit)
			}
			w, rate, err := ch.parse()
			if err != nil {
				return err
			}
			req.To, req.Where, req.Rate, req.MaxMoves, req.Force = t, w, rate, ch.maxMoves, ch.force
			c, closeClient, err := a.clientToRun("replay", "replay "+req.File, req.DryRun, yes)
			if err != nil {
				return err
			}
			defer closeClient()
			if !req.DryRun && !yes {
				bound, err := usecase.ConfirmThenBind(cmd.Context(), replayMove(req), usecase.Confirmation{
					What: "replay " + req.File, File: true,
					DryRun: func(ctx context.Context, dry broker.MoveRequest) (*broker.MoveReport, error) {
						r := req
						r.DryRun, r.Limit = true, dry.Limit
						return usecase.Replay(ctx, c, r, nil)
					},
					Ask: func(plan *broker.MoveReport) error {
						if plan.Skipped > 0 || len(plan.Planned) <= 20 {
							fmt.Fprint(a.stderr, renderMove(plan, req.File))
						}
						head, err := dumpfile.ReadHeader(req.File)
						if err != nil {
							return err
						}
						return ask(a, replayQuestion(req, plan, head.Vhost, c.Vhost()))
					},
				})
				if err != nil {
					return err
				}
				req.Expect, req.Limit = bound.Expect, bound.Limit // the replay runs the plan that was confirmed
			}
			rep, err := usecase.Replay(cmd.Context(), c, req, progressPrinter(a))
			if err != nil && !errors.Is(err, broker.ErrPartial) && rep.Moved == 0 && !rep.DuplicatesPossible {
				return err
			}
			if a.json() {
				if jerr := writeJSON(a.stdout, rep); jerr != nil {
					return jerr
				}
			} else {
				fmt.Fprint(a.stdout, strings.Replace(renderMove(rep, req.File), "moved ", "replayed ", 1))
			}
			if errors.Is(err, broker.ErrPartial) {
				return &exitErr{code: exitPartial, err: err}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "target: queue:NAME, exchange:NAME[:ROUTING_KEY], origin or original")
	f.Var(&delay, "delay", "wait this long before each message reaches the target")
	f.IntVarP(&req.Limit, "limit", "n", 0, "replay at most N messages (0: all)")
	f.BoolVar(&req.DryRun, "dry-run", false, "say what would go where; publish nothing")
	f.BoolVar(&req.Resume, "resume", false, "continue an interrupted replay (see FILE.progress)")
	f.BoolVar(&req.Strict, "strict", false, "refuse a file with a malformed line instead of skipping it")
	f.BoolVar(&req.ResetRetries, "reset-retries", false, "set each message's retry count to zero, in its own convention")
	f.BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	ch.register(cmd)
	_ = cmd.RegisterFlagCompletionFunc("to", cobra.FixedCompletions([]string{"origin", "original", "queue:", "exchange:"}, cobra.ShellCompDirectiveNoSpace|cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
