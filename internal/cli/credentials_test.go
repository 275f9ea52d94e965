package cli

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// everyCommand runs each command that may reach a broker, with the least
// arguments it takes; {file} is a dump file, {out} a path to write.
var everyCommand = [][]string{
	{},
	{"ping"},
	{"topology"},
	{"lint"},
	{"peek", "q"},
	{"move", "--from", "q", "--to", "queue:t", "--yes"},
	{"move", "--from", "q", "--to", "queue:t", "--dry-run"},
	{"unblock", "q", "--yes"},
	{"dump", "q", "--out", "{out}"},
	{"replay", "{file}", "--to", "queue:t", "--yes"},
	{"schedule", "--ladder", "q"},
	{"demo", "--real", "--duration", "1s"},
}

// badURLs are the shapes issue 21 saw printed back with their password
// (%s), and neighbours: none parses into scheme://user:password@host.
var badURLs = []string{
	"u:%s@host:5677",
	"amqp:/u:%s@h",
	"amqp//u:%s@h",
	"amqps:u:%s@h",
	"amqp://u:pa/w%s@h:5672/", // unencoded "/": Go says 'invalid port ":pa"'
	"amqp://u:12/%s@127.0.0.1/",
	"amqp://u:%s@h:bad/",
	"amqp://u:%s@h/a b",
}

// runCommandLine fills {file} and {out} and runs ladder.
func runCommandLine(t *testing.T, dir string, args []string) (int, string) {
	t.Helper()
	file := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(file, []byte(`{"ladder_dump":1,"vhost":"/","queue":"q","broker_version":"3.10.8","dumped_at":"2026-01-01T00:00:00Z"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	filled := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "{file}", file)
		filled[i] = strings.ReplaceAll(a, "{out}", filepath.Join(dir, "out.jsonl"))
	}
	code, out, errOut := runLadder(t, filled...)
	return code, out + errOut
}

// No command prints a password given in a URL ladder cannot parse, by flag
// or by environment, for AMQP, the API or Prometheus: it was printed back
// whole ("u:PW@host:5677", "amqp:/u:PW@h") or in part ('invalid port
// ":w" after host').
func TestBadURLsNeverPrintThePassword(t *testing.T) {
	dir := t.TempDir()
	for _, shape := range badURLs {
		secret := secretWord(t)
		raw := strings.ReplaceAll(shape, "%s", secret)
		httpRaw := strings.Replace(strings.Replace(raw, "amqps", "https", 1), "amqp", "http", 1)
		for _, via := range []struct {
			name string
			env  map[string]string
			args []string
		}{
			{name: "--amqp-url", args: []string{"--amqp-url", raw}},
			{name: "$LADDER_AMQP_URL", env: map[string]string{"LADDER_AMQP_URL": raw}},
			{name: "--api-url", args: []string{"--api-url", httpRaw}},
			{name: "$LADDER_API_URL", env: map[string]string{"LADDER_API_URL": httpRaw}},
			{name: "--prometheus-url", args: []string{"--prometheus-url", httpRaw}},
		} {
			for k, v := range via.env {
				t.Setenv(k, v)
			}
			for _, cmd := range everyCommand {
				args := append(append([]string(nil), cmd...), via.args...)
				code, all := runCommandLine(t, dir, args)
				if code == exitOK {
					t.Errorf("%s %v: exit 0 with a bad URL", via.name, cmd)
				}
				for _, part := range []string{secret, secret[3:], "w" + secret[:4]} {
					if strings.Contains(all, part) {
						t.Errorf("%s %q, ladder %v: the password (%q) is printed:\n%s", via.name, raw, cmd, part, all)
					}
				}
			}
			for k := range via.env {
				t.Setenv(k, "")
			}
		}
	}
}

// A malformed URL is a usage error naming the flag, without the URL: exit
// 2, one line.
func TestBadURLIsOneUsageLine(t *testing.T) {
	for shape, want := range map[string]string{
		"u:%s@host:5677":           `--amqp-url is not a valid URL: it must start with amqp:// or amqps:// ("amqp://host:port/vhost", user:password@ before the host, special characters in the password percent-encoded)`,
		"amqp://u:pa/w%s@h:5672/":  `--amqp-url is not a valid URL ("amqp://host:port/vhost", user:password@ before the host, special characters in the password percent-encoded)`,
		"amqp://u:12/%s@h/":        `--amqp-url is not a valid URL: an '@' follows the host part (in a password, / ? # are written %2F %3F %23; in a vhost, @ is %40)`,
		"http://u:%s@h:5672/":      `--amqp-url http://u:xxxxx@h:5672/: scheme must be amqp:// or amqps://`,
		"amqp://u:%s@h/my vhost":   `--amqp-url is not a valid URL: it holds a space or a line break ("amqp://host:port/vhost", user:password@ before the host, special characters in the password percent-encoded)`,
		"amqp://u:%s@:5672/":       `--amqp-url amqp://u:xxxxx@:5672/: no host`,
		"amqp://u:%s@h:5672/v%40x": "", // a vhost with @ written %40 parses
	} {
		secret := secretWord(t)
		raw := strings.ReplaceAll(shape, "%s", secret)
		code, out, errOut := runLadder(t, "ping", "--amqp-url", raw, "--api-url", "http://127.0.0.1:1")
		if want == "" {
			if strings.Contains(errOut, "valid URL") || code == exitUsage {
				t.Errorf("%q refused: %q", shape, errOut)
			}
			continue
		}
		if code != exitUsage || out != "" || errOut != "ladder: "+want+"\n" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q\nwant %q", shape, code, out, errOut, want)
		}
	}
}

