package movedialog

import (
	"context"
	"errors"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// fakeMover is the dialog's own fake: the roles of Mover and no more. Its
// source queue holds ready, by message id; Move plans them (a dry run) or
// moves them (reporting progress after each), recording every request.
// The replay roles say they are not faked.
type fakeMover struct {
	mu       sync.Mutex
	ready    []string
	readOnly bool
	reqs     []broker.MoveRequest
}

var _ Mover = (*fakeMover)(nil)

func (f *fakeMover) Move(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	ids := f.ready
	f.mu.Unlock()
	if req.Limit > 0 && req.Limit < len(ids) {
		ids = ids[:req.Limit]
	}
	rep := broker.NewMoveReport(req)
	rep.Requested = len(ids)
	for i, id := range ids {
		p := moveplan.Route{Position: i, MessageID: id, RoutingKey: req.To.Name, Via: topology.ViaDirect}
		if req.DryRun {
			rep.Planned = append(rep.Planned, p)
			rep.Count(p)
			continue
		}
		rep.Moved++
		rep.Count(p)
		if progress != nil {
			progress(broker.MoveProgress{Total: len(ids), Done: i + 1, Moved: rep.Moved})
		}
	}
	return rep, nil
}

func (f *fakeMover) requests() []broker.MoveRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]broker.MoveRequest(nil), f.reqs...)
}

func (f *fakeMover) ReadOnly() bool { return f.readOnly }

var errNoReplay = errors.New("fake: no replay")

func (f *fakeMover) Topology(context.Context) (topology.Vhost, error) {
	return topology.Vhost{}, errNoReplay
}
func (f *fakeMover) BrokerVersion(context.Context) (string, error) { return "", errNoReplay }
func (f *fakeMover) Vhost() string                                 { return "/" }
func (f *fakeMover) Publish(context.Context, []broker.Outgoing) ([]broker.Outcome, error) {
	return nil, errNoReplay
}
func (f *fakeMover) Audit(broker.AuditEvent) error { return errNoReplay }
func (f *fakeMover) PublishLimits(context.Context) (broker.PublishLimits, error) {
	return broker.PublishLimits{}, errNoReplay
}
func (f *fakeMover) Failover(context.Context) (broker.Client, string, error) {
	return nil, "", broker.ErrNoFailover
}

// drive runs cmd as a program would, in order, handing each message to
// the dialog and running what it returns in turn.
func drive(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			drive(m, c)
		}
	default:
		drive(m, m.Update(msg))
	}
}
