package brokertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/secret"
)

// Perms are a user's permissions on a vhost: regular expressions over the
// names of what it may configure, write to and read from ("" matches
// nothing).
type Perms struct{ Configure, Write, Read string }

// User creates a user of the test's own on r's broker with tags (""
// for none: no management API) and perms on r's vhost, deleted when the
// test ends, and returns r as that user.
func User(t testing.TB, r *rabbit.Resolved, tags string, perms Perms) *rabbit.Resolved {
	t.Helper()
	name := Name(t, "user")
	if len(name) > 100 {
		name = name[len(name)-100:]
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	pw := "pw-" + hex.EncodeToString(b[:])
	body, _ := json.Marshal(map[string]string{"password": pw, "tags": tags})
	if err := API(r, http.MethodPut, "users/"+url.PathEscape(name), body); err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := API(r, http.MethodDelete, "users/"+url.PathEscape(name), nil); err != nil {
			t.Errorf("delete user %s: %v", name, err)
		}
	})
	perm, _ := json.Marshal(map[string]string{"configure": perms.Configure, "write": perms.Write, "read": perms.Read})
	if err := API(r, http.MethodPut, "permissions/"+url.PathEscape(r.Vhost)+"/"+url.PathEscape(name), perm); err != nil {
		t.Fatalf("grant %s on vhost %s: %v", name, r.Vhost, err)
	}
	u := *r.AMQP
	u.User = url.UserPassword(name, pw)
	u.Path, u.RawPath = "/"+r.Vhost, "/"+url.PathEscape(r.Vhost)
	out, err := rabbit.Config{AMQPURL: u.String(), APIURL: r.APIURL.String(), PrometheusURL: r.PrometheusURL.String(), Vhost: r.Vhost}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// AMQPLogin is r's AMQP user and password as its login gives them now, for
// a test that writes them into URLs of its own.
func AMQPLogin(t testing.TB, r *rabbit.Resolved) (user, pass string) {
	t.Helper()
	return login(t, r.AMQPLogin)
}

// APILogin is AMQPLogin for r's management API.
func APILogin(t testing.TB, r *rabbit.Resolved) (user, pass string) {
	t.Helper()
	return login(t, r.APILogin)
}

func login(t testing.TB, c secret.Credentials) (user, pass string) {
	t.Helper()
	user, pass, err := c.Credentials(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return user, pass
}
