package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/sim"
)

// ladder serve on the embedded simulation, reached with Go's SSH client.

// lockedBuf is a buffer written by the server's goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// eventually polls cond (every 10ms) until it holds or d has passed.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool, show func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v:\n%s", what, d, show())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func serveSigner(t *testing.T) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serving is a ladder serve running on the simulation.
type serving struct {
	addr, hostKeyFP string
	// metrics is the URL of /metrics with --metrics.
	metrics string
	stderr  *lockedBuf
	stop    func() error

	mu      sync.Mutex
	clients []*simClient // every client the server made, in order
}

// snapshotsBy counts the snapshots asked of the clients made for purpose,
// and how many such clients there were.
func (sv *serving) snapshotsBy(purpose string) (snapshots, clients int) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	for _, c := range sv.clients {
		if c.purpose == purpose {
			snapshots += int(c.snapshots.Load())
			clients++
		}
	}
	return snapshots, clients
}

// readOnlySim is the simulation as a read-only configuration's client
// sees it (the server refuses its mutations itself).
type readOnlySim struct{ *sim.Sim }

func (readOnlySim) ReadOnly() bool { return true }

// simClient is one client the server made on the simulation, counting
// the snapshots asked of it.
type simClient struct {
	broker.Client
	purpose   string
	cfg       rabbit.Config
	snapshots atomic.Int32
}

func (c *simClient) Snapshot(ctx context.Context) (*broker.Snapshot, error) {
	c.snapshots.Add(1)
	return c.Client.Snapshot(ctx)
}

// Close leaves the simulation to the test: every client shares it (the
// UI closes the client a vhost switch leaves).
func (c *simClient) Close() error { return nil }

// startServe runs ladder with args (serve …) on s until stop; the
// simulation is read-only for a read-only configuration, as the live
// client is.
func startServe(t *testing.T, s *sim.Sim, args ...string) *serving {
	t.Helper()
	return startServeOn(t, s, readOnlySim{s}, args...)
}

// startServeOn is startServe on any client: c, and ro for a read-only
// configuration.
func startServeOn(t *testing.T, c, ro broker.Client, args ...string) *serving {
	t.Helper()
	errb := &lockedBuf{}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: errb, build: Build{Version: "dev"}}
	sv := &serving{stderr: errb}
	a.connect = func(cfg rabbit.Config, purpose string) (broker.Client, func(), error) {
		sc := &simClient{Client: c, purpose: purpose, cfg: cfg}
		if cfg.ReadOnly {
			sc.Client = ro
		}
		sv.mu.Lock()
		sv.clients = append(sv.clients, sc)
		sv.mu.Unlock()
		return sc, func() {}, nil
	}
	t.Cleanup(a.closeAudit)
	root := newRootCmd(a)
	if c, _, err := root.Find([]string{"serve"}); err != nil || c == root {
		root.AddCommand(newServeCmd(a)) // until root.go registers it
	}
	root.SetArgs(args)
	ctx, cancel := context.WithCancel(context.Background())
	a.ctx = ctx
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	sv.stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("ladder serve did not stop")
			return nil
		}
	}
	t.Cleanup(func() { cancel() })
	if slices.Contains(args, "--metrics") {
		metricsOn := regexp.MustCompile(`metrics on (http://\S+)`)
		eventually(t, 10*time.Second, "metrics line", func() bool { return metricsOn.MatchString(errb.String()) }, errb.String)
		sv.metrics = metricsOn.FindStringSubmatch(errb.String())[1]
		if !slices.Contains(args, "--ssh") {
			return sv
		}
	}
	listening := regexp.MustCompile(`listening on (\S+) \(host key (SHA256:\S+)\)`)
	eventually(t, 10*time.Second, "listening line", func() bool { return listening.MatchString(errb.String()) }, errb.String)
	m := listening.FindStringSubmatch(errb.String())
	sv.addr, sv.hostKeyFP = m[1], m[2]
	return sv
}

