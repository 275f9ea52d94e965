package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/secret"
)

func newTopologyCmd(a *app) *cobra.Command {
	var (
		over      time.Duration
		sample    int
		noSample  bool
		allVhosts bool
	)
	cmd := &cobra.Command{
		Use:   "topology",
		Short: "Show the vhost's retry ladders, depths, rates and findings",
		Long: `Discover every retry ladder of the vhost (main queue, TTL wait tiers, delayed
exchanges, DLQ) from queue arguments, policies and bindings, with depths, rates
and findings such as unroutable dead-letter routes or head-of-line risks.

One read cannot see what changes: with --over DUR topology reads the vhost
twice, DUR apart, and reports the second read with what the two show — the
inflow of queues fed by dead-lettering (from their depth: the broker does not
count dead-lettered messages as published) and a dlq-growing finding for each
dead-letter queue that grew. The broker updates depths every 5 s, so DUR of
10s or more sees a change.

Some error queues are tied to their queues only by what their messages say
(Watermill's poison queue, Moleculer's FAILED_MESSAGES: shared, fed by
publishing, named by configuration), and some wait queues to theirs the same
way (amqplib-retry's one shared wait queue and its ready queue, whose router
sends each message back to the queue a header names). With --sample N
topology first peeks up to N messages of each queue no ladder explains, or
whose role discovery inferred (a wait queue without a TTL, the main it
makes one), and nothing consumes (50 queues at most, deepest first), then
reports with what they showed; a wait queue whose read would release
overdue messages is skipped, saying why. A peek on RabbitMQ before 4.3
marks what it read redelivered: the SAMPLED section lists each peek's side
effects. Where a browse costs nothing (a stream; a quorum queue on 4.3+,
browsed over AMQP 1.0), topology samples such queues unasked (up to 20
messages of 10 queues that hold messages no earlier peek told of) and says
so; --no-sample reads no message at all.

What a peek, dump or sample showed (which queue an error queue's messages
failed in, their expirations) is remembered a day, per broker and vhost, in
the user's cache: the next topology knows it. --fresh forgets it.

With --all-vhosts topology reads every vhost the user can see at once (one
listing of all queues, exchanges and bindings, whatever their number) and
lists each: its ladders, what its DLQs hold (and, with --over, how much
they grew) and its worst finding, the vhost on fire first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if over < 0 || over > 0 && over < time.Second {
				return usageErr("--over %v: want 1s or more (10s or more sees the broker's depths change)", over)
			}
			if sample < 0 || sample > maxSample {
				return usageErr("--sample %d: want 1 to %d messages a queue", sample, maxSample)
			}
			if sample > 0 && noSample {
				return usageErr("--sample and --no-sample: choose one")
			}
			if allVhosts {
				if sample > 0 {
					return usageErr("--sample reads one vhost's queues: not with --all-vhosts")
				}
				return a.allVhosts(cmd, over)
			}
			c, closeClient, err := a.client("topology")
			if err != nil {
				return err
			}
			defer closeClient()
			ctx := cmd.Context()
			snap, err := c.Snapshot(ctx)
			if err != nil {
				return err
			}
			var sampled *usecase.SampleReport
			switch {
			case sample > 0:
				sampled, err = usecase.Sample(ctx, c, snap, sample)
			case !noSample:
				// Free on this broker: read unasked, and said.
				sampled, err = usecase.SampleFree(ctx, c, snap)
				if err != nil && ctx.Err() == nil {
					// Unasked, a failed read costs the report nothing.
					fmt.Fprintf(a.stderr, "ladder: %s (an unasked sample: --no-sample reads none)\n", clean(secret.RedactText(err.Error(), secretsOf(a)...)))
					err = nil
				}
			}
			if err != nil {
				return err
			}
			if sampled != nil {
				// The client remembers what the peeks showed: this read
				// weighs it.
				if snap, err = c.Snapshot(ctx); err != nil {
					return err
				}
			}
			if snap, err = readAgainAfter(ctx, c, over, snap); err != nil {
				return err
			}
			rep := present.Topology(snap)
			if over > 0 {
				rep.OverMS = over.Milliseconds()
			}
			rep.Sampled = sampled
			if a.json() {
				return writeJSON(a.stdout, rep)
			}
			_, err = io.WriteString(a.stdout, renderTopology(rep))
			return err
		},
	}
	cmd.Flags().DurationVar(&over, "over", 0, "read twice, this long apart: inflow from depth changes and dlq-growing findings (e.g. 10s)")
	cmd.Flags().BoolVar(&allVhosts, "all-vhosts", false, "every vhost at once, the one on fire first: ladders, DLQ depth (growth with --over), worst finding")
	cmd.Flags().IntVar(&sample, "sample", 0, "first peek up to N messages of each queue no ladder explains or whose role was inferred, to link error and wait queues only their messages tie to a queue")
	cmd.Flags().BoolVar(&noSample, "no-sample", false, "read no message, not even of the queues whose browse is free on this broker (streams, quorum queues on 4.3+), which topology samples unasked")
	return cmd
}

// maxSample bounds --sample: enough to see every endpoint of a shared
// error queue, without reading it whole.
const maxSample = 1000

// readAgainAfter reads the vhost again once over has passed (topology and
// check --over): the client remembers the first read, so the second is
// analysed with both (broker/analysis), as the TUI's are. over 0 keeps
// snap.
func readAgainAfter(ctx context.Context, c interface {
	Snapshot(context.Context) (*broker.Snapshot, error)
}, over time.Duration, snap *broker.Snapshot) (*broker.Snapshot, error) {
	if over <= 0 {
		return snap, nil
	}
	t := time.NewTimer(over)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	return c.Snapshot(ctx)
}
