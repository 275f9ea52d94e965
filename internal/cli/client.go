package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/gate"
)

// connector builds the broker client a command works with, for cfg, and the
// func that closes it. The real one is liveConnector; command tests put the
// simulation here, so commands run without a broker.
type connector func(cfg rabbit.Config, purpose string) (broker.Client, func(), error)

// liveConnector is the real broker: its AMQP connection is named
// "ladder <purpose>". Of several addresses the first that answers is used,
// and stderr says which (see reach).
func (a *app) liveConnector(cfg rabbit.Config, purpose string) (broker.Client, func(), error) {
	r, err := cfg.Resolve()
	if err != nil {
		return nil, nil, usageErr("%w", err)
	}
	if r, err = a.reach(r); err != nil {
		return nil, nil, err
	}
	l, err := rabbit.NewLive(r, purpose)
	if err != nil {
		return nil, nil, err
	}
	l.RememberWith(a.evidenceFor(r))
	return l, func() { l.Close() }, nil
}

// reach picks the first of several addresses that answers and says on
// stderr which one, and why the ones before it were passed over; one
// address is used as it is.
func (a *app) reach(r *rabbit.Resolved) (*rabbit.Resolved, error) {
	if len(r.Addresses) <= 1 {
		return r, nil
	}
	ctx := a.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	chosen, passed, err := rabbit.Reach(ctx, r)
	if err != nil {
		return nil, err
	}
	note := "using " + chosen.Address()
	if len(passed) > 0 {
		note += " (passed over " + strings.Join(passed, "; ") + ")"
	}
	fmt.Fprintf(a.stderr, "ladder: %s\n", clean(note))
	return chosen, nil
}

// client is the one factory every command and the UI use: the connector's
// client behind the gate, whose audit log is --audit-log's (or the
// context's), when one is asked for.
func (a *app) client(purpose string) (broker.Client, func(), error) {
	return a.clientFor(a.cfg, purpose)
}

// clientFor is client for another configuration (the UI's vhost switcher).
func (a *app) clientFor(cfg rabbit.Config, purpose string) (broker.Client, func(), error) {
	return a.clientAs(cfg, purpose, func(cfg rabbit.Config) gate.Principal { return gate.Local(a.context, cfg.ReadOnly) })
}

// clientAs is clientFor acting as another principal (an MCP client of
// ladder mcp), given the configuration credentials filled in.
func (a *app) clientAs(cfg rabbit.Config, purpose string, who func(rabbit.Config) gate.Principal) (broker.Client, func(), error) {
	f, err := a.openAudit()
	if err != nil {
		return nil, nil, err
	}
	if cfg, err = a.credentials(cfg); err != nil {
		return nil, nil, err
	}
	c, closeClient, err := a.connect(cfg, purpose)
	if err != nil {
		return nil, nil, a.envNamed(err)
	}
	return gate.New(c, gate.Options{Principal: who(cfg), Broker: cfg.AMQPURL, Log: f}), closeClient, nil
}

// auditFile is an audit log (--audit-log, or a context's), opened once per
// run and shared by every client that writes there.
type auditFile struct {
	once sync.Once
	f    *os.File
	log  *gate.Log
	err  error
}

// openAudit opens the audit log in use for appending on first use (nil
// when none is asked for).
func (a *app) openAudit() (*gate.Log, error) {
	path := a.auditLog
	if path == "" {
		return nil, nil
	}
	if a.audit == nil {
		a.audit = map[string]*auditFile{}
	}
	af := a.audit[path]
	if af == nil {
		af = &auditFile{}
		a.audit[path] = af
	}
	af.once.Do(func() {
		af.f, af.err = os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if af.err != nil {
			af.err = fmt.Errorf("--audit-log %s: %w", path, af.err)
			return
		}
		af.log = gate.NewLog(af.f)
	})
	return af.log, af.err
}

func (a *app) closeAudit() {
	for _, af := range a.audit {
		if af.f != nil {
			af.f.Close()
		}
	}
}
