package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	amqp "github.com/rabbitmq/amqp091-go"
	gossh "golang.org/x/crypto/ssh"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// ladder serve, reached with the system's ssh client in tmux, against the
// real broker: the screen over SSH is the local TUI's, cell for cell and
// attribute for attribute, at 80×24 and after a resize to 200×50; q ends
// the session and not the server; SIGTERM stops the server cleanly.

// screenWait bounds every wait on a screen, a process or the broker: long
// enough for a machine whose cores are all busy.
const screenWait = 60 * time.Second

// newTmuxShell runs a shell command line in a detached tmux pane of w×h
// cells, in a session of its own (killed at the end, never the server).
func newTmuxShell(t *testing.T, w, h int, what, cmdline string) *tmuxSession {
	t.Helper()
	s := &tmuxSession{t: t, name: strings.NewReplacer("/", "-", ".", "-").Replace(brokertest.Name(t, what))}
	cmd := exec.Command("tmux", "new-session", "-d", "-s", s.name, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), cmdline)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", s.name).Run() })
	return s
}

// resize sets the pane's window to w×h cells.
func (s *tmuxSession) resize(w, h int) {
	s.t.Helper()
	if out, err := exec.Command("tmux", "resize-window", "-t", s.name, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h)).CombinedOutput(); err != nil {
		s.t.Fatalf("resize-window: %v %s", err, out)
	}
}

