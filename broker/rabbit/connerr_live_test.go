package rabbit_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/secret"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// viaProxy is r with its AMQP URL through a fault proxy of the test's own.
func viaProxy(t *testing.T, r *rabbit.Resolved) (*rabbit.Resolved, *brokertest.Proxy) {
	t.Helper()
	p := brokertest.NewProxy(t, net.JoinHostPort(r.AMQP.Hostname(), r.Port()))
	u := *r.AMQP
	u.Host = p.Addr()
	pr, err := rabbit.Config{AMQPURL: u.String(), APIURL: r.APIURL.String(), Vhost: r.Vhost}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return pr, p
}

// A peek whose connection ends under it says how — closed, reset or
// silent — and where; it is never "a message the AMQP client could not
// read" (every socket error was reported so), and nothing is lost.
func TestPeekLostConnectionSaysHow(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newFixture(t)
	q := f.queue("q", nil)
	var msgs []amqp.Publishing
	for range 2000 {
		msgs = append(msgs, amqp.Publishing{MessageId: "m", Body: []byte(strings.Repeat("x", 1000))})
	}
	f.publish("", q, msgs...)
	for _, c := range []struct {
		name  string
		fault func(*brokertest.Proxy)
		kind  error
		want  string
	}{
		{"closed", (*brokertest.Proxy).Close, broker.ErrConnLost, "lost: closed by the other side (node stopped or killed?)"},
		{"reset", (*brokertest.Proxy).Reset, broker.ErrConnLost, "lost: reset by the other side"},
		{"stalled", (*brokertest.Proxy).Stall, broker.ErrStalled, "stopped answering (no heartbeat): connection dropped"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr, p := viaProxy(t, f.r)
			l, err := rabbit.NewLive(pr, "test")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			// Mid-stream: after about a sixth of the deliveries.
			p.After(300<<10, func() { c.fault(p) })
			res, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: 2000})
			got := broker.Describe(err)
			if err == nil {
				t.Fatalf("no error; %d messages, incomplete %q", len(res.Messages), res.Incomplete)
			}
			if !errors.Is(err, c.kind) || !strings.Contains(got, c.want) || !strings.Contains(got, p.Addr()) {
				t.Errorf("%q (kind %v), want %q naming %s", got, c.kind, c.want, p.Addr())
			}
			if strings.Contains(got, "could not read") || strings.Contains(got, "nested") {
				t.Errorf("a lost connection read as an unreadable message: %q", got)
			}
			f.waitDepth(q, 2000)
		})
	}
}

// A handshake that gets no answer (a stalled node or path) is a stall,
// not "does not speak AMQP".
func TestHandshakeSilenceIsAStall(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	r := brokertest.Require(t)
	pr, p := viaProxy(t, r)
	p.Stall()
	_, err := pr.DialAMQP(context.Background(), "test")
	want := "RabbitMQ at " + p.Addr() + " accepted the connection but sent nothing in 10s (stalled, or not an AMQP port?)"
	if broker.Describe(err) != want || !errors.Is(err, broker.ErrStalled) {
		t.Errorf("%q, want %q", broker.Describe(err), want)
	}
}

// A move by a user who may not write to the target says so in the
// broker's words (ACCESS_REFUSED … for user …), never amqp091's "channel/
// connection is not open", and leaves every message in the source.
func TestMoveWithoutWritePermissionSaysAccessRefused(t *testing.T) {
	f := newVhostFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publishN(src, 5, "m")
	user := brokertest.User(t, f.r, "management", brokertest.Perms{Configure: ".*", Write: "^$", Read: ".*"})
	l, err := rabbit.NewLive(user, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}, nil)
	got := broker.Describe(err)
	// The line holds the broker's reason (cut to the terminal's line with
	// this test's long names); the error, all of it.
	var ae *amqp.Error
	if !errors.Is(err, broker.ErrAccessRefused) || !strings.Contains(got, " refused: ACCESS_REFUSED - ") || !errors.As(err, &ae) ||
		!strings.Contains(ae.Reason, "access to exchange 'amq.default' in vhost '"+f.r.Vhost+"' refused for user '"+user.AMQPUser+"'") {
		t.Errorf("%q (%v)", got, ae)
	}
	if strings.Contains(got, "not open") {
		t.Errorf("amqp091's text instead of the cause: %q", got)
	}
	f.waitDepth(src, 5)
	if d := f.depth(dst); d != 0 {
		t.Errorf("%d messages reached the target", d)
	}
}

