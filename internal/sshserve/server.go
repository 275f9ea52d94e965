// Package sshserve serves ladder's terminal UI over SSH (ladder serve
// --ssh): one ladder on a bastion holds the broker's credentials, and
// each person connects with their own SSH key and gets the same TUI in
// their own terminal, with what their key's role allows, every action
// audited under their name.
//
// Authentication is by public key only, against an authorized-keys file
// (see ParseAuthorizedKeys); the host key is generated once and kept
// (LoadOrCreateHostKey). Each session is its own UI program with its own
// size, colour profile and broker client, which the caller's Config.Open
// makes; the package knows nothing of flags or config files.
package sshserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/ssh"
	"charm.land/wish/v2"
	gossh "golang.org/x/crypto/ssh"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/files"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/ui"
)

// DefaultAddr is where the server listens unless told otherwise: this host
// only.
const DefaultAddr = "127.0.0.1:2222"

// DefaultMaxSessions bounds the sessions open at once when
// Config.MaxSessions is 0.
const DefaultMaxSessions = 20

// handshakeTimeout bounds a connection that has not authenticated.
const handshakeTimeout = 30 * time.Second

// stopGrace bounds how long a stopping server waits for its sessions to
// end: a move in one stops after its batch in flight (the UI waits up to
// a minute for that), then the connections are closed.
const stopGrace = 75 * time.Second

// Session is who a session is: what Config.Open makes a client for.
type Session struct {
	// User is the SSH user name the client gave (not checked against
	// anything: the key is the identity).
	User string
	// Fingerprint is the key's SHA256:… fingerprint.
	Fingerprint string
	// Name is the key's comment in the authorized-keys file.
	Name string
	Role Role
	// Contexts are the contexts the key may see (none: any).
	Contexts []string
	// Remote is the client's address.
	Remote string
}

// Want is what a session asks Open for: a vhost of a context; "" is the
// server's (its context; that context's vhost).
type Want struct {
	Context string
	Vhost   string
	// Busy marks an action of the session running until the func it
	// returns is called: the idle timeout waits for it (the gate's Busy).
	Busy func() (done func())
}

// ReadOnly reports whether the session may change nothing.
func (s Session) ReadOnly() bool { return s.Role != RoleOperator }

// Principal is who the session is, acting in context: what the gate
// authorizes and the audit log names.
func (s Session) Principal(context string) gate.Principal {
	return gate.SSH(s.User, s.Fingerprint, s.Name, s.Role, context)
}

// Config configures a server.
type Config struct {
	// Addr is the address to listen on (DefaultAddr when empty).
	Addr string
	// HostKeyPath is the host key's file, made on first use
	// (<DataDir>/ssh_host_ed25519_key when empty).
	HostKeyPath string
	// AuthorizedKeysPath is the authorized-keys file (required). It is
	// read again at each login, so a key added or removed applies to the
	// next login without a restart; a file that no longer parses refuses
	// every login until it is fixed.
	AuthorizedKeysPath string
	// MaxSessions bounds the sessions open at once (0: DefaultMaxSessions);
	// one more is refused with a line saying so.
	MaxSessions int
	// IdleTimeout ends a session when no key was pressed for this long
	// (0: never). The screen's own refreshes do not count as activity.
	IdleTimeout time.Duration
	// Open makes a broker client of a session for what it asks (see
	// Want), and the func that closes it: the session's first, then one
	// for each vhost or context its switchers open, all closed when it
	// ends. A read-only session's client must report ReadOnly (the
	// session is refused otherwise); it is also wrapped so no mutation
	// reaches it.
	Open func(ctx context.Context, s Session, w Want) (broker.Client, func(), error)
	// Contexts, when set, gives the contexts a session may switch to (its
	// key's, of those the server knows) and the one it starts in; none:
	// no context switcher, and the session starts in the server's.
	Contexts func(s Session) (names []string, start string)
	// Files, when set, gives a session its files: where its dumps go and
	// where the dumps it replays come from (one per session, so a quota
	// is the session's). nil: the session has none (files.None): a
	// served session never writes where the server's working directory
	// or a typed path says.
	Files func(s Session) ui.Files
	// UI is what every session's UI starts from (refresh, peek limit,
	// title, colour); the client, read-only, input, output and terminal
	// are the session's.
	UI ui.Options
	// Log receives the server's log: listening, connects, disconnects,
	// refused keys and sessions (fingerprints only, never key material).
	// nil: none.
	Log io.Writer
}

