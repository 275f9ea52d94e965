package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/retry"
)

func newScheduleCmd(a *app) *cobra.Command {
	var (
		backoff, jitter, ladder string
		p                       retry.Policy
		attempts                int
	)
	cmd := &cobra.Command{
		Use:   "schedule --backoff fixed|linear|exponential --base DUR",
		Short: "Print a backoff policy's retry schedule",
		Long: `Print each retry's delay and the band jitter can spread it over; with --ladder,
the tier of that ladder a retry would wait in (exact TTL, else the shortest
longer one). --ladder alone, on a RabbitMQ 4.3 quorum queue with built-in
delayed retry, previews that queue's own delays: min(min × delivery count, max).

The seeds' policies:
  Go seed      --backoff exponential --base 5s --factor 5          (5s, 25s, 125s)
  PHP seed     --backoff linear --base 60s, or exponential --base 60s --factor 2
  Python seed  --backoff exponential --base 1s --factor 2 --cap 5m --jitter proportional`,
		Example: "  ladder schedule --backoff exponential --base 5s --factor 5 --attempts 3 --ladder orders.process",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if ladder != "" && !cmd.Flags().Changed("backoff") && !cmd.Flags().Changed("base") {
				// The queue's own delays: 4.3's built-in delayed retry.
				l, err := a.findLadder(cmd, ladder)
				if err != nil {
					return err
				}
				if l.DelayedRetry == nil {
					return usageErr("--ladder %s has no built-in delayed retry: give --backoff and --base", ladder)
				}
				s, err := retry.Schedule(l.DelayedRetry.Policy(), attempts, l)
				if err != nil {
					return usageErr("%w", err)
				}
				if a.json() {
					return writeJSON(a.stdout, s)
				}
				_, err = io.WriteString(a.stdout, renderSchedule(s))
				return err
			}
			for _, f := range []string{"backoff", "base"} {
				if !cmd.Flags().Changed(f) {
					return usageErr("--%s is required (see ladder schedule --help)", f)
				}
			}
			if p.Backoff, err = retry.ParseBackoff(backoff); err != nil {
				return usageErr("--backoff: %w", err)
			}
			if p.Jitter, err = retry.ParseJitter(jitter); err != nil {
				return usageErr("--jitter: %w", err)
			}
			if attempts < 1 {
				return usageErr("--attempts %d: want 1 or more", attempts)
			}
			if err := p.Validate(); err != nil {
				return usageErr("%w", err)
			}
			var l *retry.Ladder
			if ladder != "" {
				if l, err = a.findLadder(cmd, ladder); err != nil {
					return err
				}
			}
			s, err := retry.Schedule(p, attempts, l)
			if err != nil {
				return usageErr("%w", err)
			}
			if a.json() {
				return writeJSON(a.stdout, s)
			}
			_, err = io.WriteString(a.stdout, renderSchedule(s))
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&backoff, "backoff", "", "fixed, linear (base × attempt) or exponential (base × factor^(attempt−1))")
	f.DurationVar(&p.Base, "base", 0, "base delay (e.g. 5s)")
	f.Float64Var(&p.Factor, "factor", 2, "exponential growth factor")
	f.IntVar(&attempts, "attempts", 5, "retries to show")
	f.DurationVar(&p.Cap, "cap", 0, "longest delay (0: none)")
	f.StringVar(&jitter, "jitter", "none", "none, full, equal, decorrelated or proportional (+0–10 %)")
	f.StringVar(&ladder, "ladder", "", "main queue of a ladder on the broker: show the tier each retry uses")
	_ = cmd.RegisterFlagCompletionFunc("backoff", cobra.FixedCompletions([]string{"fixed", "linear", "exponential"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("jitter", cobra.FixedCompletions([]string{"none", "full", "equal", "decorrelated", "proportional"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// findLadder reads the broker and returns the ladder queue belongs to.
func (a *app) findLadder(cmd *cobra.Command, queue string) (*retry.Ladder, error) {
	c, closeClient, err := a.client("schedule")
	if err != nil {
		return nil, err
	}
	defer closeClient()
	snap, err := c.Snapshot(cmd.Context())
	if err != nil {
		return nil, err
	}
	lad, ok := retry.LadderOf(snap.Ladders, queue)
	if !ok {
		return nil, &exitErr{code: exitError, err: fmt.Errorf("--ladder %q: no retry ladder in vhost %s has this queue (see ladder topology)", queue, snap.Vhost)}
	}
	return &lad, nil
}