// A wait queue the user may not declare is refused in the broker's words;
// "(a queue of that name with other arguments exists?)" is said only when
// the refusal is PRECONDITION_FAILED.
func TestDeclareRefusedIsNotOtherArguments(t *testing.T) {
	f := newVhostFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publishN(src, 1, "m")
	user := brokertest.User(t, f.r, "management", brokertest.Perms{Configure: "^$", Write: ".*", Read: ".*"})
	l, err := rabbit.NewLive(user, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	req := broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Delay: 5 * time.Second, DryRun: true}
	dry, err := l.Move(context.Background(), req, nil)
	if err != nil || len(dry.Planned) != 1 {
		t.Fatalf("dry run: %v %+v", err, dry)
	}
	wait := dry.Planned[0].Queue
	req.DryRun = false
	rep, _ := l.Move(context.Background(), req, nil)
	if rep == nil || len(rep.Planned) != 1 {
		t.Fatalf("report %+v", rep)
	}
	skip := rep.Planned[0].Skip
	if !strings.Contains(skip, "refused: ACCESS_REFUSED - ") {
		t.Errorf("skip %q", skip)
	}
	if strings.Contains(skip, "other arguments") {
		t.Errorf("an access refusal guessed as other arguments: %q", skip)
	}
	f.waitDepth(src, 1)

	// A queue of the wait queue's name with other arguments: that is what
	// the hint is for.
	if !strings.HasPrefix(wait, "ladder.delay.") {
		t.Fatalf("wait queue %q", wait)
	}
	f.declareQueue(wait, amqp.Table{"x-max-length": int32(7)})
	rep, _ = f.live(false).Move(context.Background(), req, nil)
	if rep == nil || len(rep.Planned) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if skip := rep.Planned[0].Skip; !strings.Contains(skip, "a queue of that name exists with other arguments (PRECONDITION_FAILED - ") {
		t.Errorf("other arguments: skip %q", skip)
	}
	f.waitDepth(src, 1)
}

// The management API answers 401 to a wrong password and to a user
// without the management tag: ladder tells them apart.
func TestAPIUserWithoutManagementTag(t *testing.T) {
	r := brokertest.OwnVhost(t)
	user := brokertest.User(t, r, "", brokertest.Perms{Configure: ".*", Write: ".*", Read: ".*"})
	l, err := rabbit.NewLive(user, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = l.Snapshot(context.Background())
	want := "user " + user.APIUser + " may not use the management API at " + r.APIURL.String() + " (it needs the management or monitoring tag)"
	if broker.Describe(err) != want || !errors.Is(err, broker.ErrNoAccess) || errors.Is(err, broker.ErrLoginRefused) {
		t.Errorf("%q, want %q", broker.Describe(err), want)
	}
	wrong := *user
	apiUser, apiPass := brokertest.APILogin(t, user)
	wrong.APILogin = secret.Static{User: apiUser, Password: apiPass + "-wrong"}
	wl, err := rabbit.NewLive(&wrong, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer wl.Close()
	_, err = wl.Snapshot(context.Background())
	if want := "login refused for user " + user.APIUser + " at " + r.APIURL.String(); broker.Describe(err) != want || !errors.Is(err, broker.ErrLoginRefused) {
		t.Errorf("wrong password: %q, want %q", broker.Describe(err), want)
	}
}

// An API that accepts the request but answers after --api-timeout is slow,
// not unreachable.
func TestSlowAPIIsSlowNotUnreachable(t *testing.T) {
	r := brokertest.Require(t)
	slow := brokertest.NewDelayedAPI(t, r.APIURL)
	slow.SetDelay(3 * time.Second)
	u := *r.AMQP
	cr, err := rabbit.Config{AMQPURL: u.String(), APIURL: slow.URL, APITimeout: time.Second}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	l, err := rabbit.NewLive(cr, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = l.Snapshot(context.Background())
	host := strings.TrimPrefix(slow.URL, "http://")
	if want := "management API at " + host + " slow: no answer in 1s (--api-timeout)"; broker.Describe(err) != want || !errors.Is(err, broker.ErrStalled) || errors.Is(err, broker.ErrUnreachable) {
		t.Errorf("%q, want %q", broker.Describe(err), want)
	}
}

// AMQP on one broker and the management API on another: every client
// says which address answered what, and stops.
func TestTwoBrokersAreRefused(t *testing.T) {
	api := brokertest.Require(t)
	other := brokertest.RequireNoStats(t)
	u := *other.AMQP
	u.Path = "/"
	r, err := rabbit.Config{AMQPURL: u.String(), APIURL: api.APIURL.String()}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	l, err := rabbit.NewLive(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = l.Snapshot(context.Background())
	got := broker.Describe(err)
	if !errors.Is(err, broker.ErrTwoBrokers) || !broker.WaitsForUser(err) ||
		!strings.Contains(got, net.JoinHostPort(other.AMQP.Hostname(), other.Port())+" (AMQP) is cluster ") ||
		!strings.Contains(got, api.APIURL.Host+" (management API) is ") {
		t.Errorf("%q", got)
	}
}
