package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/secret"
)

// The 3 a.m. errors: one line on stderr naming the thing, a non-zero exit,
// nothing on stdout (table or JSON), no password.

// oneLine runs ladder with args, in table and JSON output, and checks the
// contract; it returns the error line without "ladder: " and the newline.
func oneLine(t *testing.T, secret string, args ...string) string {
	t.Helper()
	var line string
	for _, output := range []string{"table", "json"} {
		code, out, errOut := runLadder(t, append(args, "-o", output)...)
		if code != exitError {
			t.Errorf("%v -o %s: exit %d, want %d (%q)", args, output, code, exitError, errOut)
		}
		if out != "" {
			t.Errorf("%v -o %s: stdout %q, want nothing", args, output, out)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.HasSuffix(errOut, "\n") || !strings.HasPrefix(errOut, "ladder: ") {
			t.Errorf("%v -o %s: want one line, got %q", args, output, errOut)
		}
		if secret != "" && strings.Contains(errOut, secret) {
			t.Errorf("%v -o %s: the password is printed: %q", args, output, errOut)
		}
		if strings.Contains(errOut, "Exception (") {
			t.Errorf("%v -o %s: amqp091's exception text: %q", args, output, errOut)
		}
		if len(errOut) > 200 {
			t.Errorf("%v -o %s: %d characters, want ≤ 200: %q", args, output, len(errOut), errOut)
		}
		line = strings.TrimSuffix(strings.TrimPrefix(errOut, "ladder: "), "\n")
	}
	return line
}

// secretWord is a password no broker accepts and no other text contains.
func secretWord(t *testing.T) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "pw-" + hex.EncodeToString(b[:])
}

// withPassword is raw (an amqp:// or http:// URL) with user guest and pass.
func withPassword(t *testing.T, raw, pass string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("guest", pass)
	return u.String()
}

func TestWrongPasswordSaysLoginRefused(t *testing.T) {
	r := brokerEnv(t)
	pw := secretWord(t)
	t.Setenv("LADDER_AMQP_URL", withPassword(t, r.AMQPURL, pw))
	t.Setenv("LADDER_API_URL", r.RedactedAPI()) // credentials from the AMQP URL
	amqpAt := net.JoinHostPort(r.AMQP.Hostname(), r.Port())
	q := brokertest.Name(t, "q") // never reached: the login fails first
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"topology"}, "login refused for user guest at " + r.RedactedAPI()},
		{[]string{"peek", q}, "login refused for user guest at " + r.RedactedAPI()},
		{[]string{"ping"}, "login refused for user guest at " + amqpAt},
	} {
		if got := oneLine(t, pw, c.args...); got != c.want {
			t.Errorf("%v: %q, want %q", c.args, got, c.want)
		}
	}
	// A password given to the API alone is refused there, in the same words.
	t.Setenv("LADDER_AMQP_URL", r.AMQPURL)
	t.Setenv("LADDER_API_URL", withPassword(t, r.RedactedAPI(), pw))
	if got, want := oneLine(t, pw, "ping"), "login refused for user guest at "+r.RedactedAPI(); got != want {
		t.Errorf("ping, wrong API password: %q, want %q", got, want)
	}
}

func TestMissingVhostSaysNotFound(t *testing.T) {
	r := brokerEnv(t)
	v := brokertest.Name(t, "nosuchvhost")
	version := brokerVersion(t, r)
	wantAPI := "vhost " + v + " not found at " + r.APIURL.Host + " (management API, RabbitMQ " + version + ")"
	wantAMQP := "vhost " + v + " not found at " + net.JoinHostPort(r.AMQP.Hostname(), r.Port())
	q := brokertest.Name(t, "q")
	u := *r.AMQP
	u.Path = "/" + v
	// The vhost from the AMQP URL and from --vhost, AMQP first (ping) and
	// API first (topology, peek): one wording.
	for _, env := range []struct{ amqpURL, vhost string }{{u.String(), ""}, {r.AMQPURL, v}} {
		t.Setenv("LADDER_AMQP_URL", env.amqpURL)
		t.Setenv("LADDER_VHOST", env.vhost)
		for _, args := range [][]string{{"topology"}, {"peek", q}, {"ping"}} {
			want := wantAPI
			if args[0] == "ping" {
				want = wantAMQP // ping asks AMQP first
			}
			if got := oneLine(t, "", args...); got != want {
				t.Errorf("%v (vhost via %+v): %q, want %q", args, env, got, want)
			}
		}
	}
}

func TestManagementAPINotAnswering(t *testing.T) {
	r := brokerEnv(t)
	port := freePort(t)
	pw := secretWord(t)
	t.Setenv("LADDER_API_URL", "http://guest:"+pw+"@127.0.0.1:"+port)
	q := brokertest.Name(t, "q")
	for _, args := range [][]string{{"topology"}, {"peek", q}, {"ping"}} {
		got := oneLine(t, pw, args...)
		if want := "cannot reach the management API at 127.0.0.1:" + port + ": connection refused"; got != want {
			t.Errorf("%v: %q, want %q", args, got, want)
		}
		if strings.ContainsAny(got, "?") || strings.Contains(got, "columns") {
			t.Errorf("%v: the request's query string is printed: %q", args, got)
		}
	}
	_ = r
}

