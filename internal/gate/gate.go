package gate

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/secret"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// Options are a gate's hooks. Each runs once per action, in this order:
// authorize (Principal), audit start (Log), Busy, the action, Changed,
// audit done.
type Options struct {
	Principal Principal
	// Broker is the broker's URL, written redacted on every line ("demo"
	// for the simulation).
	Broker string
	// Log is where actions are written; nil writes nothing (a local run
	// without --audit-log).
	Log *Log
	// Busy, when set, marks an action running until the func it returns
	// is called (a session's idle timeout waits for it).
	Busy func() (done func())
	// Changed, when set, is told after an action that may have changed
	// the broker (the shared snapshot reads fresh next).
	Changed func()
}

// Gate is a client whose every action on messages passes one guard: the
// only wrapper that knows which calls act (Move, Publish, Drain and the
// actions a use case opens with Audit). Reads pass through.
type Gate struct {
	broker.Client
	o Options
	// open counts the audited actions running through this gate and the
	// clients its failovers opened: Publish and Drain pass only inside one.
	open *atomic.Int32
}

// New puts c behind the gate.
func New(c broker.Client, o Options) *Gate {
	o.Broker = secret.RedactURL(o.Broker)
	return &Gate{Client: c, o: o, open: new(atomic.Int32)}
}

// Principal is who acts through g.
func (g *Gate) Principal() Principal {
	p := g.o.Principal
	p.ReadOnly = p.ReadOnly || g.Client.ReadOnly()
	return p
}

// ReadOnly reports whether g refuses every change: its principal's role or
// context, or the client's own read-only.
func (g *Gate) ReadOnly() bool { return g.Principal().ChangesNothing() }

// Move moves (dry runs pass: they change nothing).
func (g *Gate) Move(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	if req.DryRun {
		return g.Client.Move(ctx, req, progress)
	}
	ev := broker.AuditEvent{
		Phase: "start", Action: string(Move),
		From: req.From, Target: req.To.String(), DelayMS: req.Delay.Milliseconds(), Limit: req.Limit,
		Reset: req.ResetRetries, Selected: len(req.Positions), ConfirmedRoutes: moveplan.CountRoutes(req.Expect),
		Rate: req.Rate, Where: req.Where.Exprs(),
	}
	if req.Pick != nil {
		ev.Action = string(Unblock)
		ev.DelaysMS = make([]int64, len(req.Pick))
		for i, p := range req.Pick {
			ev.DelaysMS[i] = p.Delay.Milliseconds()
		}
	}
	if err := g.Audit(ev); err != nil {
		return broker.NewMoveReport(req), fmt.Errorf("move from %s: %w", req.From, err)
	}
	rep, err := g.run(func() (*broker.MoveReport, error) { return g.Client.Move(ctx, req, progress) })
	ev.Phase, ev.Report = "done", rep
	if rep != nil {
		ev.Messages = rep.MovedIDs
	}
	if err != nil {
		ev.Error = err.Error()
	}
	if werr := g.Audit(ev); werr != nil && err == nil {
		err = werr
	}
	return rep, err
}

// run runs an action with the session marked busy, and tells Changed
// after it.
func run[T any](g *Gate, f func() (T, error)) (T, error) {
	if g.o.Busy != nil {
		defer g.o.Busy()()
	}
	if g.o.Changed != nil {
		defer g.o.Changed()
	}
	return f()
}

func (g *Gate) run(f func() (*broker.MoveReport, error)) (*broker.MoveReport, error) {
	return run(g, f)
}

// Publish publishes a batch of an audited action (a replay); outside one
// it is refused: nothing reaches the broker unwritten.
func (g *Gate) Publish(ctx context.Context, batch []broker.Outgoing) ([]broker.Outcome, error) {
	if err := g.inside(Publish); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	return run(g, func() ([]broker.Outcome, error) { return g.Client.Publish(ctx, batch) })
}

// Drain drains for an audited action (dump --consume); outside one it is
// refused.
func (g *Gate) Drain(ctx context.Context, queue string, limit int, handle func(*broker.Message) (bool, error)) (int, error) {
	if err := g.inside(Drain); err != nil {
		return 0, fmt.Errorf("drain %s: %w", queue, err)
	}
	return run(g, func() (int, error) { return g.Client.Drain(ctx, queue, limit, handle) })
}

// inside lets a primitive through only within an open audited action, and
// only for a principal who may act.
func (g *Gate) inside(a Action) error {
	if err := g.Principal().May(a); err != nil {
		return err
	}
	if g.open.Load() <= 0 {
		return broker.ErrUnaudited
	}
	return nil
}

// Audit is the audit hook a use case opens and closes its action with
// (broker.Auditor): a start line is written only for a principal who may
// do ev.Action, and opens the action (its Publish and Drain pass); the
// done line closes it. Who, where and when are filled in here.
func (g *Gate) Audit(ev broker.AuditEvent) error {
	p := g.Principal()
	if ev.Phase == "start" {
		if err := p.May(Action(ev.Action)); err != nil {
			return err
		}
	}
	ev.User, ev.Host, ev.Broker, ev.Vhost, ev.Context = p.User, p.Host, g.o.Broker, g.Client.Vhost(), p.Context
	ev.SSHUser, ev.SSHKey, ev.SSHKeyComment = p.SSHUser, p.SSHKey, p.KeyComment
	ev.MCPClient = p.MCPClient
	if p.SSHUser != "" || p.Role == RoleMCP {
		ev.Role = string(p.Role)
	}
	if ev.Error != "" {
		ev.Error = secret.RedactText(ev.Error)
	}
	if ev.Phase == "done" {
		g.open.Add(-1) // closed, written or not
	}
	if g.o.Log != nil {
		if err := g.o.Log.write(ev); err != nil {
			// No trail, no action.
			return err
		}
	}
	if ev.Phase == "start" {
		g.open.Add(1)
	}
	return nil
}

// Failover is the client of the next node (a replay going on through it),
// behind this same gate: its primitives belong to the actions open here.
func (g *Gate) Failover(ctx context.Context) (broker.Client, string, error) {
	c, addr, err := g.Client.Failover(ctx)
	if err != nil {
		return nil, "", err
	}
	return &Gate{Client: c, o: g.o, open: g.open}, addr, nil
}
