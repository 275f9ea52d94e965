package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// A password file rotated while ladder runs is used without a restart:
// by the client already open (its next management API request) and by
// the next client the run makes (the TUI's vhost and context switchers
// make one each time).
func TestRotatedPasswordFileNoRestart(t *testing.T) {
	admin := brokertest.OwnVhost(t)
	user := brokertest.User(t, admin, "management", brokertest.Perms{Configure: ".*", Write: ".*", Read: ".*"})
	old, _ := user.AMQP.User.Password()
	file := writeSecret(t, old+"\n", 0o600)
	u := *user.AMQP
	u.User = url.User(user.AMQPUser)

	var errb bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &errb, ctx: context.Background(),
		cfg: rabbit.Config{AMQPURL: u.String(), APIURL: admin.APIURL.String(), Vhost: admin.Vhost, PasswordFile: file, APITimeout: rabbit.DefaultAPITimeout}}
	a.connect = a.liveConnector
	ctx := context.Background()
	first, closeFirst, err := a.client("test rotation")
	if err != nil {
		t.Fatal(err)
	}
	defer closeFirst()
	if _, err := first.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}

	rotated := "rotated-" + secretWord(t)
	body, _ := json.Marshal(map[string]string{"password": rotated, "tags": "management"})
	if err := brokertest.API(admin, http.MethodPut, "users/"+url.PathEscape(user.AMQPUser), body); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file+".new", []byte(rotated+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".new", file); err != nil {
		t.Fatal(err)
	}

	if _, err := first.Snapshot(ctx); err != nil {
		t.Errorf("the open client after the rotation: %v", err)
	}
	next, closeNext, err := a.clientFor(a.cfg, "test rotation (next)")
	if err != nil {
		t.Fatalf("the next client after the rotation: %v", err)
	}
	defer closeNext()
	if _, err := next.Snapshot(ctx); err != nil {
		t.Errorf("the next client's snapshot: %v", err)
	}
	for _, s := range []string{old, rotated} {
		if strings.Contains(errb.String(), s) {
			t.Errorf("stderr shows a password: %q", errb.String())
		}
	}
}

// A password file others may read (a Kubernetes secret's default 0644) is
// refused by default with one line naming the file, and accepted on
// purpose by --allow-readable-password-file, its variable or a context's
// key; the password is never printed either way.
func TestAllowReadablePasswordFile(t *testing.T) {
	clearLadderEnv(t)
	r := brokerEnv(t)
	if u, p := brokertest.AMQPLogin(t, r); u != "guest" || p != "guest" {
		t.Skip("the test broker's user is not guest/guest")
	}
	noPass := *r.AMQP
	noPass.User = url.User("guest")
	t.Setenv("LADDER_AMQP_URL", noPass.String())
	t.Setenv("LADDER_API_URL", r.APIURL.String())
	open := writeSecret(t, "guest\n", 0o644)

	code, out, errOut := runLadder(t, "ping", "--password-file", open)
	want := "ladder: --password-file: permissions 0644 for '" + open + "' are too open: others may read it (chmod 600 " + open + ")\n"
	if code != exitUsage || out != "" || errOut != want {
		t.Errorf("by default: exit %d %q %q, want %q", code, out, errOut, want)
	}
	code, out, errOut = runLadder(t, "ping", "--password-file", open, "--allow-readable-password-file")
	if code != exitOK || !strings.HasPrefix(out, "ok: RabbitMQ ") || strings.Contains(out+errOut, ":guest@") {
		t.Errorf("--allow-readable-password-file: exit %d %q %q", code, out, errOut)
	}
	t.Setenv("LADDER_ALLOW_READABLE_PASSWORD_FILE", "true")
	if code, out, errOut = runLadder(t, "ping", "--password-file", open); code != exitOK {
		t.Errorf("$LADDER_ALLOW_READABLE_PASSWORD_FILE: exit %d %q %q", code, out, errOut)
	}
	t.Setenv("LADDER_ALLOW_READABLE_PASSWORD_FILE", "")

	// A context's key, for the file it names.
	cfg := filepath.Join(t.TempDir(), "config.toml")
	body := "current-context = \"k8s\"\n\n[contexts.k8s]\npassword-file = \"" + open + "\"\nallow-readable-password-file = true\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut = runLadder(t, "--config", cfg, "ping"); code != exitOK {
		t.Errorf("context key: exit %d %q %q", code, out, errOut)
	}
	if code, out, _ = runLadder(t, "--config", cfg, "context", "show"); code != exitOK || !strings.Contains(out, "file "+open+" (others may read it: allowed)") {
		t.Errorf("context show: exit %d %q", code, out)
	}
}