func TestAPIURLAtAMQPPort(t *testing.T) {
	r := brokerEnv(t)
	amqpAt := net.JoinHostPort(r.AMQP.Hostname(), r.Port())
	t.Setenv("LADDER_API_URL", "http://"+amqpAt)
	got := oneLine(t, "", "topology")
	if want := amqpAt + " does not speak HTTP (is it the AMQP port?)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// A password that is the user name is still shown as user:xxxxx@, the
// way every URL is (it was "xxxxx:xxxxx@").
func TestRedactionKeepsUserName(t *testing.T) {
	port := freePort(t)
	got := oneLine(t, "", "ping", "--amqp-url", "amqp://guest:guest@127.0.0.1:"+port+"/")
	if !strings.Contains(got, "amqp://guest:xxxxx@127.0.0.1:"+port+"/") {
		t.Errorf("%q does not show amqp://guest:xxxxx@", got)
	}
	if want := secret.RedactURL("amqp://guest:guest@h/"); want != "amqp://guest:xxxxx@h/" {
		t.Errorf("RedactURL: %q", want)
	}
}

// A missing queue in a vhost that exists is still the queue's fault.
func TestMissingQueueIsNotAMissingVhost(t *testing.T) {
	brokerEnv(t)
	q := brokertest.Name(t, "nosuchqueue")
	got := oneLine(t, "", "peek", q)
	if want := `peek: queue "` + q + `" in vhost /: not found`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// A web server that is not the management API (here one that answers
// every path with an HTML 404, as python -m http.server does) is said to
// be that, not "vhost / not found", and its page is never printed.
func TestNotAManagementAPI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "<!DOCTYPE HTML>\n<html><head><title>Error response</title></head><body>404</body></html>\n")
	}))
	defer srv.Close()
	t.Setenv("LADDER_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/")
	t.Setenv("LADDER_API_URL", srv.URL)
	want := srv.URL + " is not a RabbitMQ management API (GET /api/overview: 404 Not Found)"
	out := filepath.Join(t.TempDir(), "q.jsonl")
	for _, args := range [][]string{{"peek", "q"}, {"lint"}, {"topology"}, {"dump", "q", "--out", out}} {
		if got := oneLine(t, "", args...); got != want {
			t.Errorf("%v: %q, want %q", args, got, want)
		}
	}
}

// brokerVersion is the test broker's version, as its API says.
func brokerVersion(t *testing.T, r *rabbit.Resolved) string {
	t.Helper()
	m, err := rabbit.NewManagement(r)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	v, err := m.BrokerVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A 77-character host is named once and the line fits in 200 characters
// (it was 217 to 238: "at H:15672: no such host H").
func TestLongHostOneShortLine(t *testing.T) {
	host := strings.Repeat("h", 69) + ".invalid"
	t.Setenv("LADDER_AMQP_URL", "amqp://guest:guest@"+host+":5672/")
	t.Setenv("LADDER_API_URL", "")
	for _, args := range [][]string{{"ping"}, {"topology"}} {
		got := oneLine(t, "", args...)
		if strings.Count(got, host) != 1 || !strings.HasSuffix(got, "no such host") {
			t.Errorf("%v: %q", args, got)
		}
	}
}

// An AMQP URL at a management port gets the hint on 15672 and on 15673
// (4.3's here) alike: ladder asks whether HTTP answers there.
func TestAMQPURLAtEitherManagementPort(t *testing.T) {
	r := brokerEnv(t)
	for _, port := range []string{"15672", "15673"} {
		addr := net.JoinHostPort(r.AMQP.Hostname(), port)
		if c, err := net.DialTimeout("tcp", addr, time.Second); err != nil {
			t.Logf("nothing listens at %s: %v", addr, err)
			continue
		} else {
			c.Close()
		}
		u := *r.AMQP
		u.Host = addr
		t.Setenv("LADDER_AMQP_URL", u.String())
		if got, want := oneLine(t, "", "ping"), addr+" does not speak AMQP (is it the management port?)"; got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// demo --real: a queue of the ladder that exists with other arguments is
// one line saying what to do, not amqp091's "Exception (406) Reason:
// \"PRECONDITION_FAILED…\"", and nothing reaches stdout.
func TestRealDemoQueueWithOtherArguments(t *testing.T) {
	r := vhostEnv(t)
	if err := brokertest.API(r, http.MethodPut, "queues/"+url.PathEscape(r.Vhost)+"/"+rabbit.DemoMain, []byte(`{"durable":true}`)); err != nil {
		t.Fatal(err)
	}
	got := oneLine(t, "", "demo", "--real", "--duration", "10s")
	if want := "queue orders.process already exists with other arguments (x-dead-letter-exchange orders.dlx); delete it or use another vhost"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// demo --real that cannot connect: the one error line, no banner on
// stderr and no "published 0 · …" on stdout.
func TestRealDemoUnreachableOneLine(t *testing.T) {
	port := freePort(t)
	t.Setenv("LADDER_AMQP_URL", "amqp://guest:guest@127.0.0.1:"+port+"/")
	got := oneLine(t, "", "demo", "--real", "--duration", "5s")
	if want := "cannot reach RabbitMQ at amqp://guest:xxxxx@127.0.0.1:" + port + "/ (port " + port + "): connection refused"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
