package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/secret"
)

// Exit codes: scripts can tell a usage mistake from a failed or partial run.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitPartial = 3
	// exitFindings: ladder check found what --fail-on fails on.
	exitFindings = 4
)

// exitErr carries an exit code with the error that caused it.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return e.err.Error() }
func (e *exitErr) Unwrap() error { return e.err }

// usageErr is a mistake in how ladder was called (exit 2).
func usageErr(format string, a ...any) error {
	return &exitErr{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// usageArgs makes a cobra argument check's error a usage error, so exit
// codes never depend on cobra's wording.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &exitErr{code: exitUsage, err: err}
		}
		return nil
	}
}

// exactlyOne wants one argument, named what ("QUEUE", "FILE"): its error
// says so in the command's own words ("peek needs a QUEUE (ladder peek
// QUEUE)"), never cobra's "accepts 1 arg(s)".
func exactlyOne(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return fmt.Errorf("%s needs a %s (ladder %s)", cmd.Name(), what, cmd.Use)
		case len(args) > 1:
			return fmt.Errorf("%s takes one %s, not %d: %q (ladder %s)", cmd.Name(), what, len(args), strings.Join(args, " "), cmd.Use)
		}
		return nil
	}
}

// exitCode is the process exit code for err.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitErr
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitError
}

// printError writes err once, on one line, with every password redacted. A
// connection failure is its own line ("login refused for user guest at
// 127.0.0.1:5672"), whichever command met it (see broker.Describe).
func printError(w io.Writer, a *app, err error) {
	// One line, and nothing in it (a queue name, a broker's reason) acts on
	// the terminal.
	msg := broker.Describe(err)
	if by, _ := a.stoppedBy.Load().(string); by != "" && errors.Is(err, context.Canceled) {
		// The user stopped it: say so in their words, not Go's.
		msg = strings.ReplaceAll(msg, context.Canceled.Error(), "stopped ("+by+")")
	}
	msg = clean(strings.ReplaceAll(secret.RedactText(msg, secretsOf(a)...), "\n", " "))
	fmt.Fprintf(w, "ladder: %s\n", msg)
}

// secretsOf lists passwords that must never appear in output, whatever path
// an error took: those of every URL given (well formed or not) and the one
// read from --password-file or a prompt.
func secretsOf(a *app) []string {
	out := a.secretList()
	for _, raw := range []string{a.cfg.AMQPURL, a.cfg.APIURL, a.cfg.PrometheusURL, os.Getenv("LADDER_AMQP_URL"), os.Getenv("LADDER_API_URL"), os.Getenv("LADDER_PROMETHEUS_URL")} {
		out = append(out, passwordsOf(raw)...)
	}
	return out
}

// passwordsOf is what may be the password in raw, whatever its shape: the
// text after each ":" of what precedes its last "@" ("u:pw@h", "amqp:/u:pw@h",
// "amqps:u:pw@h", "amqp://u:pa/ss@h" give "pw" and "pa/ss" among them).
// More than the password is fine: each is hidden where it appears whole.
func passwordsOf(raw string) []string {
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return nil
	}
	info := raw[:at]
	if _, rest, ok := strings.Cut(info, "://"); ok {
		info = rest
	}
	var out []string
	for i := 0; i < len(info); i++ {
		if info[i] != ':' {
			continue
		}
		user := strings.TrimLeft(info[:i], "/")
		if j := strings.LastIndexAny(user, ":/"); j >= 0 {
			user = user[j+1:]
		}
		if p := info[i+1:]; p != "" && p != user {
			// A password that is the user name is shown as the user
			// anyway; hiding it would print "xxxxx:xxxxx@".
			out = append(out, p)
		}
	}
	return out
}
