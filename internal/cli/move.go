package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

func newMoveCmd(a *app) *cobra.Command {
	var (
		req   broker.MoveRequest
		to    string
		yes   bool
		delay delayFlag
		ch    choose
	)
	cmd := &cobra.Command{
		Use:   "move --from QUEUE --to TARGET",
		Short: "Move or re-publish messages loss-free, optionally with a delay",
		Long: `Move messages from a queue to a target, without losing any: the target channel
confirms every publish (mandatory, returns watched) before the source message is
acknowledged. A message that is nacked, returned or unconfirmed stays in the
source. Each moved message keeps its id, properties and headers (with their
types) and gains x-ladder-moved-from (the source queue) and x-ladder-move-id.

TARGET is one of:
  queue:NAME                      publish to a queue (default exchange)
  exchange:NAME[:ROUTING_KEY]     publish to an exchange (each message keeps its
                                  own routing key when none is given)
  origin                          back to the queue each message failed in, and
                                  only that queue: the work queue its x-death
                                  names (past any wait tier), or for Spring's
                                  republished dead letters the group queue that
                                  dead-letters into the source, or the queue a
                                  framework records (one that names an exchange:
                                  the one queue it routes to; several are named
                                  and the message stays: choose with
                                  --to queue:NAME), else, nothing recorded, Q
                                  for a source named Q.failure, Q_error, Q.dlq…
                                  (inferred from the name, and said so). Through the
                                  recorded exchange and key when they reach that
                                  queue alone, else straight to the queue, the
                                  recorded route kept in the headers
                                  x-ladder-original-exchange and
                                  x-ladder-original-routing-key; a message
                                  nothing tells of stays, with why

--delay makes each message wait first: in a ladder tier whose TTL is exactly
DUR and whose dead letters reach the same queues, else a delayed-message
exchange routing to them, else a per-delay wait queue ladder declares
(ladder.delay.<ms>.<exchange>.<key>, TTL = DUR, dead-lettering to the target,
deleting itself a day after its last message was due: a broker down or a
target gone for less than that loses nothing). On RabbitMQ 3.10+ that wait queue is
a quorum queue that dead-letters at least once: a broker crash during the wait
loses nothing (a message may arrive twice). A tier, a delayed exchange or an
older broker dead-letters at most once: the plan says so and asks.

A move never overflows a length-limited queue it reaches (x-max-length,
x-max-length-bytes, argument or policy, read again while it runs): it stops
before the message that would push the oldest out of a drop-head queue (or be
refused with a copy dead-lettered by a reject-publish-dlx one), and the rest
stay in the source; --force moves them anyway. A reject-publish queue refuses
what does not fit: those stay in the source.

Asks for confirmation on a terminal; --yes skips it, and without a terminal
--yes is required. The question shows the plan of a dry run, which reads the
source as ladder peek does: where that counts a delivery toward a quorum
queue's delivery limit (RabbitMQ before 4.3), the dry run is first asked for
on a terminal (the question ladder peek asks) and otherwise refused unless
--force-peek; --read-only refuses it. Exit 3 when some messages stayed in the source.
If the broker closes the connection mid-move nothing is lost, but a message
may then be both in the target and in the source (duplicates_possible).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if req.From == "" {
				return usageErr("--from is required: the source queue")
			}
			t, err := moveplan.ParseTarget(to)
			if err != nil {
				return usageErr("%w", err)
			}
			if req.Limit < 0 {
				return usageErr("--limit %d: want 0 (all) or more", req.Limit)
			}
			req.To, req.Delay = t, time.Duration(delay)
			w, rate, err := ch.parse()
			if err != nil {
				return err
			}
			req.Where, req.Rate, req.MaxMoves, req.Force = w, rate, ch.maxMoves, ch.force
			c, closeClient, err := a.clientToRun("move", "move from "+req.From, req.DryRun, yes)
			if err != nil {
				return err
			}
			defer closeClient()
			if !req.DryRun && !yes {
				// The question is the plan: the same planner the move runs,
				// so what is confirmed is what happens.
				if req, err = confirm(cmd.Context(), a, c, req); err != nil {
					return previewHint(err)
				}
			}
			rep, err := c.Move(cmd.Context(), req, progressPrinter(a))
			if req.DryRun {
				if retry, ok := previewConsent(a, err, req, ""); ok {
					req = retry
					rep, err = c.Move(cmd.Context(), req, progressPrinter(a))
				}
			}
			if err != nil && !errors.Is(err, broker.ErrPartial) && rep != nil && rep.Moved == 0 && !rep.DuplicatesPossible {
				// Nothing moved: the error alone, no report that reads as a result.
				return previewHint(err)
			}
			if a.json() {
				if jerr := writeJSON(a.stdout, rep); jerr != nil {
					return jerr
				}
			} else {
				fmt.Fprint(a.stdout, renderMove(rep, req.From))
			}
			if errors.Is(err, broker.ErrPartial) {
				return &exitErr{code: exitPartial, err: err}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.From, "from", "", "source queue")
	f.StringVar(&to, "to", "", "target: queue:NAME, exchange:NAME[:ROUTING_KEY] or origin")
	f.Var(&delay, "delay", "wait this long before the message reaches the target (e.g. 30s, 5m)")
	f.IntVarP(&req.Limit, "limit", "n", 0, "move at most N messages (0: every message ready now)")
	f.BoolVar(&req.DryRun, "dry-run", false, "say what would go where; publish and acknowledge nothing")
	f.BoolVar(&req.ResetRetries, "reset-retries", false, "set each message's retry count to zero, in its own convention")
	f.BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	f.BoolVar(&req.ForcePeek, "force-peek", false, "preview although the read costs something: a delivery toward a quorum queue's delivery limit, or releasing the overdue messages of a queue whose messages carry their own TTLs")
	ch.register(cmd)
	if fl := f.Lookup("force"); fl != nil {
		fl.Usage = "move messages past --max-moves, and into a full drop-head or reject-publish-dlx queue (dropping its oldest)"
	}
	_ = cmd.RegisterFlagCompletionFunc("to", cobra.FixedCompletions([]string{"origin", "queue:", "exchange:"}, cobra.ShellCompDirectiveNoSpace|cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// confirm dry-runs the move, shows the plan and asks; it returns the
// request to run: bound to the plan that was confirmed.
func confirm(ctx context.Context, a *app, c broker.Client, req broker.MoveRequest) (broker.MoveRequest, error) {
	return usecase.ConfirmThenBind(ctx, req, usecase.Confirmation{
		What: "move from " + req.From,
		DryRun: func(ctx context.Context, dry broker.MoveRequest) (*broker.MoveReport, error) {
			return c.Move(ctx, dry, nil)
		},
		Consent: func(err error, dry broker.MoveRequest) bool {
			_, ok := previewConsent(a, err, dry, "")
			return ok
		},
		Ask: func(plan *broker.MoveReport) error {
			if plan.Skipped > 0 || len(plan.Planned) <= 20 {
				fmt.Fprint(a.stderr, renderMove(plan, req.From))
			}
			return ask(a, moveQuestion(req, plan, false))
		},
	})
}

// progressPrinter shows progress on a terminal's stderr, at most 10 times a
// second, with a resource alarm's wait on the same line. On any other
// stderr it prints only the wait: one line when the broker starts blocking
// publishes and one when it stops.
func progressPrinter(a *app) func(broker.MoveProgress) {
	blocked := ""
	if !isTerminal(a.stderr) {
		return func(p broker.MoveProgress) {
			if p.Blocked == blocked {
				return
			}
			was := blocked
			blocked = p.Blocked
			switch {
			case blocked != "":
				fmt.Fprintf(a.stderr, "ladder: %s\n", present.PublishBlocked(clean(blocked)))
			case was != "":
				fmt.Fprintf(a.stderr, "ladder: %s\n", present.PublishUnblocked)
			}
		}
	}
	var last time.Time
	ended := false // the last line was written, with its newline
	return func(p broker.MoveProgress) {
		changed := p.Blocked != blocked
		blocked = p.Blocked
		if ended && !changed {
			return
		}
		if !changed && time.Since(last) < 100*time.Millisecond && p.Done < p.Total {
			return
		}
		last = time.Now()
		line := present.Progress(p.Done, p.Total, p.Moved, p.Failed, p.Elapsed)
		if p.Blocked != "" {
			line += " · " + present.PublishBlocked(clean(p.Blocked))
		}
		// One updating line: \x1b[K clears what a longer line left.
		fmt.Fprintf(a.stderr, "\r%s\x1b[K", line)
		if p.Done >= p.Total {
			fmt.Fprintln(a.stderr)
			ended = true
		}
	}
}

// previewConsent asks, on a terminal, for a move's preview (its dry run)
// the broker refused because reading the source would count a delivery
// toward a delivery limit: the question ladder peek asks, after what reads
// the queue (extra: more on the cost, or ""). Yes gives the request to run
// again with ForcePeek. Nothing was touched.
func previewConsent(a *app, err error, req broker.MoveRequest, extra string) (broker.MoveRequest, bool) {
	var refused *broker.PeekRefused
	if !errors.As(err, &refused) || !errors.Is(err, broker.ErrPeekNeedsConsent) || a.json() || !isTerminal(a.stdin) || !isTerminal(a.stderr) {
		return req, false
	}
	what := "The move's preview reads the queue first: "
	if extra != "" {
		what = extra + ": "
	}
	if ask(a, what+present.PeekQuestion(clean(refused.Queue), max(1, refused.Limit), refused.Ready, refused.Cost)+" [y/N] ") != nil {
		return req, false
	}
	req.ForcePeek = true
	return req, true
}

// previewHint adds to a preview refused for the delivery its read would
// count the flag that previews anyway.
func previewHint(err error) error {
	if errors.Is(err, broker.ErrPeekNeedsConsent) {
		return fmt.Errorf("%w; --force-peek previews anyway", err)
	}
	return err
}
