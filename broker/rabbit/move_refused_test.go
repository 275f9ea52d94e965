package rabbit_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// A user who may read but not write: the broker refuses the move's first
// publish (ACCESS_REFUSED) and closes the channel. That message was never
// published, so the move does not claim duplicates are possible, and
// nothing leaves the source.
func TestMoveRefusedOnItsFirstPublishClaimsNoDuplicates(t *testing.T) {
	f := newVhostFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publishN(src, 3, "m")
	user := brokertest.Name(t, "reader")
	const pass = "ladder-test-pass"
	body, _ := json.Marshal(map[string]string{"password": pass, "tags": "management"})
	if err := brokertest.API(f.r, http.MethodPut, "users/"+url.PathEscape(user), body); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = brokertest.API(f.r, http.MethodDelete, "users/"+url.PathEscape(user), nil) })
	perm, _ := json.Marshal(map[string]string{"configure": "^$", "write": "^$", "read": ".*"})
	if err := brokertest.API(f.r, http.MethodPut, "permissions/"+url.PathEscape(f.r.Vhost)+"/"+url.PathEscape(user), perm); err != nil {
		t.Fatal(err)
	}
	amqpURL, _ := url.Parse(f.r.AMQP.String())
	amqpURL.User = url.UserPassword(user, pass)
	apiURL := *f.r.APIURL
	apiURL.User = url.UserPassword(user, pass)
	r, err := rabbit.Config{AMQPURL: amqpURL.String(), APIURL: apiURL.String(), Vhost: f.r.Vhost}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	l, err := rabbit.NewLive(r, "test refused")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}, nil)
	if err == nil || !strings.Contains(err.Error(), "ACCESS_REFUSED") {
		t.Fatalf("move: %v", err)
	}
	if rep.Moved != 0 || rep.DuplicatesPossible || rep.DuplicatesAtMost != 0 || strings.Contains(strings.Join(rep.Notes, " "), "may also have reached") {
		t.Errorf("report %+v", rep)
	}
	if f.depth(src) != 3 || f.depth(dst) != 0 {
		t.Errorf("src %d, dst %d", f.depth(src), f.depth(dst))
	}
}

// A publish the broker refused and closed the channel over is counted
// (failed, with the broker's reason in the notes): the report adds up
// (requested = moved + failed + returned + skipped) and the progress
// reaches its total. One message: it is published before the refusal can
// close the channel, so it is the one refused.
func TestMoveRefusedPublishIsCountedFailed(t *testing.T) {
	f := newVhostFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publishN(src, 1, "m")
	user := brokertest.User(t, f.r, "management", brokertest.Perms{Configure: ".*", Write: "^$", Read: ".*"})
	l, err := rabbit.NewLive(user, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var last broker.MoveProgress
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}, func(p broker.MoveProgress) { last = p })
	if !errors.Is(err, broker.ErrAccessRefused) {
		t.Fatalf("move: %v", err)
	}
	if rep.Requested != 1 || rep.Failed != 1 || rep.Moved+rep.Failed+rep.Returned+rep.Skipped != rep.Requested || rep.DuplicatesAtMost != 0 {
		t.Errorf("requested %d = moved %d + failed %d + returned %d + skipped %d? (duplicates at most %d)", rep.Requested, rep.Moved, rep.Failed, rep.Returned, rep.Skipped, rep.DuplicatesAtMost)
	}
	if last.Total != 1 || last.Done != 1 || last.Failed != 1 {
		t.Errorf("last progress %+v, want 1 of 1 done, failed", last)
	}
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "not published") || !strings.Contains(notes, "ACCESS_REFUSED - ") {
		t.Errorf("notes do not say why: %q", notes)
	}
	f.waitDepth(src, 1)
	if d := f.depth(dst); d != 0 {
		t.Errorf("%d messages reached the target", d)
	}
}
