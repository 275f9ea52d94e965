package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry"
)

func newPeekCmd(a *app) *cobra.Command {
	var (
		opt     broker.PeekOptions
		where   []string
		groupBy string
	)
	cmd := &cobra.Command{
		Use:   "peek QUEUE",
		Short: "Browse the first messages of a queue without removing them",
		Long: `Browse the first messages of a queue, decoded: retry count and its convention,
x-death history, origin, last error, head-of-line status.

Nothing is removed. What a peek costs depends on the queue and the broker,
and the result lists it (side_effects):
  - quorum queues on RabbitMQ 4.3+ are browsed over AMQP 1.0 and released:
    no delivery is counted (x-delivery-count and the delivery limit are
    untouched), the order stays; x-acquired-count rises, later consumers see
    the messages redelivered;
  - classic queues are consumed without acknowledging, then the channel is
    closed: the messages return in order with redelivered set;
  - quorum queues before 4.3 (or when AMQP 1.0 is refused) count a delivery
    per peek: refused in --read-only mode; where that counts toward a
    delivery limit (its own, or 4.0's default of 20), ladder cannot see how
    near the messages are without spending one, so the peek is asked for on
    a terminal and otherwise refused unless --force, and whatever a forced
    peek dead-letters is reported;
  - streams are read by offset, with no side effect.
Allowed in --read-only mode where it changes no count.`,
		Args: exactlyOne("QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.Limit < 1 {
				return usageErr("--limit %d: want 1 or more", opt.Limit)
			}
			w, err := retry.ParseWhere(where)
			if err != nil {
				return usageErr("%w", err)
			}
			if groupBy != "" {
				if groupBy, err = broker.ParseGroupBy(groupBy); err != nil {
					return usageErr("%w", err)
				}
			}
			if !w.Empty() && opt.BodyPreview < 1<<20 {
				opt.BodyPreview = 1 << 20 // body~RE reads the body, not a preview of it
			}
			c, closeClient, err := a.client("peek")
			if err != nil {
				return err
			}
			defer closeClient()
			res, err := c.Peek(cmd.Context(), args[0], opt)
			if opt, ok := peekConsent(a, err, opt); ok {
				res, err = c.Peek(cmd.Context(), args[0], opt)
			}
			if err != nil {
				return peekHint(err, "--force")
			}
			res.Messages = broker.Choose(res.Messages, w, res.PeekedAt)
			if groupBy != "" {
				res.Groups = broker.GroupMessages(res.Messages, groupBy)
			}
			if a.json() {
				err = writeJSON(a.stdout, res)
			} else {
				_, err = io.WriteString(a.stdout, renderPeek(res))
			}
			if err == nil && res.Incomplete != "" {
				// What was read is shown; the rest could not be.
				return &exitErr{code: exitPartial, err: fmt.Errorf("peek %s: %s", res.Queue, res.Incomplete)}
			}
			return err
		},
	}
	cmd.Flags().IntVarP(&opt.Limit, "limit", "n", 20, "messages to browse")
	cmd.Flags().BoolVar(&opt.Force, "force", false, "peek a quorum queue although each peek counts a delivery toward its delivery limit")
	cmd.Flags().IntVar(&opt.BodyPreview, "body-bytes", broker.DefaultBodyPreview, "bytes of each body to keep in the preview")
	cmd.Flags().StringArrayVar(&where, "where", nil, "show only the messages chosen (repeatable; see ladder move --help)")
	cmd.Flags().StringVar(&groupBy, "group-by", "", "group the messages by error, reason, queue or origin")
	_ = cmd.RegisterFlagCompletionFunc("group-by", cobra.FixedCompletions([]string{"error", "reason", "queue", "origin"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// peekConsent asks, on a terminal, for a peek the broker refused because it
// would count a delivery toward a delivery limit (the question the terminal
// UI asks); yes gives the options to peek again with. Nothing was touched.
func peekConsent(a *app, err error, opt broker.PeekOptions) (broker.PeekOptions, bool) {
	var refused *broker.PeekRefused
	if !errors.As(err, &refused) || !errors.Is(err, broker.ErrPeekCostsDelivery) || a.json() || !isTerminal(a.stdin) || !isTerminal(a.stderr) {
		return opt, false
	}
	limit := opt.Limit
	if limit <= 0 {
		limit = broker.DefaultPeekLimit
	}
	if ask(a, present.PeekQuestion(clean(refused.Queue), limit, refused.Ready, refused.Cost)+" [y/N] ") != nil {
		return opt, false
	}
	opt.Force = true
	return opt, true
}

// peekHint adds to a peek refused for the delivery it would count the
// flag that peeks anyway (flag: the command's own).
func peekHint(err error, flag string) error {
	if errors.Is(err, broker.ErrPeekCostsDelivery) {
		return fmt.Errorf("%w; %s peeks anyway", err, flag)
	}
	return err
}