// writeSecret writes a password file with mode.
func writeSecret(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pw.txt")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// A password file others may read is refused as ssh refuses such a key,
// through the flag, its variable and a *_FILE variable alike.
func TestPasswordFileOthersMayReadIsRefused(t *testing.T) {
	secret := secretWord(t)
	open := writeSecret(t, secret+"\n", 0o644)
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{args: []string{"--password-file", open}, want: "--password-file: permissions 0644 for '" + open + "' are too open: others may read it (chmod 600 " + open + ")"},
		{env: map[string]string{"LADDER_PASSWORD_FILE": open}, want: "--password-file: permissions 0644 for '" + open + "' are too open: others may read it (chmod 600 " + open + ")"},
		{env: map[string]string{"LADDER_AMQP_URL_FILE": open}, want: "$LADDER_AMQP_URL_FILE: permissions 0644 for '" + open + "' are too open: others may read it (chmod 600 " + open + ")"},
	} {
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		args := append([]string{"ping"}, c.args...)
		if c.env["LADDER_AMQP_URL_FILE"] == "" {
			args = append(args, "--amqp-url", "amqp://guest@127.0.0.1:1/")
		}
		code, out, errOut := runLadder(t, args...)
		if code != exitUsage || out != "" || errOut != "ladder: "+c.want+"\n" || strings.Contains(errOut, secret) {
			t.Errorf("%v %v: exit %d, %q\nwant %q", c.env, c.args, code, errOut, c.want)
		}
		for k := range c.env {
			t.Setenv(k, "")
		}
	}
}

// A URL naming a user without a password, no --password-file and no
// terminal to ask on: one usage line saying what to give.
func TestUserWithoutPasswordNoTerminal(t *testing.T) {
	code, _, errOut := runLadder(t, "ping", "--amqp-url", "amqp://bob@127.0.0.1:1/")
	want := "ladder: --amqp-url names user bob and no password: give it with --password-file FILE ($LADDER_PASSWORD_FILE), or run ladder on a terminal to be asked\n"
	if code != exitUsage || errOut != want {
		t.Errorf("exit %d, %q\nwant %q", code, errOut, want)
	}
	// A password file with a URL that has its own: which one is meant?
	pw := writeSecret(t, "x-"+secretWord(t), 0o600)
	code, _, errOut = runLadder(t, "ping", "--amqp-url", "amqp://bob:own-"+secretWord(t)+"@127.0.0.1:1/", "--password-file", pw)
	if code != exitUsage || !strings.Contains(errOut, "--amqp-url has a password of its own: keep one") || strings.Contains(errOut, "own-pw") {
		t.Errorf("both: exit %d, %q", code, errOut)
	}
	// $X and $X_FILE both set.
	t.Setenv("LADDER_AMQP_URL", "amqp://bob@127.0.0.1:1/")
	t.Setenv("LADDER_AMQP_URL_FILE", pw)
	code, _, errOut = runLadder(t, "ping")
	if code != exitUsage || errOut != "ladder: $LADDER_AMQP_URL and $LADDER_AMQP_URL_FILE are both set: keep one\n" {
		t.Errorf("both variables: exit %d, %q", code, errOut)
	}
}

