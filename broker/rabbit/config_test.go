package rabbit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/internal/secret"
)

// login is what c gives now, failing the test on an error.
func login(t *testing.T, c secret.Credentials) (user, pass string) {
	t.Helper()
	user, pass, err := c.Credentials(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return user, pass
}

func TestResolveDefaults(t *testing.T) {
	r, err := Config{AMQPURL: "amqp://alice:pw@rabbit.internal:5673/%2Fprod"}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if got := r.APIURL.String(); got != "http://rabbit.internal:15672" {
		t.Errorf("api url %q", got)
	}
	if u, p := login(t, r.APILogin); r.APIUser != "alice" || u != "alice" || p != "pw" {
		t.Errorf("api credentials %q/%q, want the AMQP URL's", u, p)
	}
	if r.Vhost != "/prod" {
		t.Errorf("vhost %q, want /prod", r.Vhost)
	}
	if r.Port() != "5673" || r.TLS != nil {
		t.Errorf("port %s tls %v", r.Port(), r.TLS)
	}
}

func TestResolveEmptyVhostIsSlash(t *testing.T) {
	for _, u := range []string{"amqp://h", "amqp://h/", "amqp://h:5672"} {
		r, err := Config{AMQPURL: u}.Resolve()
		if err != nil || r.Vhost != "/" {
			t.Errorf("%s: vhost %q err %v", u, r.Vhost, err)
		}
	}
	r, _ := Config{AMQPURL: "amqp://h/prod", Vhost: "other"}.Resolve()
	if r.Vhost != "other" {
		t.Errorf("--vhost must win, got %q", r.Vhost)
	}
}

func TestResolveAPIURLCredentialsWin(t *testing.T) {
	r, err := Config{AMQPURL: "amqp://a:b@h/", APIURL: "https://admin:secret@mgmt:443/"}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if u, p := login(t, r.APILogin); r.APIUser != "admin" || u != "admin" || p != "secret" {
		t.Errorf("credentials %q/%q", u, p)
	}
	if strings.Contains(r.APIURL.String(), "secret") || r.RedactedAPI() != "https://admin:xxxxx@mgmt:443" {
		t.Errorf("api url keeps credentials: %s", r.APIURL)
	}
	if r.TLS == nil {
		t.Error("https API needs a TLS config")
	}
}

func TestResolveAMQPSDefaults(t *testing.T) {
	r, err := Config{AMQPURL: "amqps://u:p@h/"}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if r.APIURL.String() != "https://h:15671" || r.Port() != "5671" || r.TLS == nil {
		t.Errorf("api %s port %s tls %v", r.APIURL, r.Port(), r.TLS)
	}
}

func TestResolveCACert(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.pem")
	_, err := Config{AMQPURL: "amqps://h/", CACertFile: missing}.Resolve()
	if err == nil || !strings.Contains(err.Error(), "--ca-cert "+missing) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.pem")
	if err := os.WriteFile(bad, []byte("not a cert"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Config{AMQPURL: "amqps://h/", CACertFile: bad}.Resolve()
	if err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("bad pem: %v", err)
	}
}

func TestResolveRejectsBadURLsWithoutLeaking(t *testing.T) {
	for _, u := range []string{"http://u:leak1@h/", "amqp://u:leak2@h:notaport/", "amqp:///novhost"} {
		_, err := Config{AMQPURL: u}.Resolve()
		if err == nil {
			t.Errorf("%s: no error", u)
			continue
		}
		if strings.Contains(err.Error(), "leak") || !strings.Contains(err.Error(), "--amqp-url") {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestRedactURL(t *testing.T) {
	cases := map[string]string{
		"amqp://guest:guest@localhost:5672/":  "amqp://guest:xxxxx@localhost:5672/",
		"amqps://u:p%40ss@h/vh":               "amqps://u:xxxxx@h/vh",
		"amqp://localhost/":                   "amqp://localhost/",
		"amqp://onlyuser@h/":                  "amqp://onlyuser@h/",
		"amqp://u:pa ss@h:bad/ junk":          "xxxxx@h:bad/ junk",
		"http://admin:s3cr3t@mgmt:15672/api/": "http://admin:xxxxx@mgmt:15672/api/",
		"amqp://u:pa/ss@h:bad/":               "xxxxx@h:bad/",
		"amqp://u:p@ss@h:bad/":                "xxxxx@h:bad/",
		"u:hunter2@host:5677":                 "xxxxx@host:5677",
		"amqps:u:hunter2@h":                   "xxxxx@h",
		"amqp:/u:hunter2@h":                   "xxxxx@h",
		"amqp://u:hunter2":                    "(not a valid URL)",
		"amqp://u:12/hunter2@h/":              "xxxxx@h/",
	}
	for in, want := range cases {
		if got := secret.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// amqp091 writes ServerName into the TLS config it is given: each user gets
// its own copy, so the AMQP host never leaks into the API's verification.
func TestTLSConfigIsCopiedPerUse(t *testing.T) {
	r, err := Config{AMQPURL: "amqps://u:p@amqp-host/", APIURL: "https://api-host/"}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.tlsConfig(), r.tlsConfig()
	if a == r.TLS || a == b {
		t.Fatal("the shared TLS config is handed out")
	}
	a.ServerName = "amqp-host"
	if r.TLS.ServerName != "" || b.ServerName != "" {
		t.Fatal("a copy's change reached the shared config")
	}
}

func TestResolvePrometheusURL(t *testing.T) {
	r, err := Config{AMQPURL: "amqps://u:p@rabbit.example:5671/"}.Resolve()
	if err != nil || r.RedactedPrometheus() != "https://rabbit.example:15691" {
		t.Fatalf("default from https API: %q %v", r.RedactedPrometheus(), err)
	}
	r, err = Config{APIURL: "http://h:15673", PrometheusURL: "http://scrape:s3cret@h:15693/?x=1"}.Resolve()
	if err != nil || r.RedactedPrometheus() != "http://scrape:xxxxx@h:15693" || r.PrometheusUser != "scrape" || r.PrometheusLogin == nil {
		t.Fatalf("given: %q %q %v", r.RedactedPrometheus(), r.PrometheusUser, err)
	}
	if _, err := (Config{PrometheusURL: "ftp://h:1"}).Resolve(); err == nil || !strings.Contains(err.Error(), "--prometheus-url") {
		t.Errorf("bad scheme: %v", err)
	}
}

// One password, from a file or a prompt, serves every URL naming a user
// without one: AMQP, the API, and Prometheus only when its URL names a
// user (it gets no credentials it did not ask for).
func TestPasswordServesEveryURLNamingAUser(t *testing.T) {
	r, err := Config{AMQPURL: "amqp://bob@h/", Password: "pw-one", PrometheusURL: "http://scrape@h:15692"}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		login, user string
		got         secret.Credentials
	}{{"amqp", r.AMQPUser, r.AMQPLogin}, {"api", r.APIUser, r.APILogin}, {"prometheus", r.PrometheusUser, r.PrometheusLogin}} {
		want := "bob"
		if c.login == "prometheus" {
			want = "scrape"
		}
		if u, p := login(t, c.got); c.user != want || u != want || p != "pw-one" {
			t.Errorf("%s: %q %q/%q, want %s/pw-one", c.login, c.user, u, p, want)
		}
	}
	if r.RedactedAMQP() != "amqp://bob@h/" || r.RedactedAPI() != "http://h:15672" || r.RedactedPrometheus() != "http://scrape@h:15692" {
		t.Errorf("shown as %q %q %q", r.RedactedAMQP(), r.RedactedAPI(), r.RedactedPrometheus())
	}
	r, err = Config{AMQPURL: "amqp://bob@h/", Password: "pw-one"}.Resolve()
	if err != nil || r.PrometheusUser != "" || r.PrometheusLogin != nil {
		t.Errorf("prometheus without a user got credentials: %v %+v", err, r)
	}
	_, err = Config{AMQPURL: "amqp://bob@h/"}.Resolve()
	if !errors.Is(err, ErrPasswordNeeded) || strings.Contains(err.Error(), "password needed") {
		t.Errorf("no password: %v", err)
	}
	for _, c := range []Config{{Password: "pw"}, {AMQPURL: "amqp://h/", Password: "pw"}, {AMQPURL: "amqp://bob:own@h/", Password: "pw"}} {
		if _, err := c.Resolve(); err == nil || !strings.Contains(err.Error(), "--password-file") {
			t.Errorf("%+v: a password no URL takes: %v", c, err)
		}
	}
}