// waitLong is waitFor on the text without its attributes, with
// screenWait for its bound.
func (s *tmuxSession) waitLong(texts ...string) string {
	s.t.Helper()
	return s.waitWithin(screenWait, ansi.Strip, texts...)
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// sshKeyPair writes a new ed25519 key in OpenSSH's format (0600), as
// ssh-keygen would, and returns its path and its authorized-keys line.
func sshKeyPair(t *testing.T, dir, comment string) (path, authorized string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := gossh.MarshalPrivateKey(priv, comment)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err := gossh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return path, strings.TrimSpace(string(gossh.MarshalAuthorizedKey(sp))) + " " + comment
}

// staticLadder declares, in r's vhost, a ladder that stays as it is: a main
// queue dead-lettering to its DLQ, a 30 s wait tier dead-lettering back to
// the main queue, two messages in the main queue and three in the DLQ, no
// consumer. It returns once the management API shows those depths, every
// publish counted and no rate (the publishes' rates have decayed), so two
// UIs that read it a few seconds apart read the same.
func staticLadder(t *testing.T, r *rabbit.Resolved) {
	t.Helper()
	ch := brokertest.Channel(t, r, "test serve fixture")
	for _, q := range []struct {
		name string
		args amqp.Table
	}{
		{"orders.dlq", nil},
		{"orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"}},
		{"orders.wait.30s", amqp.Table{"x-message-ttl": int32(30000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders"}},
	} {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			t.Fatal(err)
		}
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"orders": 2, "orders.dlq": 3, "orders.wait.30s": 0}
	for q, n := range want {
		for i := range n {
			dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", q, false, false, amqp.Publishing{
				MessageId: fmt.Sprintf("%s-%d", q, i), DeliveryMode: amqp.Persistent, ContentType: "application/json",
				Body: []byte(fmt.Sprintf(`{"order":%d}`, i)), Headers: amqp.Table{"x-retry-count": int32(3)},
			})
			if err != nil {
				t.Fatal(err)
			}
			if !dc.Wait() {
				t.Fatal("publish not confirmed")
			}
		}
	}
	var last string
	deadline := time.Now().Add(screenWait)
	for {
		quiet, seen := queuesQuiet(r, want)
		if quiet {
			return
		}
		last = seen
		if time.Now().After(deadline) {
			t.Fatalf("the fixture's queues never showed their depths without rates in %v: %s", screenWait, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// queuesQuiet reports whether the management API shows every queue of want
// with its depth, its publishes all counted and every message rate 0, and
// what it showed.
func queuesQuiet(r *rabbit.Resolved, want map[string]int) (bool, string) {
	req, err := http.NewRequest(http.MethodGet, r.APIURL.String()+"/api/queues/"+url.PathEscape(r.Vhost)+"?columns=name,messages,message_stats", nil)
	if err != nil {
		return false, err.Error()
	}
	if err := r.SetAPIAuth(req); err != nil {
		return false, err.Error()
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	var qs []struct {
		Name     string                     `json:"name"`
		Messages *int                       `json:"messages"`
		Stats    map[string]json.RawMessage `json:"message_stats"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&qs); err != nil {
		return false, resp.Status + ": " + err.Error()
	}
	seen, ok := fmt.Sprint(qs), len(qs) == len(want)
	for _, q := range qs {
		n, known := want[q.Name]
		ok = ok && known && q.Messages != nil && *q.Messages == n
		// Every publish counted, so the rates cannot change again.
		var published int
		if n > 0 && (json.Unmarshal(q.Stats["publish"], &published) != nil || published != n) {
			ok = false
		}
		for k, v := range q.Stats {
			var d struct {
				Rate float64 `json:"rate"`
			}
			if strings.HasSuffix(k, "_details") && json.Unmarshal(v, &d) == nil && d.Rate != 0 {
				ok = false
				seen += fmt.Sprintf(" %s %s=%v", q.Name, k, d.Rate)
			}
		}
	}
	return ok, seen
}

// What legitimately differs between two sessions of one UI: the clock of
// the title line (each session read the broker at its own second) and
// ages ("2s ago"), which the fixture's screens should not show anyway.
var (
	maskClock = regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`)
	maskAge   = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|m|h|d)( \d+(s|m|h))? ago\b`)
	// Both footers offer the vhost switcher (v) where there is room.
	vhostHint = regexp.MustCompile(`(\x1b\[[0-9;]*m)*v(\x1b\[[0-9;]*m)* vhost • `)
)

func maskScreen(s string) string {
	return maskAge.ReplaceAllString(maskClock.ReplaceAllString(s, "hh:mm:ss"), "AGE ago")
}

// sameScreens compares the local and the SSH capture line for line, escapes
// included, after the masks; it returns the differing lines.
func sameScreens(local, remote string) []string {
	l := strings.Split(maskScreen(local), "\n")
	r := strings.Split(maskScreen(remote), "\n")
	var diff []string
	for i := range max(len(l), len(r)) {
		var a, b string
		if i < len(l) {
			a = l[i]
		}
		if i < len(r) {
			b = r[i]
		}
		if a != b {
			diff = append(diff, fmt.Sprintf("line %d:\n  local %q\n  ssh   %q", i+1, a, b))
		}
	}
	return diff
}

// sameScreensEventually waits for both panes to show the ladder at w×h
// cells and the same screen (each UI draws once it has read the broker;
// a resize reaches the SSH session a moment after the local one); it
// fails with both captures when they still differ after screenWait.
func sameScreensEventually(t *testing.T, local, remote *tmuxSession, w, h int, texts ...string) {
	t.Helper()
	shows := func(scr string) bool {
		plain := ansi.Strip(scr)
		if lines := strings.Split(strings.TrimSuffix(plain, "\n"), "\n"); len(lines) != h {
			return false
		}
		for _, x := range texts {
			if !strings.Contains(plain, x) {
				return false
			}
		}
		// The rule above the details pane spans the width.
		return strings.Contains(plain, strings.Repeat("─", w))
	}
	deadline := time.Now().Add(screenWait)
	for {
		l, r := local.screen(), remote.screen()
		diff := sameScreens(l, r)
		if shows(l) && shows(r) && len(diff) == 0 {
			if !vhostHint.MatchString(r) && w >= 200 {
				t.Errorf("the SSH session's footer at %d×%d does not offer the vhost switcher:\n%s", w, h, ansi.Strip(r))
			}
			if colour.MatchString(r) {
				t.Errorf("the SSH session of a --no-color server has colour escapes:\n%q", r)
			}
			return
		}
		if time.Now().After(deadline) {
			why := "the screens differ (masked: clock, ages):\n" + strings.Join(diff, "\n")
			if len(diff) == 0 {
				why = fmt.Sprintf("the panes never both showed %q across %d columns and %d lines", texts, w, h)
			}
			t.Fatalf("at %d×%d after %v %s\n--- local:\n%s\n--- ssh:\n%s", w, h, screenWait, why, ansi.Strip(l), ansi.Strip(r))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// listening is the server's line saying where it listens.
var listening = regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+) `)

// The local TUI and a session of ladder serve (system ssh -t, operator
// key, both --no-color) on one static ladder: the same screen at 80×24 and,
// after tmux resizes both windows, at 200×50; q ends the SSH session and a
// second one still gets the screen; SIGTERM ends that session with its
// reason and the server exits 0 saying "stopped".
func TestServeOverSSHInTmuxShowsTheLocalScreens(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: apt-get install tmux")
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no ssh client: apt-get install openssh-client")
	}
	r := vhostEnv(t)
	staticLadder(t, r)
	sv := startServeSSH(t, r)
	env, common, logb, srv, exited, sshCmd := sv.env, sv.common, sv.log, sv.cmd, sv.exited, sv.sshCmd
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = srv.Process.Kill()
			<-exited
		}
	})

	local := newTmux(t, "80", "24", env, common("local-audit.jsonl")...)
	remote := newTmuxShell(t, 80, 24, "ssh", sshCmd("ssh"))
	ladder := []string{"└─orders.dlq", "├─orders.wait.30s", "orders · main queue", "q quit"}
	sameScreensEventually(t, local, remote, 80, 24, ladder...)

	local.resize(200, 50)
	remote.resize(200, 50)
	sameScreensEventually(t, local, remote, 200, 50, append(ladder, "DEPTH TREND", "FINDINGS")...)

	// q ends the session: the ssh client exits 0, the server goes on.
	remote.keys("q")
	remote.waitLong("ssh-exited 0")
	eventually(t, screenWait, "disconnect line", func() bool {
		return regexp.MustCompile(`disconnect user="tester" .*: quit`).MatchString(logb.String())
	}, logb.String)
	select {
	case err := <-exited:
		stopped = true
		t.Fatalf("q in a session ended the server (%v):\n%s", err, logb.String())
	default:
	}
	again := newTmuxShell(t, 80, 24, "again", sshCmd("again"))
	again.waitLong(ladder...)

	// SIGTERM: the open session is told and ends, the server exits 0.
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("ladder serve after SIGTERM: %v\n%s", err, logb.String())
		}
	case <-time.After(screenWait):
		t.Fatalf("ladder serve did not stop on SIGTERM in %v:\n%s", screenWait, logb.String())
	}
	if log := logb.String(); !strings.Contains(log, "stopped") || !strings.Contains(log, "server stopping") {
		t.Errorf("the server's log does not tell of the stop:\n%s", log)
	}
	again.waitLong("the server is stopping: session ended", "again-exited 0")
	t.Logf("ladder serve's log:\n%s", logb.String())
}