// Server is an SSH server of the terminal UI.
type Server struct {
	cfg     Config
	srv     *ssh.Server
	hostKey gossh.Signer
	log     *log.Logger
	keys    atomic.Pointer[AuthorizedKeys]

	mu       sync.Mutex
	ctx      context.Context // the server's, set by Serve
	sessions int
	wg       sync.WaitGroup // running session handlers
}

// New checks cfg, reads (or makes) the host key and reads the authorized
// keys.
func New(cfg Config) (*Server, error) {
	if cfg.Open == nil {
		return nil, errors.New("sshserve: no Open")
	}
	if cfg.AuthorizedKeysPath == "" {
		return nil, errors.New("sshserve: no authorized-keys file")
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.IdleTimeout < 0 {
		return nil, fmt.Errorf("sshserve: idle timeout %v: want 0 (none) or more", cfg.IdleTimeout)
	}
	if cfg.HostKeyPath == "" {
		dir, err := DataDir()
		if err != nil {
			return nil, fmt.Errorf("sshserve: host key: %w", err)
		}
		cfg.HostKeyPath = dir + "/" + HostKeyName
	}
	w := cfg.Log
	if w == nil {
		w = io.Discard
	}
	s := &Server{cfg: cfg, log: log.New(w, "", log.LstdFlags|log.LUTC)}
	keys, err := LoadAuthorizedKeys(cfg.AuthorizedKeysPath)
	if err != nil {
		return nil, err
	}
	s.keys.Store(keys)
	signer, created, err := LoadOrCreateHostKey(cfg.HostKeyPath)
	if err != nil {
		return nil, err
	}
	s.hostKey = signer
	if created {
		s.log.Printf("made host key %s (%s)", cfg.HostKeyPath, s.HostKeyFingerprint())
	}
	s.srv, err = wish.NewServer(
		wish.WithAddress(cfg.Addr),
		func(srv *ssh.Server) error { srv.AddHostKey(signer); return nil },
		wish.WithPublicKeyAuth(s.authorize),
		func(srv *ssh.Server) error {
			srv.HandshakeTimeout = handshakeTimeout
			srv.ConnectionFailedCallback = func(c net.Conn, err error) {
				s.log.Printf("connection from %s failed: %s", c.RemoteAddr(), clean(err.Error()))
			}
			return nil
		},
		wish.WithMiddleware(s.handle),
	)
	if err != nil {
		return nil, fmt.Errorf("sshserve: %w", err)
	}
	return s, nil
}

// HostKeyFingerprint is the host key's SHA256:… fingerprint (what a client
// is told to expect).
func (s *Server) HostKeyFingerprint() string {
	return gossh.FingerprintSHA256(s.hostKey.PublicKey())
}

// ListenAndServe listens on Config.Addr and serves until ctx ends (see
// Serve).
func (s *Server) ListenAndServe(ctx context.Context) error {
	l, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, l)
}

// Serve serves on l until ctx ends, then stops cleanly: no new
// connection is taken, every session's UI is stopped as a keyed quit
// stops it (a running move stops after its batch in flight and writes its
// audit line), and once they have ended (or stopGrace has passed) every
// connection is closed. It returns nil after a stop by ctx.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	s.log.Printf("listening on %s (host key %s)", l.Addr(), s.HostKeyFingerprint())
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(l) }()
	select {
	case err := <-errc:
		_ = s.srv.Close()
		return err
	case <-ctx.Done():
	}
	s.log.Printf("stopping: ending %d sessions", s.open())
	// Shutdown with a context already done closes the listeners and
	// returns: the connections are closed below, once the sessions (which
	// ctx stops) have ended.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.srv.Shutdown(done)
	ended := make(chan struct{})
	go func() { s.wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(stopGrace):
		s.log.Printf("stopping: %d sessions still open after %v: closing them", s.open(), stopGrace)
	}
	_ = s.srv.Close()
	<-errc
	s.log.Printf("stopped")
	return nil
}

