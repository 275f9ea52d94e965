package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// recorder is a client that records what reaches it, and the order of the
// gate's hooks around it.
type recorder struct {
	broker.Client
	readOnly bool
	log      *[]string
}

func (r *recorder) Vhost() string  { return "/" }
func (r *recorder) ReadOnly() bool { return r.readOnly }
func (r *recorder) Move(_ context.Context, req broker.MoveRequest, _ func(broker.MoveProgress)) (*broker.MoveReport, error) {
	*r.log = append(*r.log, "move")
	return &broker.MoveReport{Moved: 1, MovedIDs: []string{"m1"}}, nil
}
func (r *recorder) Publish(context.Context, []broker.Outgoing) ([]broker.Outcome, error) {
	*r.log = append(*r.log, "publish")
	return []broker.Outcome{{Confirmed: true}}, nil
}
func (r *recorder) Drain(context.Context, string, int, func(*broker.Message) (bool, error)) (int, error) {
	*r.log = append(*r.log, "drain")
	return 0, nil
}
func (r *recorder) Failover(context.Context) (broker.Client, string, error) {
	return &recorder{log: r.log}, "node2:5672", nil
}

func lines(t *testing.T, buf *bytes.Buffer) []broker.AuditEvent {
	t.Helper()
	var out []broker.AuditEvent
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var ev broker.AuditEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		out = append(out, ev)
	}
	return out
}

// An SSH session's action names its user, key, key comment and role on
// both lines, and the hooks run in one order: authorize, start line, busy,
// the action, changed, done line.
func TestGateNamesThePrincipalAndRunsTheHooksInOrder(t *testing.T) {
	var buf bytes.Buffer
	var log []string
	g := New(&recorder{log: &log}, Options{
		Principal: SSH("alice", "SHA256:abc", "alice@laptop", RoleOperator, "prod"),
		Broker:    "amqp://u:pw@h/", Log: NewLog(&buf),
		Busy: func() func() {
			log = append(log, "busy", "lines "+string(rune('0'+len(lines(t, &buf)))))
			return func() { log = append(log, "idle") }
		},
		Changed: func() { log = append(log, "changed") },
	})
	if _, err := g.Move(context.Background(), broker.MoveRequest{From: "dlq", To: moveplan.Target{Kind: moveplan.TargetOrigin}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(log, ","); got != "busy,lines 1,move,changed,idle" {
		t.Errorf("hooks ran %s", got)
	}
	evs := lines(t, &buf)
	if len(evs) != 2 {
		t.Fatalf("%d lines", len(evs))
	}
	for _, ev := range evs {
		if ev.SSHUser != "alice" || ev.SSHKey != "SHA256:abc" || ev.SSHKeyComment != "alice@laptop" || ev.Role != "operator" || ev.Context != "prod" || ev.Vhost != "/" {
			t.Errorf("%+v", ev)
		}
		if strings.Contains(ev.Broker, "pw") {
			t.Errorf("password in the log: %s", ev.Broker)
		}
	}
	if evs[1].Phase != "done" || len(evs[1].Messages) != 1 || evs[1].Messages[0] != "m1" {
		t.Errorf("done %+v", evs[1])
	}
}

// A read-only key's action is refused before anything is written or
// reaches the broker, and the refusal says who may not do what; a dry run
// passes (it changes nothing).
func TestGateRefusesARoleThatMayNot(t *testing.T) {
	var buf bytes.Buffer
	var log []string
	g := New(&recorder{log: &log}, Options{Principal: SSH("bob", "SHA256:b", "", RoleReadOnly, ""), Log: NewLog(&buf)})
	_, err := g.Move(context.Background(), broker.MoveRequest{From: "dlq"}, nil)
	var refused *Refused
	if !errors.As(err, &refused) || !errors.Is(err, broker.ErrReadOnly) || !strings.Contains(err.Error(), "read-only: this key may not move") {
		t.Fatalf("err %v", err)
	}
	if err := g.Audit(broker.AuditEvent{Phase: "start", Action: string(Replay)}); !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("a replay's start: %v", err)
	}
	if _, err := g.Publish(context.Background(), nil); !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("publish: %v", err)
	}
	if len(log) != 0 || buf.Len() != 0 {
		t.Fatalf("reached %v, wrote %q", log, buf.String())
	}
	if _, err := g.Move(context.Background(), broker.MoveRequest{From: "dlq", DryRun: true}, nil); err != nil || len(log) != 1 {
		t.Fatalf("dry run: %v %v", err, log)
	}
	if !g.ReadOnly() {
		t.Error("a read-only key's gate says it may change the broker")
	}
	// A read-only context refuses an operator too, and says it is the context.
	g = New(&recorder{log: &log, readOnly: true}, Options{Principal: SSH("alice", "", "", RoleOperator, "prod")})
	if _, err := g.Move(context.Background(), broker.MoveRequest{From: "dlq"}, nil); err == nil || !strings.Contains(err.Error(), "this context may not move") {
		t.Fatalf("read-only context: %v", err)
	}
}

