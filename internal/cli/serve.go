package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/files"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/internal/metrics"
	"github.com/ladder-tui/ladder/internal/secret"
	"github.com/ladder-tui/ladder/internal/sshserve"
	"github.com/ladder-tui/ladder/ui"
)

// serveFlags are ladder serve's own.
type serveFlags struct {
	ssh            string
	authorizedKeys string
	hostKey        string
	maxSessions    int
	idleTimeout    time.Duration
	files          string
	readOnlyDumps  bool
	sessionQuota   files.Size
	metrics        string
	ui             uiFlags
}

func newServeCmd(a *app) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --ssh ADDR --authorized-keys FILE",
		Short: "Serve the terminal UI over SSH: one ladder for the team, each key with its role",
		Long: `ladder serve runs one ladder (with the broker's credentials) that people
reach with their own SSH key: each session is the terminal UI in their own
terminal, with what their key's role allows, every move audited under their
SSH user and key fingerprint.

Keys are public keys only (no passwords), one a line of the authorized-keys
file, with ladder's options in OpenSSH's options position:

  role=operator ssh-ed25519 AAAA… alice@laptop
  role=read-only,contexts="prod,staging" ssh-ed25519 AAAA… bob@laptop
  ssh-ed25519 AAAA… carol@laptop            (read-only: the default)

An operator may move, replay and unblock; a read-only key sees, peeks and
previews. A session switches vhost (v) and context (x) as the local TUI
does; contexts= names the config file's contexts the key may use. A session
starts in the served context (--context or the file's current one) when
its key allows, else in the first its key names. Each context's password
comes from its password-file or password-env: once serving, nothing is
asked on the server's terminal. The authorized-keys file is read again at
each login. --read-only makes every session read-only. An operator session
needs an audit log (--audit-log or the context's).

A session's dumps (d in the queue browser) go to one directory the server
owns (--files), under names the server makes (<user>-<queue>-<UTC
time>.jsonl): no path is asked. Its replays (R) offer that directory's dumps
only. A read-only key writes no file unless --read-only-dumps; each session
writes at most --session-quota bytes.

The host key is made once (ed25519, 0600) and kept, so clients can pin it;
its fingerprint is logged at start. Connects, disconnects and refused keys
are logged to stderr. SIGTERM or Ctrl+C ends every session cleanly (a move
running in one stops after its batch in flight and writes its audit line).

--metrics ADDR serves Prometheus metrics at http://ADDR/metrics: the
served vhost's ladders (DLQ depth, inflow and oldest message's age, each
tier's depth), its findings (ladder_finding{code,severity,queue}, those
ladder topology shows), whether the broker answers and ladder's own reads,
and each queue's causes as the latest scan a session ran counted them (g
in the queue browser: the 10 largest, the rest as "(other)", at most 50
queues; ladder never scans by itself).
Scrapes read the snapshots the sessions share: the broker is read about
once a refresh however many scrape or watch. Without --ssh or
--authorized-keys, --metrics serves metrics only (no keys needed).`,
		Example: `  ladder serve --ssh 127.0.0.1:2222 --authorized-keys /etc/ladder/authorized_keys --audit-log /var/log/ladder/audit.jsonl
  ssh -t -p 2222 alice@bastion
  ladder serve --metrics 127.0.0.1:9842          (Prometheus only: no SSH)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runServe(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.ssh, "ssh", sshserve.DefaultAddr, "address to serve SSH on (another host's only when asked: 0.0.0.0:2222)")
	fl.StringVar(&f.authorizedKeys, "authorized-keys", "", "file of the public keys that may log in, each with its role (see above)")
	fl.StringVar(&f.hostKey, "host-key", "", "the server's host key, made on first start (default <config dir>/ladder/"+sshserve.HostKeyName+")")
	fl.IntVar(&f.maxSessions, "max-sessions", sshserve.DefaultMaxSessions, "sessions open at once; one more is refused")
	fl.StringVar(&f.files, "files", "", "the directory of the sessions' dumps and replays, made 0700 by the first dump (default <config dir>/ladder/"+filesDirName+")")
	fl.BoolVar(&f.readOnlyDumps, "read-only-dumps", false, "let read-only keys dump queues to files (a dump browses: nothing leaves the queue)")
	f.sessionQuota = files.Size(defaultSessionQuota)
	fl.Var(&f.sessionQuota, "session-quota", "bytes a session may write to files, its dumps together (0: no bound)")
	fl.StringVar(&f.metrics, "metrics", "", "also serve Prometheus metrics at http://ADDR/metrics (alone unless --ssh or --authorized-keys is given)")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 30*time.Minute, "end a session when no key was pressed for this long (0: never)")
	f.ui.register(cmd)
	return cmd
}

// runServe is ladder serve: SSH sessions, Prometheus metrics, or both,
// reading the broker through one set of snapshot shares.
func (a *app) runServe(cmd *cobra.Command, f serveFlags) error {
	// --metrics alone serves metrics only; SSH too when asked for.
	withSSH := f.metrics == "" || cmd.Flags().Changed("ssh") || cmd.Flags().Changed("authorized-keys")
	if cmd.Flags().Changed("refresh") && f.ui.refresh < 200*time.Millisecond {
		return usageErr("--refresh %v: want 200ms or more", f.ui.refresh)
	}
	var ssh *sshPrep
	if withSSH {
		var err error
		if ssh, err = a.prepareSSH(f); err != nil {
			return err
		}
	}
	// Every session shares one configuration: a prompt is asked now, never
	// while a session opens; a password file is checked now and read
	// again at each connection (a rotated one needs no restart).
	a.mu.Lock()
	cfg, err := a.credentials(a.cfg)
	a.mu.Unlock()
	if err != nil {
		return err
	}
	var audit *gate.Log
	if withSSH {
		if audit, err = a.openAudit(); err != nil {
			return err
		}
		if audit == nil && !cfg.ReadOnly && slices.ContainsFunc(ssh.keys.Keys(), func(k sshserve.Key) bool { return k.Role == sshserve.RoleOperator }) {
			return usageErr("--audit-log: operator keys need an audit log, so every move names who asked (or serve --read-only)")
		}
	}
	// Sessions switch context on their own goroutines: no prompt then.
	a.mu.Lock()
	a.noPrompt = true
	served := a.context
	a.mu.Unlock()
	// One reader of snapshots for every session and scrape (see serveSnapshots).
	shots := &serveSnapshots{refresh: f.ui.refresh}
	defer shots.close()
	// With --metrics, the sessions' scans by cause are reported: each
	// session tells of its finished scans (ladder never scans by itself:
	// a scan is a browse, which may cost deliveries).
	var scans *sshserve.CauseScans
	if f.metrics != "" {
		scans = &sshserve.CauseScans{}
	}
	var parts []func(context.Context) error
	if f.metrics != "" {
		ln, err := net.Listen("tcp", f.metrics)
		if err != nil {
			return fmt.Errorf("--metrics: %w", err)
		}
		h, err := metrics.Handler(metrics.NewCollector(&lazyShare{get: func(ctx context.Context) (*sshserve.SnapshotShare, error) {
			r, err := shots.get(ctx, a, served, cfg)
			if err != nil {
				return nil, err
			}
			return r.share, nil
		}, base: cmd.Context()}, resolvedVhost(cfg), metricsReadTimeout).WithScans(scans))
		if err != nil {
			ln.Close()
			return err
		}
		fmt.Fprintf(a.stderr, "ladder: metrics on http://%s%s\n", ln.Addr(), metrics.Path)
		parts = append(parts, func(ctx context.Context) error { return metrics.Serve(ctx, ln, h) })
	}
	if withSSH {
		srv, err := a.sshServer(cmd, f, ssh, served, cfg, shots, scans)
		if err != nil {
			return err
		}
		parts = append(parts, srv.ListenAndServe)
	}
	return serveAll(cmd.Context(), parts)
}

// metricsReadTimeout bounds how long a scrape waits for the broker: under
// Prometheus' default scrape timeout (10 s).
const metricsReadTimeout = 8 * time.Second

// serveAll runs parts until ctx ends or one of them stops, which stops
// the others; the first error is the result.
func serveAll(ctx context.Context, parts []func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(parts))
	for _, p := range parts {
		go func() { errs <- p(ctx) }()
	}
	var first error
	for range parts {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
		cancel()
	}
	return first
}

// lazyShare is the served vhost's share, made at the first scrape that can
// reach the broker (ladder serve starts without it): until then a scrape
// says the broker is down and counts the failed connection as a failed
// read.
type lazyShare struct {
	get  func(context.Context) (*sshserve.SnapshotShare, error)
	base context.Context

	mu       sync.Mutex
	share    *sshserve.SnapshotShare
	failures int
}

func (l *lazyShare) Snapshot(ctx context.Context) (*broker.Snapshot, error) {
	l.mu.Lock()
	s := l.share
	if s == nil {
		var err error
		// The share outlives the scrape that made it.
		if s, err = l.get(l.base); err != nil {
			l.failures++
			l.mu.Unlock()
			return nil, err
		}
		l.share = s
	}
	l.mu.Unlock()
	return s.Snapshot(ctx)
}

func (l *lazyShare) Stats() sshserve.ShareStats {
	l.mu.Lock()
	s, failed := l.share, l.failures
	l.mu.Unlock()
	var st sshserve.ShareStats
	if s != nil {
		st = s.Stats()
	}
	st.Reads += failed
	st.Done += failed
	st.Errors += failed
	return st
}

// sshPrep is what ladder serve --ssh checked before reaching the broker.
type sshPrep struct {
	hostKey, filesDir string
	keys              *sshserve.AuthorizedKeys
}

// prepareSSH checks the SSH flags and loads the keys.
func (a *app) prepareSSH(f serveFlags) (*sshPrep, error) {
	if f.authorizedKeys == "" {
		return nil, usageErr("--authorized-keys: which keys may log in? (one OpenSSH public key a line, role=operator or read-only)")
	}
	if f.maxSessions < 1 {
		return nil, usageErr("--max-sessions %d: want 1 or more", f.maxSessions)
	}
	if f.idleTimeout < 0 {
		return nil, usageErr("--idle-timeout %v: want 0 (never) or more", f.idleTimeout)
	}
	if f.ui.peekLimit < 1 {
		return nil, usageErr("--peek-limit %d: want 1 or more", f.ui.peekLimit)
	}
	hostKey := f.hostKey
	if hostKey == "" {
		dir, err := sshserve.DataDir()
		if err != nil {
			return nil, usageErr("--host-key: no default (%v): give one", err)
		}
		hostKey = filepath.Join(dir, sshserve.HostKeyName)
	}
	filesDir, err := serveFilesDir(f.files, a.auditLog)
	if err != nil {
		return nil, err
	}
	keys, err := sshserve.LoadAuthorizedKeys(f.authorizedKeys)
	if err != nil {
		return nil, usageErr("--authorized-keys: %w", err)
	}
	return &sshPrep{hostKey: hostKey, filesDir: filesDir, keys: keys}, nil
}

// sshServer is ladder serve's SSH server.
func (a *app) sshServer(cmd *cobra.Command, f serveFlags, p *sshPrep, served string, cfg rabbit.Config, shots *serveSnapshots, scans *sshserve.CauseScans) (*sshserve.Server, error) {
	var rec ui.ScanRecorder
	if scans != nil {
		rec = servedScans{served: served, store: scans}
	}
	srv, err := sshserve.New(sshserve.Config{
		Addr:               f.ssh,
		HostKeyPath:        p.hostKey,
		AuthorizedKeysPath: f.authorizedKeys,
		MaxSessions:        f.maxSessions,
		IdleTimeout:        f.idleTimeout,
		Open: func(_ context.Context, s sshserve.Session, w sshserve.Want) (broker.Client, func(), error) {
			return a.sessionClient(cmd.Context(), served, cfg, s, w, shots)
		},
		Contexts: func(s sshserve.Session) ([]string, string) { return a.sessionContexts(served, s) },
		Files: func(s sshserve.Session) ui.Files {
			// Who may write files is the gate's to say: a read-only key (or
			// every key of a read-only server) only with --read-only-dumps.
			who := s.Principal(served)
			if cfg.ReadOnly {
				who.Role = gate.RoleReadOnly
			}
			who.FileWrites = f.readOnlyDumps
			return files.NewConfined(p.filesDir, files.ConfinedOptions{
				User: s.User, Writes: who.May(gate.WriteFile), Quota: int64(f.sessionQuota),
			})
		},
		UI: ui.Options{
			NoColor: a.noColor, Refresh: f.ui.refresh, LogFile: a.logFile, Title: a.context,
			PeekLimit: f.ui.peekLimit, APITimeout: cfg.APITimeout, Scans: rec,
		},
		Log: a.stderr,
	})
	if err != nil {
		return nil, usageErr("%w", err)
	}
	return srv, nil
}

// servedScans keeps the sessions' scans of the served context's vhosts
// (those --metrics reports): another context is another broker, whose
// vhost of the same name is another.
type servedScans struct {
	served string
	store  *sshserve.CauseScans
}

func (s servedScans) RecordScan(context, vhost string, scan *usecase.GroupScan, err error) {
	if context == "" || context == s.served {
		s.store.Record(vhost, scan, err)
	}
}

// filesDirName is the default files directory's name in the server's
// data directory (beside its host key).
const filesDirName = "files"

// defaultSessionQuota bounds what one session writes: room for a dump of
// 100,000 messages of 10 KiB, not for one of 64 KiB bodies (8.75 GB).
const defaultSessionQuota = 1 << 30

// serveFilesDir is the sessions' files directory (dir, else the default),
// checked (files.CheckDir; the first dump makes it). The audit log may not
// be in it: the replay picker would offer it.
func serveFilesDir(dir, audit string) (string, error) {
	if dir == "" {
		data, err := sshserve.DataDir()
		if err != nil {
			return "", usageErr("--files: no default (%v): give one", err)
		}
		dir = filepath.Join(data, filesDirName)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usageErr("--files %s: %w", dir, err)
	}
	if err := files.CheckDir(abs); err != nil {
		return "", usageErr("--files: %w", err)
	}
	if audit != "" {
		if a, err := filepath.Abs(audit); err == nil && filepath.Dir(a) == abs {
			return "", usageErr("--files %s holds the audit log %s: give the sessions' files a directory of their own", dir, audit)
		}
	}
	return abs, nil
}

// serveSnapshots are the snapshot readers of a ladder serve, one per vhost
// (of a context) a session shows, each made when a session first shows it (the
// server starts without reaching the broker) and kept until the server
// stops: every session's screen is read from its vhost's
// (sshserve.SnapshotShare), so the broker is read about once a refresh
// however many watch — one session costs it what a local TUI does, twenty
// not much more (BENCH.md). A reader reads only when a session asks, so
// one nobody watches any more costs nothing but its connection. Peeks and
// moves stay each session's own, on its own client, which remembers with
// the readers (rabbit.Live.ShareMemory).
type serveSnapshots struct {
	refresh time.Duration

	mu      sync.Mutex
	byVhost map[string]*serveReader
	// memory is each context's first reader: its later readers and its
	// sessions' clients remember with it (evidence is kept per vhost; a
	// context is another broker, whose vhosts are others).
	memory map[string]broker.Client
}

// serveReader is one vhost's share and its reader.
type serveReader struct {
	share  *sshserve.SnapshotShare
	reader broker.Client
	done   func()
}

// get returns the share of context's vhost (cfg's) and its reader, making
// them the first time (and again after a failure: a broker down at the
// first login is tried again at the next).
func (s *serveSnapshots) get(ctx context.Context, a *app, context string, cfg rabbit.Config) (*serveReader, error) {
	key := context + "\x00" + resolvedVhost(cfg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.byVhost[key]; r != nil {
		return r, nil
	}
	// It only ever reads: read-only, so nothing could make it do more.
	ro := cfg
	ro.ReadOnly = true
	c, closeClient, err := a.connect(ro, "serve snapshots")
	if err != nil {
		return nil, errors.New(secret.RedactText(err.Error(), a.secretList()...))
	}
	if s.memory == nil {
		s.memory = map[string]broker.Client{}
	}
	if s.memory[context] == nil {
		s.memory[context] = c
	}
	shareMemory(c, s.memory[context])
	r := &serveReader{share: sshserve.NewSnapshotShare(ctx, c, c.Vhost(), s.refresh), reader: c, done: closeClient}
	if s.byVhost == nil {
		s.byVhost = map[string]*serveReader{}
	}
	s.byVhost[key] = r
	return r, nil
}

// resolvedVhost is the vhost cfg reads ("" is the URL's, else "/").
func resolvedVhost(cfg rabbit.Config) string {
	if r, err := cfg.Resolve(); err == nil {
		return r.Vhost
	}
	return cfg.Vhost
}

// shareMemory makes c remember with from where both are live clients.
func shareMemory(c, from broker.Client) {
	l, ok := c.(*rabbit.Live)
	m, ok2 := from.(*rabbit.Live)
	if ok && ok2 && l != m {
		l.ShareMemory(m)
	}
}

// close closes the readers, once the server has stopped.
func (s *serveSnapshots) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.byVhost {
		r.done()
	}
}

// sessionContexts are the contexts a session may switch to: the config
// file's, those its key names if it names any. It starts in the served
// context when its key allows, else in the first its key names that the
// file has.
func (a *app) sessionContexts(served string, s sshserve.Session) (names []string, start string) {
	a.mu.Lock()
	all := a.contextList()
	a.mu.Unlock()
	for _, n := range all {
		if len(s.Contexts) == 0 || slices.Contains(s.Contexts, n) {
			names = append(names, n)
		}
	}
	start = served
	if len(s.Contexts) > 0 && !slices.Contains(s.Contexts, served) {
		for _, n := range s.Contexts {
			if slices.Contains(names, n) {
				return names, n
			}
		}
	}
	return names, start
}

// servedContext is context name's configuration for a session, read as
// the TUI's switcher reads it but without changing the server's: its
// broker, its credentials (a file or a variable: a session never makes
// the server prompt) and its audit log.
func (a *app) servedContext(name string) (rabbit.Config, *gate.Log, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	was := a.saveContext()
	defer a.restoreContext(was)
	if err := a.switchContext(name); err != nil {
		return rabbit.Config{}, nil, fmt.Errorf("context %s: %w", name, err)
	}
	cfg, err := a.credentials(a.cfg)
	if err != nil {
		return rabbit.Config{}, nil, fmt.Errorf("context %s: %w", name, err)
	}
	log, err := a.openAudit()
	return cfg, log, err
}

// sessionClient is clientFor for a session of ladder serve, for what it
// asks (the served context's configuration, base, or another's): the
// session's role decides read-only, its key the contexts it may use, and
// every audit line names its SSH user and key. Its snapshots are the
// share's.
func (a *app) sessionClient(ctx context.Context, served string, base rabbit.Config, s sshserve.Session, w sshserve.Want, shots *serveSnapshots) (broker.Client, func(), error) {
	name := w.Context
	if name == "" {
		name = served
	}
	if len(s.Contexts) > 0 && !slices.Contains(s.Contexts, name) {
		if name == "" {
			return nil, nil, errors.New("your key is limited to contexts this server does not serve (it serves no context)")
		}
		return nil, nil, fmt.Errorf("your key may not use context %q", name)
	}
	var (
		cfg = base
		log *gate.Log
		err error
	)
	if name == served {
		a.mu.Lock() // sessions open at once
		log, err = a.openAudit()
		a.mu.Unlock()
	} else {
		cfg, log, err = a.servedContext(name)
	}
	if err != nil {
		return nil, nil, err
	}
	if w.Vhost != "" { // the session's vhost switcher
		cfg.Vhost = w.Vhost
	}
	who := s.Principal(name)
	if who.ChangesNothing() {
		cfg.ReadOnly = true
	}
	if log == nil && !cfg.ReadOnly {
		return nil, nil, errors.New("this server keeps no audit log: operator sessions need one (tell its operator)")
	}
	r, err := shots.get(ctx, a, name, cfg)
	if err != nil {
		return nil, nil, err
	}
	c, closeClient, err := a.connect(cfg, "serve "+s.User)
	if err != nil {
		return nil, nil, errors.New(secret.RedactText(err.Error(), a.secretList()...))
	}
	shareMemory(c, r.reader)
	g := gate.New(r.share.Viewer(c), gate.Options{Principal: who, Broker: cfg.AMQPURL, Log: log, Busy: w.Busy, Changed: r.share.Invalidate})
	return g, closeClient, nil
}