// screen logs in with key as user and runs keys through a session of
// the UI: each step's keys are sent, then its text waited for, written
// after the previous step's; it returns what the session wrote.
func (sv *serving) screen(t *testing.T, user string, key gossh.Signer, steps ...[2]string) string {
	t.Helper()
	c, err := gossh.Dial("tcp", sv.addr, &gossh.ClientConfig{
		User: user, Auth: []gossh.AuthMethod{gossh.PublicKeys(key)},
		HostKeyCallback: func(_ string, _ net.Addr, k gossh.PublicKey) error {
			if fp := gossh.FingerprintSHA256(k); fp != sv.hostKeyFP {
				t.Errorf("host key %s, logged %s", fp, sv.hostKeyFP)
			}
			return nil
		},
		Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out := &lockedBuf{}
	sess.Stdout, sess.Stderr = out, out
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { _ = sess.Wait(); close(ended) }()
	plain := func() string { return ansi.Strip(out.String()) }
	from := 0
	for _, st := range steps {
		if st[0] != "" {
			if _, err := io.WriteString(in, st[0]); err != nil {
				t.Fatal(err)
			}
		}
		if st[1] != "" {
			eventually(t, 10*time.Second, st[1], func() bool {
				i := strings.Index(plain()[from:], st[1])
				if i >= 0 {
					from += i + len(st[1])
				}
				return i >= 0
			}, plain)
		}
	}
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatalf("the session did not end:\n%s", plain())
	}
	return plain()
}

func writeKeys(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func keyLine(opts string, s gossh.Signer, comment string) string {
	l := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey()))) + " " + comment
	if opts != "" {
		l = opts + " " + l
	}
	return l
}

func TestServeRefusesBadSetups(t *testing.T) {
	s := newSim(t)
	op := serveSigner(t)
	keys := writeKeys(t, keyLine("role=operator", op, "alice"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "--authorized-keys"},
		{[]string{"serve", "--authorized-keys", filepath.Join(t.TempDir(), "none")}, "no such file"},
		{[]string{"serve", "--authorized-keys", writeKeys(t, "role=admin "+strings.TrimSpace(string(gossh.MarshalAuthorizedKey(op.PublicKey()))))}, `role "admin"`},
		{[]string{"serve", "--authorized-keys", keys}, "operator keys need an audit log"},
		{[]string{"serve", "--authorized-keys", keys, "--max-sessions", "0", "--audit-log", filepath.Join(t.TempDir(), "a")}, "--max-sessions 0"},
	} {
		var out, errb bytes.Buffer
		a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, build: Build{Version: "dev"}}
		a.connect = func(rabbit.Config, string) (broker.Client, func(), error) { return s, func() {}, nil }
		root := newRootCmd(a)
		if c, _, err := root.Find([]string{"serve"}); err != nil || c == root {
			root.AddCommand(newServeCmd(a))
		}
		root.SetArgs(tc.args)
		err := root.Execute()
		a.closeAudit()
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: exit %d %v, want a usage error naming %q", tc.args, exitCode(err), err, tc.want)
		}
	}
}

