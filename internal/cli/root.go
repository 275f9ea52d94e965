package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/secret"
)

// Build says which ladder this is (set by the release build).
type Build struct{ Version, Commit, Date string }

// app is what every command shares: configuration, streams, output mode,
// and the one way to get a broker client.
type app struct {
	cfg      rabbit.Config
	auditLog string
	// logFile (--log-file): the TUI's debug log; a command writes its
	// whole error chain there (the screen gets one line).
	logFile string
	// stoppedBy is the signal that stopped the run ("ctrl+c"), "" if none.
	stoppedBy atomic.Value
	// fromEnv names the variable each flag set from the environment came
	// from ("$LADDER_AMQP_URL"), for errors about its value.
	fromEnv map[string]string
	output  string
	noColor bool
	build   Build
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	// connect builds the broker client for a command (see client.go);
	// tests put the simulation here.
	connect connector
	audit   map[string]*auditFile // by path
	// config is --config; contextName --context as given; context the
	// context in use ("" for none: see context.go), and
	// contextPasswordEnv the variable its password is read from.
	config             string
	contextName        string
	context            string
	contextPasswordEnv string
	// base is what flags and environment gave before a context filled
	// the rest (nil: no context in use); mu guards the configuration
	// while the TUI's switchers open clients on their own goroutines.
	base *contextBase
	mu   sync.Mutex
	// seen keeps every password read this run (each context's, a rotated
	// file's), kept out of every output (secretList).
	seen *secret.Seen
	// noPrompt: a password is never asked on the terminal (ladder serve,
	// once serving: a session's context switch must not wait on the
	// server's terminal).
	noPrompt bool
	// ctx is the run's (stopped by Ctrl+C).
	ctx context.Context
	// fresh (--fresh): what earlier runs learned of the broker's queues
	// is not loaded; learned is what this run's clients remember (see
	// learned.go).
	fresh   bool
	learned *learnedRun
}

// envFlag ties a global flag to its environment variable.
type envFlag struct{ flag, env string }

var globalEnv = []envFlag{
	{"amqp-url", "LADDER_AMQP_URL"},
	{"api-url", "LADDER_API_URL"},
	{"prometheus-url", "LADDER_PROMETHEUS_URL"},
	{"vhost", "LADDER_VHOST"},
	{"output", "LADDER_OUTPUT"},
	{"read-only", "LADDER_READ_ONLY"},
	{"no-color", "LADDER_NO_COLOR"},
	{"ca-cert", "LADDER_CA_CERT"},
	{"insecure-skip-verify", "LADDER_INSECURE_SKIP_VERIFY"},
	{"audit-log", "LADDER_AUDIT_LOG"},
	{"password-file", "LADDER_PASSWORD_FILE"},
	{"allow-readable-password-file", "LADDER_ALLOW_READABLE_PASSWORD_FILE"},
	{"api-timeout", "LADDER_API_TIMEOUT"},
	{"log-file", "LADDER_LOG_FILE"},
	{"context", "LADDER_CONTEXT"},
	{"config", "LADDER_CONFIG"},
	{"fresh", "LADDER_FRESH"},
}