func (s *Server) open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions
}

// authorize is the public-key check: the file is read again each time; an
// unknown key (or a file that no longer parses) is refused before any
// screen.
func (s *Server) authorize(ctx ssh.Context, key ssh.PublicKey) bool {
	fp := gossh.FingerprintSHA256(key)
	keys, err := LoadAuthorizedKeys(s.cfg.AuthorizedKeysPath)
	if err != nil {
		s.log.Printf("refused key %s user=%q from %s: %s", fp, ctx.User(), ctx.RemoteAddr(), clean(err.Error()))
		return false
	}
	s.keys.Store(keys)
	if _, ok := keys.Lookup(key); !ok {
		s.log.Printf("refused key %s user=%q from %s: not in %s", fp, ctx.User(), ctx.RemoteAddr(), s.cfg.AuthorizedKeysPath)
		return false
	}
	return true
}

// handle is one session, from its checks to its end.
func (s *Server) handle(ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		s.wg.Add(1)
		defer s.wg.Done()
		code := s.session(sess)
		_ = sess.Exit(code)
	}
}

// session runs one session and returns its exit status.
func (s *Server) session(sess ssh.Session) int {
	start := time.Now()
	remote := sess.RemoteAddr().String()
	// The key the connection authenticated with (not one merely
	// offered), looked up again: it may have been removed meanwhile.
	k, ok := s.keys.Load().Lookup(sess.PublicKey())
	if !ok {
		s.log.Printf("refused session user=%q from %s: key no longer authorized", sess.User(), remote)
		return refuse(sess, "your key is not authorized")
	}
	who := Session{User: sess.User(), Fingerprint: k.Fingerprint, Name: k.Comment, Role: k.Role, Contexts: k.Contexts, Remote: remote}
	tag := fmt.Sprintf("user=%q key=%s", clean(who.User), who.Fingerprint)
	pty, winch, isPty := sess.Pty()
	switch {
	case len(sess.Command()) > 0:
		s.log.Printf("refused session %s from %s: a command was asked", tag, remote)
		return refuse(sess, "ladder serves its terminal UI only: connect without a command (ssh -t HOST)")
	case !isPty:
		s.log.Printf("refused session %s from %s: no terminal", tag, remote)
		return refuse(sess, "the terminal UI needs a terminal: connect with ssh -t")
	}
	if err := ui.CheckTerminal(pty.Term); err != nil {
		s.log.Printf("refused session %s from %s: TERM=%s", tag, remote, clean(pty.Term))
		return refuse(sess, err.Error())
	}

	s.mu.Lock()
	serverCtx := s.ctx
	if s.sessions >= s.cfg.MaxSessions {
		s.mu.Unlock()
		s.log.Printf("refused session %s from %s: %d sessions open (the most)", tag, remote, s.cfg.MaxSessions)
		return refuse(sess, fmt.Sprintf("the server has its most sessions open (%d): try again later", s.cfg.MaxSessions))
	}
	s.sessions++
	n := s.sessions
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.sessions--
		s.mu.Unlock()
	}()
	s.log.Printf("connect %s name=%q role=%s from %s term=%s size=%dx%d (%d/%d sessions)",
		tag, clean(who.Name), who.Role, remote, clean(pty.Term), pty.Window.Width, pty.Window.Height, n, s.cfg.MaxSessions)

	// The session's context ends with the server's, with the connection
	// (a dropped connection stops a move as Ctrl+C does) and with the
	// idle timer.
	ctx, cancel := context.WithCancel(serverCtx)
	defer cancel()
	stopWithConn := context.AfterFunc(sess.Context(), cancel)
	defer stopWithConn()
	idle := newIdleTimer(s.cfg.IdleTimeout, cancel)
	defer idle.stop()
	in := idle.reader(sess)

	why := "quit"
	defer func() {
		s.log.Printf("disconnect %s from %s after %v: %s", tag, remote, time.Since(start).Round(time.Second), why)
	}()

	// The session's clients: its first, and those its switchers open,
	// every one closed when it ends; current is the context it shows (a
	// vhost switched to is that context's).
	var (
		mu       sync.Mutex
		closes   []func()
		current  string
		contexts []string
	)
	if s.cfg.Contexts != nil {
		contexts, current = s.cfg.Contexts(who)
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range closes {
			f()
		}
	}()
	open := func(w Want) (broker.Client, error) {
		w.Busy = idle.working
		c, closeClient, err := s.cfg.Open(ctx, who, w)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		closes = append(closes, closeClient)
		mu.Unlock()
		if who.ReadOnly() && !c.ReadOnly() {
			return nil, errNotReadOnly
		}
		return c, nil
	}
	c, err := open(Want{Context: current})
	switch {
	case errors.Is(err, errNotReadOnly):
		why = "refused: the broker client of a read-only session is not read-only"
		return refuse(sess, err.Error())
	case err != nil:
		why = "no broker client: " + clean(err.Error())
		return refuse(sess, err.Error())
	}

	resize := make(chan ui.Size)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case w, ok := <-winch:
				if !ok {
					return
				}
				select {
				case resize <- ui.Size{Width: w.Width, Height: w.Height}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	opts := s.cfg.UI
	opts.Client = c
	opts.ReadOnly = opts.ReadOnly || who.ReadOnly()
	opts.Who = who.Principal(current)
	opts.Open = func(vhost string) (broker.Client, error) { // the vhost switcher
		mu.Lock()
		in := current
		mu.Unlock()
		return open(Want{Context: in, Vhost: vhost})
	}
	opts.OpenContext, opts.Contexts = nil, nil
	if len(contexts) > 0 {
		opts.Contexts, opts.Context = contexts, current
		if current != "" {
			opts.Title = current
		}
		opts.OpenContext = func(name string) (broker.Client, error) {
			c, err := open(Want{Context: name})
			if err == nil {
				mu.Lock()
				current = name
				mu.Unlock()
			}
			return c, err
		}
	}
	opts.Files = files.None{}
	if s.cfg.Files != nil {
		opts.Files = s.cfg.Files(who)
	}
	opts.Input, opts.Output = in, sess
	opts.Terminal = &ui.Terminal{
		Environ: append(sess.Environ(), "TERM="+pty.Term),
		Width:   pty.Window.Width, Height: pty.Window.Height,
		Resize: resize,
	}
	err = ui.Run(ctx, opts)
	switch {
	case idle.ended():
		why = "idle"
		fmt.Fprintf(sess.Stderr(), "ladder: no key pressed for %v: session ended\r\n", s.cfg.IdleTimeout)
	case serverCtx.Err() != nil:
		why = "server stopping"
		fmt.Fprint(sess.Stderr(), "ladder: the server is stopping: session ended\r\n")
	case sess.Context().Err() != nil:
		why = "connection closed"
	case err != nil:
		why = "error: " + clean(err.Error())
		fmt.Fprintf(sess.Stderr(), "ladder: %s\r\n", clean(err.Error()))
		return 1
	}
	return 0
}

// errNotReadOnly: Open gave a read-only session a client that is not.
var errNotReadOnly = errors.New("this server cannot give a read-only session (its broker client is not read-only): tell its operator")

// refuse tells the client why in one line and gives the exit status.
func refuse(sess ssh.Session, msg string) int {
	fmt.Fprintf(sess.Stderr(), "ladder: %s\r\n", clean(msg))
	return 1
}

// clean makes text from outside (a user name, an error naming one) safe
// to write to a log or a terminal: one line, no control characters.
func clean(s string) string {
	return termtext.Sanitize(strings.ReplaceAll(s, "\n", " "))
}
