package cli

import (
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui"
)

// uiFlags are the terminal UI's own flags (the root command and demo).
type uiFlags struct {
	refresh   time.Duration
	peekLimit int
}

func (u *uiFlags) register(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&u.refresh, "refresh", 0, "how often the UI refreshes depths and rates (default: adapts to the vhost, 2s up to 500 queues, then less often so an idle UI costs the broker about what its management UI's Queues page does)")
	cmd.Flags().IntVar(&u.peekLimit, "peek-limit", 1000, "messages the queue browser peeks when it opens a queue")
}

// runUI starts the terminal UI on a client: the same code for the live
// broker and the demo simulation.
func (a *app) runUI(cmd *cobra.Command, c broker.Client, open func(string) (broker.Client, error), u uiFlags, title string, policy *retry.Policy) error {
	return a.runUIWith(cmd, c, u, title, policy, func(o *ui.Options) { o.Open = open })
}

// runUIWith is runUI with the switchers set by with.
func (a *app) runUIWith(cmd *cobra.Command, c broker.Client, u uiFlags, title string, policy *retry.Policy, with func(*ui.Options)) error {
	if cmd.Flags().Changed("refresh") && u.refresh < 200*time.Millisecond {
		return usageErr("--refresh %v: want 200ms or more", u.refresh)
	}
	if u.peekLimit < 1 {
		return usageErr("--peek-limit %d: want 1 or more", u.peekLimit)
	}
	if !isTerminal(a.stdin) || !isTerminal(a.stdout) {
		return usageErr("the terminal UI needs a terminal; for scripts use ladder topology / peek / move with -o json")
	}
	if err := ui.CheckTerminal(os.Getenv("TERM")); err != nil {
		return usageErr("%w", err)
	}
	opts := ui.Options{
		Client: c, ReadOnly: a.cfg.ReadOnly, Who: gate.Local(a.context, a.cfg.ReadOnly), NoColor: a.noColor,
		Refresh: u.refresh, LogFile: a.logFile, Title: title, Policy: policy, PeekLimit: u.peekLimit,
		APITimeout: a.cfg.APITimeout,
	}
	with(&opts)
	return ui.Run(cmd.Context(), opts)
}

// runLiveUI is `ladder` with no command.
func (a *app) runLiveUI(cmd *cobra.Command, u uiFlags) error {
	c, closeClient, err := a.client("ui")
	if err != nil {
		return err
	}
	defer closeClient()
	// Clients opened by the vhost switcher (from the UI's commands, on
	// their own goroutines) are closed when the UI ends.
	var (
		mu     sync.Mutex
		opened []func()
	)
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range opened {
			f()
		}
	}()
	keep := func(closeClient func()) {
		mu.Lock()
		opened = append(opened, closeClient)
		mu.Unlock()
	}
	open := func(vhost string) (broker.Client, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		cfg := a.cfg
		cfg.Vhost = vhost
		c, closeClient, err := a.clientFor(cfg, "ui")
		if err != nil {
			return nil, err
		}
		keep(closeClient)
		return c, nil
	}
	// The context switcher: the chosen context's client, or, when it
	// cannot be opened, everything as it was.
	var openContext func(string) (broker.Client, error)
	contextNames := a.contextList()
	if len(contextNames) > 0 {
		openContext = func(name string) (broker.Client, error) {
			a.mu.Lock()
			defer a.mu.Unlock()
			was := a.saveContext()
			if err := a.switchContext(name); err != nil {
				a.restoreContext(was)
				return nil, err
			}
			c, closeClient, err := a.clientFor(a.cfg, "ui")
			if err != nil {
				a.restoreContext(was)
				return nil, err
			}
			keep(closeClient)
			return c, nil
		}
	}
	return a.runUIWith(cmd, c, u, a.context, nil, func(o *ui.Options) {
		o.Open, o.Contexts, o.Context, o.OpenContext = open, contextNames, a.context, openContext
	})
}
