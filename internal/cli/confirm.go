package cli

import (
	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
)

// clientToRun is the client of a move, replay or unblock (purpose), once
// mayRun lets it run.
func (a *app) clientToRun(purpose, what string, dryRun, yes bool) (broker.Client, func(), error) {
	if err := a.mayRun(what, dryRun, yes); err != nil {
		return nil, nil, err
	}
	return a.client(purpose)
}

// mayRun refuses, before connecting, a run of move, replay or unblock that
// read-only mode forbids (usecase.RefuseReadOnly, the TUI's refusal) or that
// no one could confirm; what names it ("move from Q").
func (a *app) mayRun(what string, dryRun, yes bool) error {
	if err := usecase.RefuseReadOnly(a.cfg.ReadOnly && !dryRun, what); err != nil {
		return err
	}
	if !dryRun && !yes && !isTerminal(a.stdin) {
		return usageErr("%s: not a terminal, so no one can confirm: pass --yes (or try --dry-run first)", what)
	}
	return nil
}
