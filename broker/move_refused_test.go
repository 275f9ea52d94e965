package broker_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
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
	r, err := broker.Config{AMQPURL: amqpURL.String(), APIURL: apiURL.String(), Vhost: f.r.Vhost}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	l, err := broker.NewLive(r, "test refused")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: broker.Target{Kind: broker.TargetQueue, Name: dst}}, nil)
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