// The password from --password-file, $LADDER_PASSWORD_FILE or a URL in
// $LADDER_AMQP_URL_FILE logs in over AMQP and to the API; a wrong one is
// refused without being printed.
func TestPasswordFileLogsIn(t *testing.T) {
	r := brokerEnv(t)
	if u, p := brokertest.AMQPLogin(t, r); u != "guest" || p != "guest" {
		t.Skip("the test broker's user is not guest/guest")
	}
	noPass := *r.AMQP
	noPass.User = url.User("guest")
	t.Setenv("LADDER_AMQP_URL", noPass.String())
	t.Setenv("LADDER_API_URL", r.APIURL.String())
	right := writeSecret(t, "guest\n", 0o600)
	code, out, errOut := runLadder(t, "ping", "--password-file", right)
	if code != exitOK || !strings.HasPrefix(out, "ok: RabbitMQ ") || !strings.Contains(out, "amqp://guest@") {
		t.Fatalf("--password-file: exit %d, %q %q", code, out, errOut)
	}
	t.Setenv("LADDER_PASSWORD_FILE", right)
	if code, out, errOut := runLadder(t, "topology", "-o", "json"); code != exitOK {
		t.Errorf("$LADDER_PASSWORD_FILE: exit %d, %q %q", code, out, errOut)
	}
	t.Setenv("LADDER_PASSWORD_FILE", "")

	secret := secretWord(t)
	wrong := writeSecret(t, secret, 0o600)
	for _, args := range [][]string{{"ping"}, {"topology"}} {
		code, out, errOut := runLadder(t, append(args, "--password-file", wrong)...)
		if code != exitError || !strings.HasPrefix(errOut, "ladder: login refused for user guest at ") || strings.Contains(out+errOut, secret) {
			t.Errorf("%v, wrong password: exit %d, %q %q", args, code, out, errOut)
		}
	}

	withPass := *r.AMQP
	withPass.User = url.UserPassword("guest", "guest")
	t.Setenv("LADDER_AMQP_URL", "")
	t.Setenv("LADDER_AMQP_URL_FILE", writeSecret(t, withPass.String()+"\n", 0o400))
	if code, out, errOut := runLadder(t, "ping"); code != exitOK || !strings.Contains(out, "amqp://guest:xxxxx@") {
		t.Errorf("$LADDER_AMQP_URL_FILE: exit %d, %q %q", code, out, errOut)
	}
}

// On a terminal, a URL naming a user without a password asks for it,
// without echoing what is typed; the answer logs in to AMQP and the API.
func TestPasswordPromptOnTerminal(t *testing.T) {
	r := brokerEnv(t)
	if u, p := brokertest.AMQPLogin(t, r); u != "guest" || p != "guest" {
		t.Skip("the test broker's user is not guest/guest")
	}
	noPass := *r.AMQP
	noPass.User = url.User("guest")
	env := []string{"LADDER_AMQP_URL=" + noPass.String(), "LADDER_API_URL=" + r.APIURL.String()}
	s := newTmux(t, "100", "10", env, "ping")
	s.waitFor("Password for guest at " + r.AMQP.Host + ":")
	s.keys("guest", "Enter")
	s.waitFor("ok: RabbitMQ ")

	secret := secretWord(t)
	s = newTmux(t, "100", "10", env, "ping")
	s.waitFor("Password for guest at " + r.AMQP.Host + ":")
	s.keys(secret, "Enter")
	scr := s.waitFor("ladder: login refused for user guest at ")
	if strings.Contains(scr, secret) {
		t.Errorf("the typed password shows:\n%s", scr)
	}
}

// A bad URL from the environment names the variable it came from.
func TestBadURLFromTheEnvironmentNamesIt(t *testing.T) {
	secret := secretWord(t)
	t.Setenv("LADDER_AMQP_URL", "u:"+secret+"@host:5677")
	code, _, errOut := runLadder(t, "topology")
	if code != exitUsage || !strings.HasPrefix(errOut, "ladder: $LADDER_AMQP_URL is not a valid URL: it must start with amqp:// or amqps://") || strings.Contains(errOut, secret) {
		t.Errorf("exit %d %q", code, errOut)
	}
	t.Setenv("LADDER_AMQP_URL", "")
	t.Setenv("LADDER_API_URL", "ftp://u:"+secret+"@h/")
	code, _, errOut = runLadder(t, "ping")
	if code != exitUsage || errOut != "ladder: $LADDER_API_URL ftp://u:xxxxx@h/: scheme must be http:// or https://\n" {
		t.Errorf("exit %d %q", code, errOut)
	}
}

// ladder serve never asks a password on its terminal once serving (a
// session's context switch would wait on it): a context without a
// password file or variable is an error, at once.
func TestNoPromptOnATerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	a := &app{stdin: tty, stdout: tty, stderr: tty, noPrompt: true}
	done := make(chan error, 1)
	go func() {
		_, err := a.credentials(rabbit.Config{AMQPURL: "amqp://ops@127.0.0.1:1/", APIURL: "http://127.0.0.1:1"})
		done <- err
	}()
	select {
	case err := <-done:
		if exitCode(err) != exitUsage {
			t.Errorf("exit %d %v, want a usage error", exitCode(err), err)
		}
	case <-time.After(30 * time.Second):
		_, _ = ptmx.Write([]byte("\n")) // the prompt's answer, to end it
		t.Fatal("a password was asked on the terminal")
	}
}