func newRootCmd(a *app) *cobra.Command {
	var u uiFlags
	root := &cobra.Command{
		Use:   "ladder",
		Short: "Inspect and replay RabbitMQ retry ladders",
		Long: `ladder shows RabbitMQ retry ladders (main queue → TTL wait tiers or a
delayed exchange → DLQ) live, decodes every message's retry history, flags
head-of-line-blocked TTLs, and moves or re-publishes messages with a chosen
delay without losing any.

Run without a command for the terminal UI. Every flag has an environment
variable (shown in brackets); flags win over the environment, and both over
the context of the config file (ladder context --help).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.applyEnv(cmd)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runLiveUI(cmd, u)
		},
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitErr{code: exitUsage, err: err}
	})
	root.Args = usageArgs(root.Args)

	u.register(root)
	pf := root.PersistentFlags()
	pf.StringVar(&a.cfg.AMQPURL, "amqp-url", rabbit.DefaultAMQPURL, "AMQP URL of the broker (amqp:// or amqps://); several nodes as a comma list: the first that answers is used")
	pf.StringVar(&a.cfg.APIURL, "api-url", "", "management API URL (default http://<amqp host>:15672, https://…:15671 for amqps; credentials from the AMQP URL); a comma list: one for each AMQP URL")
	pf.StringVar(&a.cfg.PrometheusURL, "prometheus-url", "", "Prometheus endpoint (rabbitmq_prometheus): rates when management stats are off, and the TUI's steady refresh on 4.x (default http://<api host>:15692)")
	pf.StringVar(&a.cfg.Vhost, "vhost", "", "virtual host (default: the AMQP URL's vhost, else /)")
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table|json")
	pf.BoolVar(&a.cfg.ReadOnly, "read-only", false, "refuse every action that changes the broker")
	pf.BoolVar(&a.noColor, "no-color", false, "no colour (also NO_COLOR)")
	pf.StringVar(&a.cfg.CACertFile, "ca-cert", "", "PEM file of CA certificates for amqps:// and https://")
	pf.BoolVar(&a.cfg.InsecureSkipVerify, "insecure-skip-verify", false, "do not verify the broker's TLS certificate")
	pf.StringVar(&a.auditLog, "audit-log", "", "append every move (asked and done) to this file as JSON lines")
	pf.StringVar(&a.cfg.PasswordFile, "password-file", "", "read the password of a URL that names a user without one from this file, again at every connection (refused when others may read it)")
	pf.BoolVar(&a.cfg.AllowReadablePasswordFile, "allow-readable-password-file", false, "accept a --password-file others may read (a Kubernetes secret mounted 0644 by default)")
	pf.DurationVar(&a.cfg.APITimeout, "api-timeout", rabbit.DefaultAPITimeout, "how long a management API or Prometheus request may take")
	pf.StringVar(&a.logFile, "log-file", "", "debug log: the UI's, or a command's whole error chain (never to the screen; also LADDER_DEBUG=1)")
	pf.StringVar(&a.contextName, "context", "", "the named broker of the config file to use (default: its current-context)")
	pf.StringVar(&a.config, "config", "", "config file of named brokers (default ~/.config/ladder/config.toml)")
	pf.BoolVar(&a.fresh, "fresh", false, "forget what earlier runs' peeks showed of the broker's queues (remembered a day in the user's cache: which queues an error queue's messages failed in, their expirations)")
	// The default holds guest's password: show it redacted like every URL.
	pf.Lookup("amqp-url").DefValue = secret.RedactURL(rabbit.DefaultAMQPURL)
	for _, e := range globalEnv {
		f := pf.Lookup(e.flag)
		f.Usage += " [$" + e.env + "]"
	}
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.RegisterFlagCompletionFunc("context", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return a.contextNames(nil)
	})

	root.AddCommand(
		newVersionCmd(a),
		newPingCmd(a),
		newDemoCmd(a),
		newTopologyCmd(a),
		newPeekCmd(a),
		newMoveCmd(a),
		newUnblockCmd(a),
		newDumpCmd(a),
		newReplayCmd(a),
		newScheduleCmd(a),
		newLintCmd(a),
		newCheckCmd(a),
		newContextCmd(a),
		newConventionsCmd(a),
		newServeCmd(a),
		newMCPCmd(a),
	)
	// Every argument check's error is a usage error (exit 2), however
	// cobra words it.
	for _, c := range root.Commands() {
		if c.Args != nil {
			c.Args = usageArgs(c.Args)
		}
	}
	return root
}

// applyEnv fills every flag the user did not set from its environment
// variable, or from the file a *_FILE variable names (see fileEnv).
func (a *app) applyEnv(cmd *cobra.Command) error {
	flags := cmd.Flags()
	for _, e := range globalEnv {
		f := flags.Lookup(e.flag)
		if f == nil || f.Changed {
			continue
		}
		v, from, err := envValue(e.env)
		if err != nil {
			return usageErr("%w", err)
		}
		if v == "" {
			continue
		}
		if err := f.Value.Set(v); err != nil {
			return usageErr("%s: %s", from, secret.RedactText(err.Error(), v))
		}
		if a.fromEnv == nil {
			a.fromEnv = map[string]string{}
		}
		a.fromEnv[e.flag] = from
	}
	if os.Getenv("NO_COLOR") != "" {
		a.noColor = true
	}
	switch a.output {
	case "table", "json":
	default:
		return usageErr("--output %q: want table or json", a.output)
	}
	if !isContextCmd(cmd) {
		if err := a.applyContext(cmd); err != nil {
			return err
		}
	}
	if a.cfg.APITimeout <= 0 {
		return usageErr("--api-timeout %v: want more than 0 (e.g. 30s)", a.cfg.APITimeout)
	}
	return nil
}

func (a *app) json() bool { return a.output == "json" }

// resolve turns flags and environment into a checked broker configuration
// (asking for a password on a terminal when a URL names a user without
// one); of several addresses, the first that answers.
func (a *app) resolve() (*rabbit.Resolved, error) {
	cfg, err := a.credentials(a.cfg)
	if err != nil {
		return nil, err
	}
	r, err := cfg.Resolve()
	if err != nil {
		return nil, a.envNamed(usageErr("%w", err))
	}
	return a.reach(r)
}

// envNamed names the variable a flag's bad value came from: an error
// about "--amqp-url" set by LADDER_AMQP_URL says "$LADDER_AMQP_URL".
func (a *app) envNamed(err error) error {
	var ee *exitErr
	if !errors.As(err, &ee) || ee.code != exitUsage {
		return err
	}
	for flag, from := range a.fromEnv {
		if msg, ok := strings.CutPrefix(err.Error(), "--"+flag+" "); ok {
			return &exitErr{code: exitUsage, err: &renamed{msg: from + " " + msg, err: err}}
		}
		if msg, ok := strings.CutPrefix(err.Error(), "--"+flag+":"); ok {
			return &exitErr{code: exitUsage, err: &renamed{msg: from + ":" + msg, err: err}}
		}
	}
	return err
}

// renamed is err in other words, its chain kept.
type renamed struct {
	msg string
	err error
}

func (e *renamed) Error() string { return e.msg }
func (e *renamed) Unwrap() error { return e.err }

// Run executes ladder with args and returns the process exit code. Errors
// are printed once, on one line, with every URL password redacted.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, b Build) int {
	return run(args, stdin, stdout, stderr, b, nil)
}

// run is Run with the broker connector chosen (nil: the real broker).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, b Build, connect connector) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, build: b, connect: connect}
	if a.connect == nil {
		a.connect = a.liveConnector
	}
	defer a.closeAudit()
	root := newRootCmd(a)
	root.SetArgs(args)
	// Ctrl+C or a TERM stops a move cleanly: deliveries stop, in-flight
	// confirms settle, the report and the audit line are written.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			a.stoppedBy.Store(signalName(s))
			cancel()
		case <-ctx.Done():
		}
	}()
	a.ctx = ctx
	err := root.ExecuteContext(ctx)
	a.saveLearned()
	if err != nil {
		printError(stderr, a, err)
	}
	code := exitCode(err)
	a.logRun(args, code, err)
	return code
}

// signalName is how a stopping signal is named to the user.
func signalName(s os.Signal) string {
	if s == os.Interrupt {
		return "ctrl+c"
	}
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return s.String()
}