// serveRun is a ladder serve of the test's vhost, in the background, with
// an operator key, and what a test needs to reach it the way a person does
// and to compare with the local TUI.
type serveRun struct {
	env    []string                 // the broker's variables, NO_COLOR
	common func(string) []string    // flags both the server and a local TUI take, with an audit log of that name
	log    *lockedBuf               // the server's stdout and stderr
	cmd    *exec.Cmd                // the server
	exited chan error               // its Wait, once it exits
	sshCmd func(what string) string // a shell line: ssh -t to the server, then "<what>-exited $?"
}

// startServeSSH starts ladder serve on 127.0.0.1 (a port it chooses), for one
// operator key, and waits for its listening line. The caller stops it (the
// cmd and exited fields).
func startServeSSH(t *testing.T, r *rabbit.Resolved) *serveRun {
	t.Helper()
	bin := ladderBinary(t)
	dir := t.TempDir()
	key, line := sshKeyPair(t, dir, "tester@ladder-test")
	keys := writeKeys(t, "role=operator "+line)
	cfg := brokertest.Config()
	sv := &serveRun{env: []string{"NO_COLOR=1", "LADDER_AMQP_URL=" + cfg.AMQPURL, "LADDER_API_URL=" + cfg.APIURL}, log: &lockedBuf{}, exited: make(chan error, 1)}
	if cfg.PrometheusURL != "" {
		sv.env = append(sv.env, "LADDER_PROMETHEUS_URL="+cfg.PrometheusURL)
	}
	// The same flags for both; no config file (a developer's contexts
	// would change the title and the switchers); a refresh that never
	// comes during the test, so each screen stays as first drawn.
	sv.common = func(audit string) []string {
		return []string{"--vhost", r.Vhost, "--no-color", "--refresh", "1h", "--config", filepath.Join(dir, "none.toml"),
			"--audit-log", filepath.Join(dir, audit)}
	}
	sv.cmd = exec.Command(bin, append([]string{"serve", "--ssh", "127.0.0.1:0", "--authorized-keys", keys,
		"--host-key", filepath.Join(dir, "hostkey", "ssh_host_ed25519_key")}, sv.common("serve-audit.jsonl")...)...)
	sv.cmd.Env = append(os.Environ(), sv.env...)
	sv.cmd.Stdout, sv.cmd.Stderr = sv.log, sv.log
	if err := sv.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { sv.exited <- sv.cmd.Wait() }()
	var gone error
	eventually(t, screenWait, "listening line", func() bool {
		select {
		case err := <-sv.exited:
			gone = err
			return true
		default:
		}
		return listening.MatchString(sv.log.String())
	}, sv.log.String)
	if !listening.MatchString(sv.log.String()) {
		t.Fatalf("ladder serve exited (%v):\n%s", gone, sv.log.String())
	}
	// The port the server chose (asking for port 0 leaves none to race for).
	port := listening.FindStringSubmatch(sv.log.String())[1]
	sv.sshCmd = func(what string) string {
		args := []string{"ssh", "-F", "/dev/null", "-t", "-p", port, "-i", key,
			"-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
			"-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "tester@127.0.0.1"}
		for i, a := range args {
			args[i] = shellQuote(a)
		}
		return strings.Join(args, " ") + "; echo " + what + "-exited $?; sleep 60"
	}
	return sv
}
