package sshserve

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/ui"
)

// Tests with Go's SSH client against a server on 127.0.0.1:0 whose
// sessions see the embedded simulation: no RabbitMQ needed.

// syncBuf is a goroutine-safe buffer that says when it grew.
type syncBuf struct {
	mu    sync.Mutex
	b     bytes.Buffer
	grown chan struct{}
}

func newSyncBuf() *syncBuf { return &syncBuf{grown: make(chan struct{}, 1)} }

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	select {
	case s.grown <- struct{}{}:
	default:
	}
	return n, err
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until cond holds for what the buffer holds, failing the
// test after d.
func (s *syncBuf) waitFor(t *testing.T, d time.Duration, what string, cond func(string) bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		if cond(s.String()) {
			return
		}
		select {
		case <-s.grown:
		case <-deadline.C:
			t.Fatalf("no %s after %v; got (plain):\n%s", what, d, tail(ansi.Strip(s.String()), 3000))
		}
	}
}

// waitText waits for every text in the output, escape sequences stripped.
func (s *syncBuf) waitText(t *testing.T, texts ...string) {
	t.Helper()
	s.waitFor(t, 10*time.Second, strings.Join(texts, " + "), func(out string) bool {
		plain := ansi.Strip(out)
		for _, x := range texts {
			if !strings.Contains(plain, x) {
				return false
			}
		}
		return true
	})
}

// waitAfter waits for text written after the last mark written.
func (s *syncBuf) waitAfter(t *testing.T, mark, text string) {
	t.Helper()
	s.waitFor(t, 10*time.Second, text+" after "+mark, func(out string) bool {
		plain := ansi.Strip(out)
		i := strings.LastIndex(plain, mark)
		return i >= 0 && strings.Contains(plain[i+len(mark):], text)
	})
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// counting counts the mutations that reach the broker.
type counting struct {
	broker.Client
	mutations atomic.Int32
}

func (c *counting) Move(ctx context.Context, req broker.MoveRequest, p func(broker.MoveProgress)) (*broker.MoveReport, error) {
	if !req.DryRun {
		c.mutations.Add(1)
	}
	return c.Client.Move(ctx, req, p)
}

func (c *counting) Publish(ctx context.Context, b []broker.Outgoing) ([]broker.Outcome, error) {
	c.mutations.Add(1)
	return c.Client.Publish(ctx, b)
}

func (c *counting) Drain(ctx context.Context, q string, limit int, h func(*broker.Message) (bool, error)) (int, error) {
	c.mutations.Add(1)
	return c.Client.Drain(ctx, q, limit, h)
}

type fixture struct {
	addr      string
	hostKey   gossh.PublicKey
	operator  gossh.Signer
	readOnly  gossh.Signer
	unknown   gossh.Signer
	log       *syncBuf
	audit     *syncBuf
	sim       *sim.Sim
	ro        *counting // what read-only sessions get
	keysPath  string
	cancel    context.CancelFunc
	served    chan error
	opened    atomic.Int32
	writeable bool // Open gives read-only sessions a client that is not read-only
}

func newSigner(t *testing.T) gossh.Signer {
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

func authorizedLine(opts string, s gossh.Signer, comment string) string {
	line := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey()))) + " " + comment
	if opts != "" {
		line = opts + " " + line
	}
	return line + "\n"
}

