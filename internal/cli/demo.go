package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/internal/gate"
)

func newDemoCmd(a *app) *cobra.Command {
	var (
		u        uiFlags
		speed    float64
		real     bool
		duration time.Duration
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the UI against an embedded demo broker (no network), or real traffic with --real",
		Long: `Without --real: the terminal UI on an embedded, in-process broker simulation —
no RabbitMQ needed. It declares the Go seed's ladder (orders.topic →
orders.process, wait tiers orders.wait.5s/30s/5m, orders.dlq) plus ladders with
the seeds' mistakes (a per-message-TTL wait queue, an unroutable return, a stuck
queue), and runs a producer and a failing worker that retries through the retry
engine. --speed runs its clock faster. A move or replay made in it is written
to the audit log (--audit-log) as on a broker, naming the broker "demo".

With --real: declares the Go seed's ladder on the broker at --amqp-url and runs
a producer and a worker that fails a share of messages and retries them
through the engine's plan, until interrupted or --duration ends. Open another
terminal with ` + "`ladder`" + ` to watch it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if speed <= 0 {
				return usageErr("--speed %v: want more than 0", speed)
			}
			if real {
				return a.runRealDemo(cmd, duration)
			}
			s := sim.New(sim.Options{Speed: speed, ReadOnly: a.cfg.ReadOnly, WarmUp: 10 * time.Minute})
			defer s.Close()
			c, err := a.demoClient(s)
			if err != nil {
				return err
			}
			p := sim.GoSeedPolicy
			return a.runUI(cmd, c, nil, u, "demo", &p)
		},
	}
	u.register(cmd)
	cmd.Flags().Float64Var(&speed, "speed", 1, "simulated seconds per real second")
	cmd.Flags().BoolVar(&real, "real", false, "declare the Go seed's ladder on the broker and run real traffic")
	cmd.Flags().DurationVar(&duration, "duration", 0, "with --real: stop after this long (0: until interrupted)")
	return cmd
}

// demoClient is the simulation behind the gate, as a broker's client is:
// a move or replay tried in the demo is written to the audit log too
// (--audit-log, or the context's), naming the broker "demo".
func (a *app) demoClient(s *sim.Sim) (broker.Client, error) {
	log, err := a.openAudit()
	if err != nil {
		return nil, err
	}
	return gate.New(s, gate.Options{Principal: gate.Local(a.context, a.cfg.ReadOnly), Broker: "demo", Log: log}), nil
}

// runRealDemo drives real traffic through a real ladder.
func (a *app) runRealDemo(cmd *cobra.Command, d time.Duration) error {
	r, err := a.resolve()
	if err != nil {
		return err
	}
	if r.ReadOnly {
		return fmt.Errorf("demo --real declares queues and publishes: %w", broker.ErrReadOnly)
	}
	ctx := cmd.Context()
	if d > 0 {
		var cancel func()
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	var progress func(rabbit.DemoStats)
	shown := false
	if isTerminal(a.stderr) {
		progress = func(s rabbit.DemoStats) {
			shown = true
			fmt.Fprintf(a.stderr, "\rpublished %d · processed %d · retried %d · parked %d ", s.Published, s.Processed, s.Retried, s.Parked)
		}
	}
	// The banner once the ladder is declared: a failed dial or declare is
	// then the one line on stderr.
	ready := func() {
		fmt.Fprintf(a.stderr, "demo: Go seed ladder on %s vhost %s; Ctrl+C stops\n", r.RedactedAMQP(), r.Vhost)
	}
	st, err := rabbit.RunGoSeedDemo(ctx, r, rabbit.DemoOptions{Ready: ready}, progress)
	if shown {
		fmt.Fprintln(a.stderr) // end the progress line
	}
	if err != nil {
		// Nothing on stdout for a failed run, table or JSON.
		return err
	}
	if a.json() {
		return writeJSON(a.stdout, st)
	}
	fmt.Fprintf(a.stdout, "published %d · processed %d · retried %d · parked %d\n", st.Published, st.Processed, st.Retried, st.Parked)
	return nil
}
