package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/secret"
)

// fileEnv are the variables that may also be given as NAME_FILE, the file
// holding the value, as Docker's official images read secrets
// (POSTGRES_PASSWORD_FILE): the URLs, which may hold a password.
// --password-file's own variable, LADDER_PASSWORD_FILE, is that form of a
// password.
var fileEnv = map[string]bool{
	"LADDER_AMQP_URL":       true,
	"LADDER_API_URL":        true,
	"LADDER_PROMETHEUS_URL": true,
}

// envValue is the value of env, or of the file env_FILE names (read by the
// secret file rule: refused when others may read it), and how to name it
// in an error. Both set is a mistake: which one wins would be a guess.
func envValue(env string) (v, from string, err error) {
	v = os.Getenv(env)
	if !fileEnv[env] {
		return v, "$" + env, nil
	}
	path := os.Getenv(env + "_FILE")
	switch {
	case path == "":
		return v, "$" + env, nil
	case v != "":
		return "", "", fmt.Errorf("$%s and $%s_FILE are both set: keep one", env, env)
	}
	v, err = secret.ReadFile(path, false)
	if err != nil {
		return "", "", fmt.Errorf("$%s_FILE: %w", env, err)
	}
	return v, "$" + env + "_FILE", nil
}

// credentials returns cfg with where its password comes from: the
// password file (checked now, so that an error names the file at once, and
// read again at every connection: a rotated file needs no restart), the
// context's variable, or a prompt on the terminal when a URL names a user
// without a password, asked once per run (the vhost switcher's clients use
// the same answer, until a context switch). Without a terminal that is an error saying what to
// give.
func (a *app) credentials(cfg rabbit.Config) (rabbit.Config, error) {
	if cfg.Secret == nil && a.cfg.Secret != nil {
		cfg.Secret, cfg.PasswordFile = a.cfg.Secret, "" // the prompt's answer
	}
	if cfg.Secret != nil || cfg.Password != "" {
		return cfg, nil
	}
	if a.seen == nil {
		a.seen = new(secret.Seen)
	}
	if cfg.PasswordFile == "" && a.contextPasswordEnv != "" {
		if _, err := a.contextPassword(); err != nil {
			return cfg, err
		}
		cfg.Secret = a.seen.Watch(secret.Named("context "+a.context, secret.Env{Name: a.contextPasswordEnv}))
		return cfg, nil
	}
	if cfg.PasswordFile != "" {
		// A context's file is named as the context's.
		what := "--password-file"
		if from := a.fromEnv["password-file"]; strings.HasPrefix(from, "context ") {
			what = from
		}
		file := a.seen.Watch(secret.Named(what, secret.File{Path: cfg.PasswordFile, AllowReadable: cfg.AllowReadablePasswordFile}))
		if _, _, err := file.Credentials(a.runContext()); err != nil {
			return cfg, &exitErr{code: exitUsage, err: err}
		}
		cfg.Secret, cfg.PasswordFile = file, ""
		return cfg, nil
	}
	_, err := cfg.Resolve()
	if !errors.Is(err, rabbit.ErrPasswordNeeded) {
		return cfg, nil // resolved, or an error Resolve will give again
	}
	in, ok := a.stdin.(*os.File)
	if a.noPrompt || !ok || !isTerminal(in) || !isTerminal(a.stderr) {
		return cfg, a.envNamed(usageErr("%w", err))
	}
	user, where := passwordFor(cfg)
	var readErr error
	prompt := secret.NewPrompt(func(context.Context) (string, error) {
		fmt.Fprintf(a.stderr, "Password for %s at %s: ", user, where)
		b, err := term.ReadPassword(in.Fd())
		fmt.Fprintln(a.stderr)
		if err != nil {
			readErr = fmt.Errorf("read the password: %w", err)
			return "", readErr
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	})
	if _, _, err := prompt.Credentials(a.runContext()); err != nil {
		if readErr != nil {
			return cfg, readErr
		}
		return cfg, usageErr("%w", err) // no password given
	}
	// Kept in the run's configuration (a context switch starts from
	// another's).
	a.cfg.Secret = a.seen.Watch(prompt)
	cfg.Secret = a.cfg.Secret
	return cfg, nil
}

// runContext is the run's context (stopped by Ctrl+C), or a background
// one when a test made the app without it.
func (a *app) runContext() context.Context {
	if a.ctx == nil {
		return context.Background()
	}
	return a.ctx
}

// secretList is every password read this run (files, variables, a
// prompt; a rotated file's new one too), kept out of every output.
func (a *app) secretList() []string {
	var out []string
	for _, p := range a.seen.Pairs() {
		out = append(out, p.Password)
	}
	return out
}

// passwordFor names the user and address a prompt asks the password of:
// the AMQP URL's when it names a user without one, else the API's.
func passwordFor(cfg rabbit.Config) (user, where string) {
	probe := cfg
	probe.Password = "?" // resolves, so the URLs can be read
	r, err := probe.Resolve()
	if err != nil {
		return "?", "?"
	}
	if _, p, _ := r.AMQPLogin.Credentials(context.Background()); p == "?" {
		return r.AMQPUser, r.AMQP.Host
	}
	if _, p, _ := r.APILogin.Credentials(context.Background()); p == "?" {
		return r.APIUser, r.APIURL.Host
	}
	return r.PrometheusUser, r.PrometheusURL.Host
}