// start serves on 127.0.0.1:0 with an operator and a read-only key; mod
// changes the config first.
func start(t *testing.T, mod func(*Config)) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{operator: newSigner(t), readOnly: newSigner(t), unknown: newSigner(t), log: newSyncBuf(), audit: newSyncBuf()}
	f.keysPath = filepath.Join(dir, "authorized_keys")
	keys := "# ladder serve keys\n" + authorizedLine("role=operator", f.operator, "op@test") + "\n" + authorizedLine("", f.readOnly, "ro@test")
	if err := os.WriteFile(f.keysPath, []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.sim = sim.New(sim.Options{Seed: 3, Quiet: false, Now: func() time.Time { return now }, WarmUp: 10 * time.Minute})
	t.Cleanup(func() { f.sim.Close() })
	// A read-only session's client: the simulation made read-only (as
	// the CLI opens the live client with ReadOnly), counted underneath.
	roSim := sim.New(sim.Options{Seed: 3, Now: func() time.Time { return now }, WarmUp: 10 * time.Minute, ReadOnly: true})
	t.Cleanup(func() { roSim.Close() })
	f.ro = &counting{Client: roSim}
	cfg := Config{
		AuthorizedKeysPath: f.keysPath,
		HostKeyPath:        filepath.Join(dir, "data", HostKeyName),
		Log:                f.log,
		UI:                 ui.Options{Title: "ssh-test", NoColor: true},
		Open: func(_ context.Context, s Session, _ Want) (broker.Client, func(), error) {
			f.opened.Add(1)
			if s.ReadOnly() {
				if f.writeable {
					return &counting{Client: f.sim}, func() {}, nil
				}
				return f.ro, func() {}, nil
			}
			c := gate.New(f.sim, gate.Options{Principal: s.Principal(""), Broker: "sim", Log: gate.NewLog(f.audit)})
			return c, func() {}, nil
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = l.Addr().String()
	f.hostKey = srv.hostKey.PublicKey()
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.served = make(chan error, 1)
	go func() { f.served <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-f.served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("the server did not stop")
		}
	})
	return f
}

func (f *fixture) dial(user string, auth ...gossh.AuthMethod) (*gossh.Client, error) {
	return gossh.Dial("tcp", f.addr, &gossh.ClientConfig{
		User: user, Auth: auth,
		HostKeyCallback: gossh.FixedHostKey(f.hostKey),
		Timeout:         10 * time.Second,
	})
}

// term is a session with a pty: what it wrote, and its keyboard.
type term struct {
	sess *gossh.Session
	out  *syncBuf
	in   io.WriteCloser
	done chan error
}

func (f *fixture) shell(t *testing.T, c *gossh.Client, w, h int) *term {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	tm := &term{sess: sess, out: newSyncBuf(), done: make(chan error, 1)}
	sess.Stdout, sess.Stderr = tm.out, tm.out
	if tm.in, err = sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", h, w, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	go func() { tm.done <- sess.Wait() }()
	return tm
}

func (tm *term) keys(t *testing.T, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := io.WriteString(tm.in, k); err != nil {
			t.Fatal(err)
		}
	}
}

func (tm *term) wait(t *testing.T, log *syncBuf) error {
	t.Helper()
	select {
	case err := <-tm.done:
		return err
	case <-time.After(20 * time.Second):
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		os.WriteFile("/tmp/serve-stacks.txt", buf[:n], 0o600)
		t.Fatalf("the session did not end; server log:\n%s\nits screen:\n%s", log, tail(ansi.Strip(tm.out.String()), 1500))
		return nil
	}
}

const (
	keyDown  = "\x1b[B"
	keyEnter = "\r"
)

// toDLQ selects orders.dlq on the home screen with the filter. Keys are
// handled in order, so the next key acts on that row; the filter's text
// is not waited for (the renderer may draw it in pieces).
func (tm *term) toDLQ(t *testing.T) {
	t.Helper()
	tm.keys(t, "/", sim.OrdersDLQ, keyEnter)
}

func TestUnknownKeyIsRefused(t *testing.T) {
	f := start(t, nil)
	_, err := f.dial("mallory", gossh.PublicKeys(f.unknown))
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("unknown key: %v, want refused", err)
	}
	fp := gossh.FingerprintSHA256(f.unknown.PublicKey())
	f.log.waitFor(t, 5*time.Second, "refused key log line", func(s string) bool {
		return strings.Contains(s, "refused key "+fp) && strings.Contains(s, `user="mallory"`)
	})
	if f.opened.Load() != 0 {
		t.Error("a broker client was opened for an unknown key")
	}
	// The log names keys by fingerprint, never by their material.
	pub := strings.Fields(string(gossh.MarshalAuthorizedKey(f.unknown.PublicKey())))[1]
	if strings.Contains(f.log.String(), pub) {
		t.Error("the log holds key material")
	}
}