// A read-only key sees the ladders read-only; an operator key moves, its
// audit lines naming the SSH user and key; a key limited to other
// contexts is refused; the host key is made once, 0600, and kept.
func TestServeSessionsOnTheSimulation(t *testing.T) {
	s := newSim(t)
	op, viewer, elsewhere := serveSigner(t), serveSigner(t), serveSigner(t)
	keys := writeKeys(t,
		"# the team",
		keyLine("role=operator", op, "alice@laptop"),
		keyLine("", viewer, "bob@laptop"),
		keyLine(`role=operator,contexts="prod,staging"`, elsewhere, "carol@laptop"),
	)
	dir := t.TempDir()
	hostKey := filepath.Join(dir, "data", "host_key")
	audit := filepath.Join(dir, "audit.jsonl")
	args := []string{"serve", "--ssh", "127.0.0.1:0", "--authorized-keys", keys, "--host-key", hostKey, "--audit-log", audit, "--no-color"}
	sv := startServe(t, s, args...)

	// bob switches vhost (to the one he is in: the simulation has one).
	out := sv.screen(t, "bob", viewer, [2]string{"", "read-only"}, [2]string{"", "LADDERS"},
		[2]string{"v", "Switch vhost"}, [2]string{"\r", "switched to vhost"}, [2]string{"q", ""})
	if strings.Contains(out, "m move/re-publish") {
		t.Error("the read-only session offers moving")
	}
	sv.screen(t, "alice", op,
		[2]string{"", "LADDERS"},
		// Keys are handled in order: the filter has selected the DLQ
		// when m is read (its text is not waited for: the renderer may
		// draw it in pieces).
		[2]string{"/" + sim.OrdersDLQ + "\rm", "Move / re-publish from " + sim.OrdersDLQ},
		[2]string{"\r", "Confirm move"},
		[2]string{"y", "Summary"},
		[2]string{"\r", "q quit"}, // the summary closed
		[2]string{"q", ""},
	)
	out = sv.screen(t, "carol", elsewhere, [2]string{"", ""})
	if !strings.Contains(out, "your key is limited to contexts") {
		t.Errorf("a key limited to other contexts: %q", out)
	}
	// Every screen was read by the one snapshot reader of the vhost
	// (bob's switch to "/" is to the vhost "" already named), none by a
	// session's own clients (sshserve.SnapshotShare).
	if n, c := sv.snapshotsBy("serve snapshots"); n == 0 || c != 1 {
		t.Errorf("the snapshot reader: %d clients, %d snapshots (want 1 client reading)", c, n)
	}
	for user, clients := range map[string]int{"bob": 2, "alice": 1} {
		if n, c := sv.snapshotsBy("serve " + user); n != 0 || c != clients {
			t.Errorf("%s's session: %d clients read %d snapshots themselves (want %d clients, none)", user, c, n, clients)
		}
	}
	if err := sv.stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}

	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	fp := gossh.FingerprintSHA256(op.PublicKey())
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit:\n%s", b)
	}
	for _, l := range lines {
		var ev broker.AuditEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Action != "move" || ev.SSHUser != "alice" || ev.SSHKey != fp {
			t.Errorf("audit line %s: want a move by alice %s", l, fp)
		}
	}
	log := sv.stderr.String()
	for _, want := range []string{
		`connect user="bob" key=` + gossh.FingerprintSHA256(viewer.PublicKey()) + ` name="bob@laptop" role=read-only`,
		`connect user="alice" key=` + fp + ` name="alice@laptop" role=operator`,
		`disconnect user="carol"`, "stopped",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("server log lacks %q:\n%s", want, log)
		}
	}

	st, err := os.Stat(hostKey)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("host key: %v %v", st, err)
	}
	first := sv.hostKeyFP
	sv = startServe(t, s, args...)
	if sv.hostKeyFP != first {
		t.Errorf("host key %s after a restart, was %s", sv.hostKeyFP, first)
	}
	if err := sv.stop(); err != nil {
		t.Fatal(err)
	}
}

// clientsBy is the clients the server made for purpose, in order.
func (sv *serving) clientsBy(purpose string) []*simClient {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	var out []*simClient
	for _, c := range sv.clients {
		if c.purpose == purpose {
			out = append(out, c)
		}
	}
	return out
}