// Publish and Drain pass only inside an action opened with an audit line:
// a path that reaches them without one is refused (ErrUnaudited), even for
// an operator, so no face can act unwritten. The client of a failover
// belongs to the same open action.
func TestGatePassesPrimitivesOnlyInsideAnAuditedAction(t *testing.T) {
	var buf bytes.Buffer
	var log []string
	g := New(&recorder{log: &log}, Options{Principal: Local("", false), Log: NewLog(&buf)})
	ctx := context.Background()
	if _, err := g.Publish(ctx, nil); !errors.Is(err, broker.ErrUnaudited) {
		t.Fatalf("publish outside an action: %v", err)
	}
	if _, err := g.Drain(ctx, "q", 0, nil); !errors.Is(err, broker.ErrUnaudited) {
		t.Fatalf("drain outside an action: %v", err)
	}
	if len(log) != 0 {
		t.Fatalf("reached the broker: %v", log)
	}
	if err := g.Audit(broker.AuditEvent{Phase: "start", Action: string(Replay), From: "q"}); err != nil {
		t.Fatal(err)
	}
	fo, addr, err := g.Failover(ctx)
	if err != nil || addr != "node2:5672" {
		t.Fatal(err)
	}
	if _, err := g.Publish(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fo.Publish(ctx, nil); err != nil {
		t.Fatalf("the failover's publish in the open action: %v", err)
	}
	if err := g.Audit(broker.AuditEvent{Phase: "done", Action: string(Replay), From: "q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fo.Publish(ctx, nil); !errors.Is(err, broker.ErrUnaudited) {
		t.Fatalf("publish after the action closed: %v", err)
	}
	if strings.Join(log, ",") != "publish,publish" || len(lines(t, &buf)) != 2 {
		t.Fatalf("%v %q", log, buf.String())
	}
}

// File writes: a read-only key writes none unless the server allows it; a
// local run's --read-only does not stop a dump to a file (it changes no
// broker).
func TestPrincipalMayWriteFiles(t *testing.T) {
	ro := SSH("bob", "", "", RoleReadOnly, "")
	if err := ro.May(WriteFile); err == nil || !strings.Contains(err.Error(), "--read-only-dumps") {
		t.Errorf("read-only key: %v", err)
	}
	ro.FileWrites = true
	if err := ro.May(WriteFile); err != nil {
		t.Errorf("read-only key allowed dumps: %v", err)
	}
	if err := Local("", true).May(WriteFile); err != nil {
		t.Errorf("local --read-only: %v", err)
	}
	if err := Local("", true).May(Move); err == nil || !strings.Contains(err.Error(), "this run may not move") {
		t.Errorf("local --read-only move: %v", err)
	}
}

// A dry run changes nothing: it is neither audited nor marks the session
// busy nor makes the shared snapshot read again.
func TestGateLetsDryRunsThroughUntouched(t *testing.T) {
	var buf bytes.Buffer
	var log []string
	g := New(&recorder{log: &log}, Options{Principal: Local("", false), Log: NewLog(&buf),
		Busy:    func() func() { log = append(log, "busy"); return func() {} },
		Changed: func() { log = append(log, "changed") }})
	if _, err := g.Move(context.Background(), broker.MoveRequest{From: "dlq", DryRun: true}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(log, ",") != "move" || buf.Len() != 0 {
		t.Fatalf("hooks %v, log %q", log, buf.String())
	}
}
