package rabbit_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// rotate rewrites a password file as a secret store does: a new file
// renamed over the old one.
func rotate(t *testing.T, path, pw string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A password file rotated while ladder runs (the user's password changed
// on the broker, the file rewritten) is what the next connection logs in
// with: AMQP 0-9-1, the management API (ladder's own requests and
// rabbit-hole's, through the client made before the rotation) and, on
// 4.x, AMQP 1.0. Nothing is resolved or made again: no restart. No error
// on the way holds either password.
func TestRotatedPasswordFileIsUsedByTheNextConnection(t *testing.T) {
	for _, version := range []string{"3.10", "4.3"} {
		t.Run(version, func(t *testing.T) {
			admin := brokertest.OwnVhostOn(t, brokertest.RequireVersion(t, version))
			user := brokertest.User(t, admin, "management", brokertest.Perms{Configure: ".*", Write: ".*", Read: ".*"})
			name := user.AMQPUser
			old, _ := user.AMQP.User.Password()
			file := filepath.Join(t.TempDir(), "rabbit.password")
			rotate(t, file, old)

			u := *user.AMQP
			u.User = url.User(name)
			r, err := rabbit.Config{AMQPURL: u.String(), APIURL: admin.APIURL.String(), Vhost: admin.Vhost, PasswordFile: file}.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			m, err := rabbit.NewManagement(r)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			rh, err := r.API()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			connect := func(stage string, secrets ...string) {
				t.Helper()
				check := func(what string, err error) {
					t.Helper()
					if err != nil {
						t.Errorf("%s, %s: %v", stage, what, err)
						for _, s := range secrets {
							if strings.Contains(err.Error(), s) {
								t.Errorf("%s, %s: the error shows a password", stage, what)
							}
						}
					}
				}
				conn, err := r.DialAMQP(ctx, "test rotation")
				check("AMQP 0-9-1", err)
				if err == nil {
					conn.Close()
				}
				_, err = m.VhostFresh(ctx, r.Vhost)
				check("management API (Management made before)", err)
				_, err = rh.ListBindingsIn(r.Vhost)
				check("management API (rabbit-hole client made before)", err)
				if version != "3.10" {
					c, err := r.DialAMQP1(ctx, "test rotation")
					check("AMQP 1.0", err)
					if err == nil {
						c.Close()
					}
				}
			}
			connect("before the rotation", old)

			rotated := "rotated-" + strings.TrimPrefix(old, "pw-")
			body, _ := json.Marshal(map[string]string{"password": rotated, "tags": "management"})
			if err := brokertest.API(admin, http.MethodPut, "users/"+url.PathEscape(name), body); err != nil {
				t.Fatal(err)
			}
			rotate(t, file, rotated)
			// The old password is refused now: what follows logs in with
			// the new one or not at all.
			stale, err := rabbit.Config{AMQPURL: user.AMQPURL, APIURL: admin.APIURL.String(), Vhost: admin.Vhost}.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			if conn, err := stale.DialAMQP(ctx, "test stale"); !errors.Is(err, broker.ErrLoginRefused) {
				if err == nil {
					conn.Close()
				}
				t.Fatalf("the old password after the rotation: %v, want refused", err)
			}
			connect("after the rotation", old, rotated)
		})
	}
}
