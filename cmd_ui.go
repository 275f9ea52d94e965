package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui"
)

// uiFlags are the terminal UI's own flags (the root command and demo).
type uiFlags struct {
	refresh time.Duration
	logFile string
}

func (u *uiFlags) register(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&u.refresh, "refresh", 2*time.Second, "how often the UI refreshes depths and rates")
	cmd.Flags().StringVar(&u.logFile, "log-file", "", "write debug logs to this file (never to the screen; also LADDER_DEBUG=1)")
}

// runUI starts the terminal UI on a client: the same code for the live
// broker and the demo simulation.
func (a *app) runUI(cmd *cobra.Command, c broker.Client, open func(string) (broker.Client, error), u uiFlags, title string, policy *retry.Policy) error {
	if u.refresh < 200*time.Millisecond {
		return usageErr("--refresh %v: want 200ms or more", u.refresh)
	}
	if !isTerminal(a.stdin) || !isTerminal(a.stdout) {
		return usageErr("the terminal UI needs a terminal; for scripts use ladder topology / peek / move with -o json")
	}
	return ui.Run(cmd.Context(), ui.Options{
		Client: c, Open: open, ReadOnly: a.cfg.ReadOnly, NoColor: a.noColor,
		Refresh: u.refresh, LogFile: u.logFile, Title: title, Policy: policy,
	})
}

// runLiveUI is `ladder` with no command.
func (a *app) runLiveUI(cmd *cobra.Command, u uiFlags) error {
	l, err := a.live("ui")
	if err != nil {
		return err
	}
	defer l.Close()
	wrap, closeLog, err := a.withAuditLog()
	if err != nil {
		return err
	}
	defer closeLog()
	open := func(vhost string) (broker.Client, error) {
		lv, err := l.WithVhost(vhost)
		if err != nil {
			return nil, err
		}
		return wrap(lv, lv.Resolved().AMQPURL), nil
	}
	c := wrap(l, l.Resolved().AMQPURL)
	return a.runUI(cmd, c, open, u, "", nil)
}
