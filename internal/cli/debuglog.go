package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/internal/secret"
)

// logRun appends how a run ended to --log-file (LADDER_DEBUG=1:
// ladder-debug.log): its arguments, exit code and the error's whole chain,
// which the one line on stderr leaves out (amqp091's "Exception (403)
// Reason: …", Go's request errors). Passwords are hidden as on stderr.
// Nothing is written without a log file, and a log that cannot be written
// changes nothing about the run.
func (a *app) logRun(args []string, code int, err error) {
	path := a.logFile
	if path == "" && os.Getenv("LADDER_DEBUG") == "1" {
		path = "ladder-debug.log"
	}
	if path == "" {
		return
	}
	f, ferr := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if ferr != nil {
		return
	}
	defer f.Close()
	secrets := secretsOf(a)
	line := fmt.Sprintf("%s ladder %s: exit %d", time.Now().Format(time.RFC3339Nano), redactArgs(args, secrets), code)
	for e := err; e != nil; e = cause(e) {
		line += "\n  " + clean(strings.ReplaceAll(secret.RedactText(e.Error(), secrets...), "\n", " "))
	}
	for _, n := range a.learnedNotes() {
		line += "\n  note: " + clean(secret.RedactText(n, secrets...))
	}
	fmt.Fprintln(f, line)
}

// cause is what err wraps: of several (a ConnError's kind and cause, a
// partial run's error and ErrPartial), the one that says most.
func cause(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	multi, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	var best error
	for _, e := range multi.Unwrap() {
		if e != nil && (best == nil || len(e.Error()) > len(best.Error())) {
			best = e
		}
	}
	return best
}

// redactArgs is the command line with every URL password hidden.
func redactArgs(args []string, secrets []string) string {
	out := make([]string, len(args))
	for i, s := range args {
		if strings.Contains(s, "@") {
			s = secret.RedactURL(s)
		}
		out[i] = clean(secret.RedactText(s, secrets...))
	}
	return strings.Join(out, " ")
}
