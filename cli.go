package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
)

// Exit codes: scripts can tell a usage mistake from a failed or partial run.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitPartial = 3
)

// exitErr carries an exit code with the error that caused it.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return e.err.Error() }
func (e *exitErr) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitErr{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// app is what every command shares: configuration, streams, output mode.
type app struct {
	cfg      broker.Config
	auditLog string
	output   string
	noColor  bool
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
}

// envFlag ties a global flag to its environment variable.
type envFlag struct{ flag, env string }

var globalEnv = []envFlag{
	{"amqp-url", "LADDER_AMQP_URL"},
	{"api-url", "LADDER_API_URL"},
	{"vhost", "LADDER_VHOST"},
	{"output", "LADDER_OUTPUT"},
	{"read-only", "LADDER_READ_ONLY"},
	{"no-color", "LADDER_NO_COLOR"},
	{"ca-cert", "LADDER_CA_CERT"},
	{"insecure-skip-verify", "LADDER_INSECURE_SKIP_VERIFY"},
	{"audit-log", "LADDER_AUDIT_LOG"},
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
variable (shown in brackets); flags win over the environment.`,
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

	u.register(root)
	pf := root.PersistentFlags()
	pf.StringVar(&a.cfg.AMQPURL, "amqp-url", broker.DefaultAMQPURL, "AMQP URL of the broker (amqp:// or amqps://)")
	pf.StringVar(&a.cfg.APIURL, "api-url", "", "management API URL (default http://<amqp host>:15672, https://…:15671 for amqps; credentials from the AMQP URL)")
	pf.StringVar(&a.cfg.Vhost, "vhost", "", "virtual host (default: the AMQP URL's vhost, else /)")
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table|json")
	pf.BoolVar(&a.cfg.ReadOnly, "read-only", false, "refuse every action that changes the broker")
	pf.BoolVar(&a.noColor, "no-color", false, "no colour (also NO_COLOR)")
	pf.StringVar(&a.cfg.CACertFile, "ca-cert", "", "PEM file of CA certificates for amqps:// and https://")
	pf.BoolVar(&a.cfg.InsecureSkipVerify, "insecure-skip-verify", false, "do not verify the broker's TLS certificate")
	pf.StringVar(&a.auditLog, "audit-log", "", "append every move (asked and done) to this file as JSON lines")
	// The default holds guest's password: show it redacted like every URL.
	pf.Lookup("amqp-url").DefValue = broker.RedactURL(broker.DefaultAMQPURL)
	for _, e := range globalEnv {
		f := pf.Lookup(e.flag)
		f.Usage += " [$" + e.env + "]"
	}
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))

	root.AddCommand(
		newVersionCmd(a),
		newPingCmd(a),
		newDemoCmd(a),
		newTopologyCmd(a),
		newPeekCmd(a),
		newMoveCmd(a),
		newDumpCmd(a),
		newReplayCmd(a),
		newScheduleCmd(a),
	)
	return root
}

// applyEnv fills every flag the user did not set from its environment variable.
func (a *app) applyEnv(cmd *cobra.Command) error {
	flags := cmd.Flags()
	for _, e := range globalEnv {
		v, ok := os.LookupEnv(e.env)
		f := flags.Lookup(e.flag)
		if !ok || v == "" || f == nil || f.Changed {
			continue
		}
		if err := f.Value.Set(v); err != nil {
			return usageErr("$%s: %s", e.env, broker.RedactText(err.Error()))
		}
	}
	if os.Getenv("NO_COLOR") != "" {
		a.noColor = true
	}
	switch a.output {
	case "table", "json":
	default:
		return usageErr("--output %q: want table or json", a.output)
	}
	return nil
}

func (a *app) json() bool { return a.output == "json" }

// resolve turns flags and environment into a checked broker configuration.
func (a *app) resolve() (*broker.Resolved, error) {
	r, err := a.cfg.Resolve()
	if err != nil {
		return nil, usageErr("%w", err)
	}
	return r, nil
}

func notYet(what, issue string) error {
	return fmt.Errorf("%s is not built yet (it arrives with %s)", what, issue)
}

// run executes ladder with args and returns the process exit code. Errors
// are printed once, on one line, with every URL password redacted.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRootCmd(a)
	root.SetArgs(args)
	// Ctrl+C or a TERM stops a move cleanly: deliveries stop, in-flight
	// confirms settle, the report and the audit line are written.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitError
	var ee *exitErr
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case isUsage(err):
		code = exitUsage
	}
	msg := strings.ReplaceAll(broker.RedactText(err.Error(), secretsOf(a)...), "\n", " ")
	fmt.Fprintf(stderr, "ladder: %s\n", msg)
	return code
}

// isUsage recognises cobra's own argument and command errors.
func isUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// secretsOf lists passwords that must never appear in output, whatever path
// an error took.
func secretsOf(a *app) []string {
	var out []string
	for _, raw := range []string{a.cfg.AMQPURL, a.cfg.APIURL, os.Getenv("LADDER_AMQP_URL"), os.Getenv("LADDER_API_URL")} {
		if p := passwordOf(raw); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func passwordOf(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return ""
	}
	rest := raw[i+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	if c := strings.Index(rest[:at], ":"); c >= 0 {
		return rest[c+1 : at]
	}
	return ""
}
