package broker

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestRedactTextKeepsUserName(t *testing.T) {
	// The password is the user name: the URL keeps its user, the bare word
	// elsewhere is left too (it is the user, shown anyway).
	got := redactErr(errors.New(`dial amqp://guest:guest@h:5672/ as guest`), "amqp://guest:guest@h:5672/").Error()
	if got != "dial amqp://guest:xxxxx@h:5672/ as guest" {
		t.Errorf("same user and password: %q", got)
	}
	got = RedactText("amqp://bob:hunter2@h/ said hunter2", "hunter2", "bob")
	if got != "amqp://bob:xxxxx@h/ said xxxxx" {
		t.Errorf("%q", got)
	}
}

func testResolved(t *testing.T, amqpURL, apiURL string) *Resolved {
	t.Helper()
	r, err := Config{AMQPURL: amqpURL, APIURL: apiURL}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDialErrorsClassified: amqp091's errors become one line each, with a
// sentinel for errors.Is and no "Exception (…) Reason:" text.
func TestDialErrorsClassified(t *testing.T) {
	r := testResolved(t, "amqp://guest:s3cret-pw@rabbit:5672/prod", "")
	for _, c := range []struct {
		in   error
		kind error
		want string
	}{
		{&amqp.Error{Code: amqp.AccessRefused, Reason: "username or password not allowed", Server: true}, ErrLoginRefused,
			"login refused for user guest at rabbit:5672"},
		{amqp.ErrCredentials, ErrLoginRefused, "login refused for user guest at rabbit:5672"},
		{&amqp.Error{Code: amqp.NotAllowed, Reason: "NOT_ALLOWED - vhost prod not found", Server: true}, ErrVhostNotFound,
			"vhost prod not found"},
		{&amqp.Error{Code: amqp.NotAllowed, Reason: "NOT_ALLOWED - access to vhost 'prod' refused for user 'guest'", Server: true}, ErrNoAccess,
			"user guest has no access to vhost prod at rabbit:5672"},
		{&amqp.Error{Code: amqp.FrameError, Reason: "EOF"}, ErrNotAMQP, "rabbit:5672 does not speak AMQP"},
		{&amqp.Error{Code: amqp.ConnectionForced, Reason: "CONNECTION_FORCED - shutdown", Server: true}, nil,
			"RabbitMQ at rabbit:5672 closed the connection: CONNECTION_FORCED - shutdown"},
	} {
		err := r.amqpDialError(c.in)
		if err.Error() != c.want {
			t.Errorf("%v: %q, want %q", c.in, err, c.want)
		}
		if c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("%v: not %v", c.in, c.kind)
		}
		if !errors.Is(err, c.in) {
			t.Errorf("%v: the cause left the chain", c.in)
		}
		if strings.Contains(err.Error(), "Exception") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q", err)
		}
	}
	mgmt := testResolved(t, "amqp://guest:guest@rabbit:15672/", "")
	if got := mgmt.amqpDialError(&amqp.Error{Code: amqp.FrameError, Reason: "EOF"}).Error(); got != "rabbit:15672 does not speak AMQP (is it the management port?)" {
		t.Errorf("%q", got)
	}
}

func TestAPIErrorsClassified(t *testing.T) {
	r := testResolved(t, "amqp://guest:s3cret-pw@rabbit:5672/", "")
	for _, c := range []struct {
		in   error
		kind error
		want string
	}{
		{errors.New("Error: API responded with a 401 Unauthorized"), ErrLoginRefused, "login refused for user guest at http://rabbit:15672"},
		{rabbithole.ErrorResponse{StatusCode: 401}, ErrLoginRefused, "login refused for user guest at http://rabbit:15672"},
		{rabbithole.ErrorResponse{StatusCode: 500, Reason: `{"error":"internal","reason":"boom"}`}, nil,
			"overview: management API at http://rabbit:15672: 500 Internal Server Error: boom"},
	} {
		err := r.APIError("overview", c.in)
		if err.Error() != c.want {
			t.Errorf("%v: %q, want %q", c.in, err, c.want)
		}
		if c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("%v: not %v", c.in, c.kind)
		}
	}
}

func TestDescribe(t *testing.T) {
	ce := &ConnError{Msg: "login refused for user guest at h:5672", Kind: ErrLoginRefused}
	if got := Describe(fmt.Errorf("peek: queue %q: %w", "q", ce)); got != ce.Msg {
		t.Errorf("%q", got)
	}
	partial := fmt.Errorf("move from q: 3 of 5 moved: %w: %w", ce, ErrPartial)
	if got := Describe(partial); got != partial.Error() {
		t.Errorf("a partial run lost its count: %q", got)
	}
	if !WaitsForUser(ce) || WaitsForUser(fmt.Errorf("x: %w", ErrUnreachable)) {
		t.Error("WaitsForUser")
	}
}
