package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
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
	v, err = broker.ReadSecretFile(path)
	if err != nil {
		return "", "", fmt.Errorf("$%s_FILE: %w", env, err)
	}
	return v, "$" + env + "_FILE", nil
}

// credentials returns cfg with the password it needs: read from
// --password-file once (so an error names the file and redaction knows the
// password), or asked for on the terminal when a URL names a user without
// a password. Without a terminal that is an error saying what to give.
// The answer is kept: the vhost switcher's clients need it too.
func (a *app) credentials(cfg rabbit.Config) (rabbit.Config, error) {
	if a.cfg.Password != "" {
		cfg.Password, cfg.PasswordFile = a.cfg.Password, ""
		return cfg, nil
	}
	if cfg.Password != "" {
		return cfg, nil
	}
	if cfg.PasswordFile == "" {
		pw, err := a.contextPassword()
		if err != nil {
			return cfg, err
		}
		if pw != "" {
			a.cfg.Password = pw
			a.secrets = append(a.secrets, pw)
			cfg.Password = pw
			return cfg, nil
		}
	}
	if cfg.PasswordFile != "" {
		pw, err := broker.ReadSecretFile(cfg.PasswordFile)
		if err != nil {
			// A context's file is named as the context's.
			what := "--password-file"
			if from := a.fromEnv["password-file"]; strings.HasPrefix(from, "context ") {
				what = from
			}
			return cfg, &exitErr{code: exitUsage, err: fmt.Errorf("%s: %w", what, err)}
		}
		a.cfg.Password, a.cfg.PasswordFile = pw, ""
		a.secrets = append(a.secrets, pw)
		cfg.Password, cfg.PasswordFile = pw, ""
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
	fmt.Fprintf(a.stderr, "Password for %s at %s: ", user, where)
	b, rerr := term.ReadPassword(in.Fd())
	fmt.Fprintln(a.stderr)
	if rerr != nil {
		return cfg, fmt.Errorf("read the password: %w", rerr)
	}
	pw := strings.TrimRight(string(b), "\r\n")
	if pw == "" {
		return cfg, usageErr("no password given")
	}
	a.cfg.Password = pw
	a.secrets = append(a.secrets, pw)
	cfg.Password = pw
	return cfg, nil
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
	if r.AMQPPassword == "?" {
		return r.AMQPUser, r.AMQP.Host
	}
	if r.APIPassword == "?" {
		return r.APIUser, r.APIURL.Host
	}
	return r.PrometheusUser, r.PrometheusURL.Host
}
