package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
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

--group-by groups the whole queue (up to 100000 messages; -n N: the first N)
by what broke it, and says how much it covered ("grouped N of M"): error (the
error's type and its message with ids, numbers and quoted values masked, so
one cause is one group), error-text (the exact text), reason, queue or origin.

Nothing is removed, but classic and quorum queues have no true peek: ladder
consumes without acknowledging and closes its channel, so the messages return
in order with redelivered set, and quorum queues count a delivery. The result
lists these side effects. A quorum queue whose messages are within 2 of their
delivery limit is refused unless --force. Streams are read by offset, with no
side effect. Allowed in --read-only mode.`,
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
			var res *broker.PeekResult
			var partial error
			if groupBy != "" {
				res, partial, err = groupPeek(cmd, c, args[0], groupBy, w, opt)
			} else if res, err = c.Peek(cmd.Context(), args[0], opt); err == nil {
				res.Messages = broker.Choose(res.Messages, w, res.PeekedAt)
			}
			if err != nil {
				return err
			}
			if a.json() {
				err = writeJSON(a.stdout, res)
			} else {
				_, err = io.WriteString(a.stdout, renderPeek(res, termWidth(a.stdout)))
			}
			if err == nil && partial != nil {
				return &exitErr{code: exitPartial, err: partial}
			}
			if err == nil && res.Incomplete != "" {
				// What was read is shown; the rest could not be.
				return &exitErr{code: exitPartial, err: fmt.Errorf("peek %s: %s", res.Queue, res.Incomplete)}
			}
			return err
		},
	}
	cmd.Flags().IntVarP(&opt.Limit, "limit", "n", 20, "messages to browse (with --group-by: to group; all when not given)")
	cmd.Flags().BoolVar(&opt.Force, "force", false, "peek a quorum queue even when messages are near their delivery limit")
	cmd.Flags().IntVar(&opt.BodyPreview, "body-bytes", broker.DefaultBodyPreview, "bytes of each body to keep in the preview")
	cmd.Flags().StringArrayVar(&where, "where", nil, "show only the messages chosen (repeatable; see ladder move --help)")
	cmd.Flags().StringVar(&groupBy, "group-by", "", "group the queue's messages by error, error-text, reason, queue or origin")
	_ = cmd.RegisterFlagCompletionFunc("group-by", cobra.FixedCompletions(broker.GroupBys, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// groupPeek is peek --group-by: the whole queue grouped (a browse, as dump
// does), or its first -n when given; the result lists the first -n (20)
// messages as a peek does. partial is set when some messages could not be
// read (they are counted, and what was read is grouped).
func groupPeek(cmd *cobra.Command, c broker.Client, queue, by string, w retry.Where, opt broker.PeekOptions) (res *broker.PeekResult, partial, err error) {
	o := broker.GroupScanOptions{Queue: queue, By: by, Where: w, Force: opt.Force, Keep: opt.Limit, BodyPreview: opt.BodyPreview}
	if cmd.Flags().Changed("limit") {
		o.Limit = opt.Limit
	}
	scan, err := broker.ScanGroups(cmd.Context(), c, o)
	if scan == nil {
		return nil, nil, err
	}
	if err != nil {
		partial = fmt.Errorf("peek %s --group-by %s: %w", queue, by, err)
	}
	return scan.PeekResult(), partial, nil
}