func TestPasswordAndKeyboardInteractiveAreRefused(t *testing.T) {
	f := start(t, nil)
	asked := false
	_, err := f.dial("alice",
		gossh.Password("guest"),
		gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) {
			asked = true
			return nil, nil
		}))
	if err == nil {
		t.Fatal("a password login was let in")
	}
	if asked {
		t.Error("the server asked keyboard-interactive questions")
	}
	if strings.Contains(f.log.String(), "guest") {
		t.Error("the log holds the password")
	}
	f.log.waitFor(t, 5*time.Second, "failed connection log line", func(s string) bool { return strings.Contains(s, "failed") })
}

// A read-only key gets the ladders, marked read-only, and no key opens
// the move dialog; nothing reaches the broker's mutations.
func TestReadOnlyKeyCannotOpenTheMoveDialog(t *testing.T) {
	f := start(t, nil)
	c, err := f.dial("bob", gossh.PublicKeys(f.readOnly))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tm := f.shell(t, c, 80, 24)
	tm.out.waitText(t, "LADDERS", "read-only")
	tm.toDLQ(t)
	// Every mutating key on the DLQ's row, then in its browser: m (move),
	// u (unblock), R (replay), a and space (marks), M for good measure.
	tm.keys(t, "m", "u", "R", "M")
	tm.keys(t, keyEnter) // open orders.dlq
	tm.out.waitText(t, "peeked")
	tm.keys(t, "a", " ", "m", "R", "u", "?")
	tm.out.waitText(t, "Keys: queue browser (read-only") // every key before ? has been handled
	if plain := ansi.Strip(tm.out.String()); strings.Contains(plain, "Move / re-publish") || strings.Contains(plain, "marked") {
		t.Fatalf("a read-only session reached the move path:\n%s", tail(plain, 2000))
	}
	if n := f.ro.mutations.Load(); n != 0 {
		t.Errorf("%d mutations reached the broker", n)
	}
	tm.keys(t, "q")
	if err := tm.wait(t, f.log); err != nil {
		t.Errorf("q: %v, want a clean exit", err)
	}
	fp := gossh.FingerprintSHA256(f.readOnly.PublicKey())
	f.log.waitFor(t, 5*time.Second, "connect and disconnect lines", func(s string) bool {
		return strings.Contains(s, `connect user="bob" key=`+fp) && strings.Contains(s, "role=read-only") &&
			strings.Contains(s, `disconnect user="bob" key=`+fp) && strings.Contains(s, ": quit")
	})
}

// The gate of a read-only session's principal refuses every mutation
// whatever the UI sends, on a client that would take them.
func TestReadOnlyClientRefusesMutations(t *testing.T) {
	s := sim.New(sim.Options{Seed: 3, WarmUp: time.Minute})
	defer s.Close()
	c := &counting{Client: s}
	g := gate.New(c, gate.Options{Principal: Session{User: "bob", Role: RoleReadOnly}.Principal("")})
	ctx := context.Background()
	if !g.ReadOnly() {
		t.Error("not read-only")
	}
	if _, err := g.Move(ctx, broker.MoveRequest{From: sim.OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}}, nil); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("move: %v", err)
	}
	if _, err := g.Publish(ctx, nil); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("publish: %v", err)
	}
	if _, err := g.Drain(ctx, sim.OrdersDLQ, 1, nil); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("drain: %v", err)
	}
	if n := c.mutations.Load(); n != 0 {
		t.Errorf("%d mutations reached the client", n)
	}
}

