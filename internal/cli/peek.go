package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry"
)

// readingPrinter shows a browse's progress on a terminal's stderr, once it
// has taken a moment (a quick peek prints nothing), at most ten times a
// second, and clears the line when the read ends. On any other stderr it
// prints nothing.
func readingPrinter(a *app) func(broker.PeekProgress) {
	if !isTerminal(a.stderr) {
		return nil
	}
	shown := false
	return func(p broker.PeekProgress) {
		switch {
		case p.Done && shown:
			fmt.Fprint(a.stderr, "\r\x1b[K")
		case !p.Done && p.Elapsed >= readingShownAfter:
			shown = true
			// One updating line: \x1b[K clears what a longer line left.
			fmt.Fprintf(a.stderr, "\r%s\x1b[K", present.ReadingLine(p))
		}
	}
}

// readingShownAfter: a read quicker than this shows no progress.
const readingShownAfter = 300 * time.Millisecond

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

Nothing is removed, but classic and quorum queues have no true peek: ladder
consumes without acknowledging and closes its channel, so the messages return
in order with redelivered set, and quorum queues count a delivery. The result
lists these side effects. A quorum queue whose messages are within 2 of their
delivery limit is refused unless --force. Streams are read by offset, with no
side effect. Allowed in --read-only mode.

A peek reads at most -n messages, and no more than the queue had ready when it
began: what arrives while it reads is not read (a wait queue whose messages keep
coming back cannot hold it). It stops after --max-time; one that stops before
it has read what it was to read says why ("incomplete") and exits 3. On a
terminal it shows its progress on standard error.`,
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
			if opt.Deadline <= 0 {
				return usageErr("--max-time %s: want more than 0", opt.Deadline)
			}
			c, closeClient, err := a.client("peek")
			if err != nil {
				return err
			}
			defer closeClient()
			opt.Progress = readingPrinter(a)
			res, err := c.Peek(cmd.Context(), args[0], opt)
			if err != nil {
				return err
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
	cmd.Flags().DurationVar(&opt.Deadline, "max-time", broker.DefaultPeekDeadline, "stop reading after this long (what was read is shown, marked incomplete)")
	cmd.Flags().BoolVar(&opt.Force, "force", false, "peek a quorum queue even when messages are near their delivery limit")
	cmd.Flags().IntVar(&opt.BodyPreview, "body-bytes", broker.DefaultBodyPreview, "bytes of each body to keep in the preview")
	cmd.Flags().StringArrayVar(&where, "where", nil, "show only the messages chosen (repeatable; see ladder move --help)")
	cmd.Flags().StringVar(&groupBy, "group-by", "", "group the messages by error, reason, queue or origin")
	_ = cmd.RegisterFlagCompletionFunc("group-by", cobra.FixedCompletions([]string{"error", "reason", "queue", "origin"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
