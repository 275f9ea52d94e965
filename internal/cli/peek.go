package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
)

func newPeekCmd(a *app) *cobra.Command {
	var opt broker.PeekOptions
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
side effect. Allowed in --read-only mode.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.Limit < 1 {
				return usageErr("--limit %d: want 1 or more", opt.Limit)
			}
			c, closeClient, err := a.client("peek")
			if err != nil {
				return err
			}
			defer closeClient()
			res, err := c.Peek(cmd.Context(), args[0], opt)
			if err != nil {
				return err
			}
			if a.json() {
				return writeJSON(a.stdout, res)
			}
			_, err = io.WriteString(a.stdout, renderPeek(res))
			return err
		},
	}
	cmd.Flags().IntVarP(&opt.Limit, "limit", "n", 20, "messages to browse")
	cmd.Flags().BoolVar(&opt.Force, "force", false, "peek a quorum queue even when messages are near their delivery limit")
	cmd.Flags().IntVar(&opt.BodyPreview, "body-bytes", broker.DefaultBodyPreview, "bytes of each body to keep in the preview")
	return cmd
}