// A read-only session whose factory gave a client that may change the
// broker is refused.
func TestReadOnlySessionNeedsAReadOnlyClient(t *testing.T) {
	f := start(t, nil)
	f.writeable = true
	c, err := f.dial("bob", gossh.PublicKeys(f.readOnly))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tm := f.shell(t, c, 80, 24)
	if err := tm.wait(t, f.log); err == nil {
		t.Error("exit 0, want a refusal")
	}
	if out := tm.out.String(); !strings.Contains(out, "cannot give a read-only session") || strings.Contains(ansi.Strip(out), "LADDERS") {
		t.Errorf("output %q", out)
	}
}

// An operator key moves, and the audit lines name the SSH user and the
// key's fingerprint.
func TestOperatorMovesAndTheAuditNamesThem(t *testing.T) {
	f := start(t, nil)
	c, err := f.dial("alice", gossh.PublicKeys(f.operator))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tm := f.shell(t, c, 100, 30)
	tm.out.waitText(t, "LADDERS")
	tm.toDLQ(t)
	tm.keys(t, "m")
	tm.out.waitText(t, "Move / re-publish from "+sim.OrdersDLQ)
	tm.keys(t, keyEnter)
	tm.out.waitText(t, "Confirm move")
	tm.keys(t, "y")
	tm.out.waitText(t, "Summary")
	tm.keys(t, keyEnter)
	tm.out.waitAfter(t, "Summary", "q quit")
	tm.keys(t, "q")
	if err := tm.wait(t, f.log); err != nil {
		t.Errorf("q: %v", err)
	}
	fp := gossh.FingerprintSHA256(f.operator.PublicKey())
	var phases []string
	for _, line := range strings.Split(strings.TrimSpace(f.audit.String()), "\n") {
		var ev broker.AuditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if ev.SSHUser != "alice" || ev.SSHKey != fp {
			t.Errorf("audit line names %q %q, want alice %s: %s", ev.SSHUser, ev.SSHKey, fp, line)
		}
		phases = append(phases, ev.Action+" "+ev.Phase)
	}
	if strings.Join(phases, ",") != "move start,move done" {
		t.Errorf("audit phases %q", phases)
	}
	if !strings.Contains(f.audit.String(), `"ssh_key":"SHA256:`) {
		t.Errorf("audit %s", f.audit.String())
	}
}

func TestParseAuthorizedKeys(t *testing.T) {
	a, b := newSigner(t), newSigner(t)
	ka := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(a.PublicKey())))
	kb := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(b.PublicKey())))
	ak, err := ParseAuthorizedKeys([]byte("# team\n\n" + `role=operator,contexts="prod,staging" ` + ka + " alice@laptop\n" + kb + " bob\n"))
	if err != nil {
		t.Fatal(err)
	}
	k, ok := ak.Lookup(a.PublicKey())
	if !ok || k.Role != RoleOperator || strings.Join(k.Contexts, ",") != "prod,staging" || k.Comment != "alice@laptop" || k.Line != 3 || !strings.HasPrefix(k.Fingerprint, "SHA256:") {
		t.Errorf("alice %+v %v", k, ok)
	}
	if k, ok := ak.Lookup(b.PublicKey()); !ok || k.Role != RoleReadOnly || len(k.Contexts) != 0 {
		t.Errorf("bob %+v %v", k, ok)
	}
	for _, bad := range []struct{ text, want string }{
		{"role=admin " + ka, `role "admin"`},
		{`from="10.0.0.0/8" ` + ka, `unknown option "from"`},
		{"role=operator,role=read-only " + ka, "given twice"},
		{ka + "\n" + "role=operator " + ka, "also on line 1"},
		{"not a key", "line 1"},
		{"# nothing\n", "no key"},
	} {
		if _, err := ParseAuthorizedKeys([]byte(bad.text)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.text, err, bad.want)
		}
	}
}