// A session switches among the contexts its key may see (x): it starts
// in the served one when its key allows, else in the key's first; each
// context's clients are made from that context's configuration (its
// password from its file or variable, never a prompt; read-only when the
// context is), and a move is audited in that context's log, naming the
// context and the SSH user.
func TestServeSessionsSwitchContexts(t *testing.T) {
	s := newSim(t)
	dir := t.TempDir()
	prodPW := filepath.Join(dir, "prod.password")
	if err := os.WriteFile(prodPW, []byte("s3cret-prod\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LADDER_TEST_STAGE_PW", "s3cret-stage")
	t.Setenv("LADDER_TEST_LAB_PW", "s3cret-lab")
	config := filepath.Join(dir, "config.toml")
	toml := `current-context = "staging"

[contexts.staging]
amqp-url = "amqp://stage@127.0.0.1:1/"
api-url = "http://127.0.0.1:1"
password-env = "LADDER_TEST_STAGE_PW"
audit-log = "` + filepath.Join(dir, "staging.jsonl") + `"

[contexts.prod]
amqp-url = "amqp://ops@127.0.0.2:1/"
api-url = "http://127.0.0.2:1"
password-file = "` + prodPW + `"
audit-log = "` + filepath.Join(dir, "prod.jsonl") + `"

[contexts.lab]
amqp-url = "amqp://lab@127.0.0.3:1/"
api-url = "http://127.0.0.3:1"
password-env = "LADDER_TEST_LAB_PW"
read-only = true
`
	if err := os.WriteFile(config, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	op, viewer := serveSigner(t), serveSigner(t)
	keys := writeKeys(t,
		keyLine(`role=operator,contexts="prod,lab"`, op, "alice@laptop"),
		keyLine("", viewer, "bob@laptop"),
	)
	for _, env := range []string{"LADDER_AMQP_URL", "LADDER_API_URL", "LADDER_CONTEXT", "LADDER_AUDIT_LOG"} {
		t.Setenv(env, "")
	}
	sv := startServe(t, s, "serve", "--ssh", "127.0.0.1:0", "--authorized-keys", keys,
		"--host-key", filepath.Join(dir, "host_key"), "--config", config, "--no-color")

	// bob may see every context; he starts in the served one.
	sv.screen(t, "bob", viewer, [2]string{"", "staging"}, [2]string{"", "LADDERS"},
		[2]string{"x", "Switch context"}, [2]string{"", "lab"}, [2]string{"", "prod"}, [2]string{"", "* staging"},
		[2]string{"\x1b", "LADDERS"}, [2]string{"q", ""})

	// alice may see prod and lab: she starts in prod, moves there, then
	// switches to lab (read-only).
	out := sv.screen(t, "alice", op, [2]string{"", "prod"}, [2]string{"", "LADDERS"},
		[2]string{"/" + sim.OrdersDLQ + "\rm", "Move / re-publish from " + sim.OrdersDLQ},
		[2]string{"\r", "Confirm move"},
		[2]string{"y", "Summary"},
		[2]string{"\r", "q quit"},
		[2]string{"x", "Switch context"},
		[2]string{"k\r", "read-only"},
		[2]string{"q", ""},
	)
	if i := strings.LastIndex(out, "Switch context"); strings.Contains(out[i:], "staging") {
		t.Errorf("alice's context switcher offers staging:\n%s", out[i:])
	}
	if err := sv.stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}

	alice := sv.clientsBy("serve alice")
	if len(alice) != 2 {
		t.Fatalf("alice's session made %d clients, want 2 (prod, then lab)", len(alice))
	}
	if c := alice[0].cfg; !strings.Contains(c.AMQPURL, "127.0.0.2") || cfgPassword(t, c) != "s3cret-prod" || c.ReadOnly {
		t.Errorf("alice's first client: %s read-only %v password %v, want prod's", c.AMQPURL, c.ReadOnly, cfgPassword(t, c) == "s3cret-prod")
	}
	if c := alice[1].cfg; !strings.Contains(c.AMQPURL, "127.0.0.3") || cfgPassword(t, c) != "s3cret-lab" || !c.ReadOnly {
		t.Errorf("alice's second client: %s read-only %v password %v, want lab's, read-only", c.AMQPURL, c.ReadOnly, cfgPassword(t, c) == "s3cret-lab")
	}
	var readers []string
	for _, c := range sv.clientsBy("serve snapshots") {
		readers = append(readers, c.cfg.AMQPURL)
	}
	if len(readers) != 3 {
		t.Errorf("snapshot readers of %q, want one for each of staging, prod and lab", readers)
	}
	b, err := os.ReadFile(filepath.Join(dir, "prod.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, l := range lines {
		var ev broker.AuditEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Action != "move" || ev.Context != "prod" || ev.SSHUser != "alice" {
			t.Errorf("prod's audit line %s: want alice's move in prod", l)
		}
	}
	if len(lines) != 2 {
		t.Errorf("prod's audit log:\n%s", b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "staging.jsonl")); err == nil && strings.Contains(string(b), "alice") {
		t.Errorf("staging's audit log names alice:\n%s", b)
	}
	if strings.Contains(sv.stderr.String(), "s3cret") {
		t.Errorf("a password in the server's log:\n%s", sv.stderr.String())
	}
}