func TestHostKeyIsMadeOnceAndKeptPrivate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d", HostKeyName)
	s1, created, err := LoadOrCreateHostKey(p)
	if err != nil || !created {
		t.Fatalf("first: %v %v", created, err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
	s2, created, err := LoadOrCreateHostKey(p)
	if err != nil || created || !bytes.Equal(s1.PublicKey().Marshal(), s2.PublicKey().Marshal()) {
		t.Fatalf("second: created %v, %v, same %v", created, err, bytes.Equal(s1.PublicKey().Marshal(), s2.PublicKey().Marshal()))
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateHostKey(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a key others may read: %v", err)
	}
}

// One session more than MaxSessions is refused with one line; a session
// idle past IdleTimeout ends, saying so.
func TestMaxSessionsAndIdleTimeout(t *testing.T) {
	f := start(t, func(c *Config) { c.MaxSessions = 1; c.IdleTimeout = 2 * time.Second })
	c, err := f.dial("bob", gossh.PublicKeys(f.readOnly))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := f.shell(t, c, 80, 24)
	first.out.waitText(t, "LADDERS")
	second := f.shell(t, c, 80, 24)
	if err := second.wait(t, f.log); err == nil {
		t.Error("a second session: exit 0, want a refusal")
	}
	if out := second.out.String(); !strings.Contains(out, "most sessions open (1)") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("second session: %q", out)
	}
	// The first, left alone (its screen still refreshing), ends idle.
	first.wait(t, f.log)
	if !strings.Contains(first.out.String(), "no key pressed for 2s: session ended") {
		t.Errorf("idle: %q", tail(first.out.String(), 200))
	}
	f.log.waitFor(t, 5*time.Second, "idle disconnect", func(s string) bool { return strings.Contains(s, ": idle") && strings.Contains(s, "(the most)") })
}

// Stopping the server ends its open sessions cleanly, each told why.
func TestStopEndsOpenSessions(t *testing.T) {
	f := start(t, nil)
	c, err := f.dial("alice", gossh.PublicKeys(f.operator))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tm := f.shell(t, c, 80, 24)
	tm.out.waitText(t, "LADDERS")
	f.cancel()
	tm.wait(t, f.log)
	if !strings.Contains(tm.out.String(), "the server is stopping: session ended") {
		t.Errorf("stop: %q", tail(tm.out.String(), 200))
	}
	select {
	case err := <-f.served:
		f.served <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	f.log.waitFor(t, time.Second, "stopped", func(s string) bool {
		return strings.Contains(s, "server stopping") && strings.Contains(s, "stopped")
	})
}

// blockingMover is a broker whose moves run until they are stopped: a move
// in flight when the server stops or the connection drops.
type blockingMover struct {
	broker.Client
	started chan struct{}
}

func (b *blockingMover) Move(ctx context.Context, req broker.MoveRequest, _ func(broker.MoveProgress)) (*broker.MoveReport, error) {
	if req.DryRun {
		return b.Client.Move(ctx, req, nil)
	}
	close(b.started)
	<-ctx.Done()
	return broker.NewMoveReport(req), ctx.Err()
}

// A move running in a session stops as Ctrl+C stops it — when the server
// stops (SIGTERM) and when the SSH connection drops — and its audit line
// is written, naming who ran it.
func TestAMoveInASessionStopsWithItsAuditLine(t *testing.T) {
	for _, how := range []string{"server stops", "connection drops"} {
		t.Run(how, func(t *testing.T) {
			var mover *blockingMover
			var f *fixture // set before any session opens
			f = start(t, func(c *Config) {
				c.Open = func(_ context.Context, s Session, w Want) (broker.Client, func(), error) {
					mover = &blockingMover{Client: f.sim, started: make(chan struct{})}
					return gate.New(mover, gate.Options{Principal: s.Principal(""), Broker: "sim", Log: gate.NewLog(f.audit), Busy: w.Busy}), func() {}, nil
				}
			})
			c, err := f.dial("bob", gossh.PublicKeys(f.operator))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			tm := f.shell(t, c, 100, 30)
			tm.out.waitText(t, "LADDERS")
			tm.toDLQ(t)
			tm.keys(t, "m")
			tm.out.waitText(t, "Move / re-publish from "+sim.OrdersDLQ)
			tm.keys(t, keyEnter)
			tm.out.waitText(t, "Confirm move")
			tm.keys(t, "y")
			select {
			case <-mover.started:
			case <-time.After(20 * time.Second):
				t.Fatalf("the move did not start; screen:\n%s", tail(ansi.Strip(tm.out.String()), 1500))
			}
			if how == "server stops" {
				f.cancel()
			} else {
				c.Close()
			}
			f.audit.waitFor(t, 20*time.Second, "the move's done line", func(s string) bool { return strings.Count(s, "\n") >= 2 })
			var phases []string
			for _, line := range strings.Split(strings.TrimSpace(f.audit.String()), "\n") {
				var ev broker.AuditEvent
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("audit line %q: %v", line, err)
				}
				if ev.SSHUser != "bob" || ev.SSHKey != gossh.FingerprintSHA256(f.operator.PublicKey()) {
					t.Errorf("audit line names %q %q: %s", ev.SSHUser, ev.SSHKey, line)
				}
				phases = append(phases, ev.Phase)
				if ev.Phase == "done" && ev.Error == "" {
					t.Errorf("the stopped move's done line says no error: %s", line)
				}
			}
			if strings.Join(phases, ",") != "start,done" {
				t.Errorf("audit phases %q", phases)
			}
		})
	}
}

// A session's vhost switcher opens its clients through Open, for the
// vhost chosen; a read-only key's must be read-only like its first (a
// writable one is refused, on the switcher's screen), and every client
// opened is closed when the session ends.
func TestSessionVhostSwitcherOpensThroughOpen(t *testing.T) {
	var (
		mu     sync.Mutex
		asked  []string
		closed int
	)
	var f *fixture
	f = start(t, func(c *Config) {
		c.Open = func(_ context.Context, s Session, w Want) (broker.Client, func(), error) {
			mu.Lock()
			asked = append(asked, w.Vhost)
			mu.Unlock()
			done := func() { mu.Lock(); closed++; mu.Unlock() }
			if len(asked) > 2 {
				return &counting{Client: f.sim}, done, nil // writable: refused
			}
			return f.ro, done, nil
		}
	})
	c, err := f.dial("bob", gossh.PublicKeys(f.readOnly))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tm := f.shell(t, c, 80, 24)
	tm.out.waitText(t, "LADDERS", "read-only")
	tm.keys(t, "v")
	tm.out.waitText(t, "Switch vhost", "* "+sim.VhostName)
	tm.keys(t, keyEnter)
	tm.out.waitAfter(t, "Switch vhost", "LADDERS") // back home on the new client
	tm.keys(t, "v")
	tm.out.waitAfter(t, "LADDERS", "Switch vhost")
	tm.keys(t, keyEnter)
	tm.out.waitText(t, "cannot give a read-only session")
	tm.keys(t, "\x1b") // the switcher's esc: back home, on the client it had
	tm.out.waitAfter(t, "cannot give a read-only session", "LADDERS")
	tm.keys(t, "q")
	if err := tm.wait(t, f.log); err != nil {
		t.Errorf("q: %v, want a clean exit", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"", sim.VhostName, sim.VhostName}; !slices.Equal(asked, want) {
		t.Errorf("Open asked for vhosts %q, want %q", asked, want)
	}
	if closed != 3 {
		t.Errorf("%d of the session's 3 clients closed when it ended", closed)
	}
	if n := f.ro.mutations.Load(); n != 0 {
		t.Errorf("%d mutations reached the broker", n)
	}
}
