package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/contexts"
	"github.com/ladder-tui/ladder/internal/secret"
)

// Contexts (internal/contexts): named brokers in the config file. A
// context fills what flags and environment leave unset; it never lifts
// its read-only, and its password comes from a file or a variable it
// names, never from the file itself.

// contextFlags are the global flags a context sets, with its value for
// each (contexts.Context's keys are these names).
func contextFlags(c contexts.Context) []struct{ flag, value string } {
	out := []struct{ flag, value string }{
		{"amqp-url", c.AMQPURL}, {"api-url", c.APIURL}, {"prometheus-url", c.PrometheusURL},
		{"vhost", c.Vhost}, {"ca-cert", c.CACert}, {"audit-log", c.AuditLog},
		{"password-file", c.PasswordFile}, {"api-timeout", c.APITimeout},
	}
	if c.InsecureSkipVerify {
		out = append(out, struct{ flag, value string }{"insecure-skip-verify", "true"})
	}
	if c.AllowReadablePasswordFile {
		out = append(out, struct{ flag, value string }{"allow-readable-password-file", "true"})
	}
	return out
}

// configPath is --config, else $LADDER_CONFIG, else the default path.
func (a *app) configPath() (string, error) {
	if a.config != "" {
		return a.config, nil
	}
	return contexts.DefaultPath()
}

// applyContext fills every global flag that neither the command line nor
// the environment set from the context named by --context
// ($LADDER_CONTEXT), else the file's current-context; nothing without a
// config file and no --context.
func (a *app) applyContext(cmd *cobra.Command) error {
	path, err := a.configPath()
	if err != nil {
		return usageErr("%w", err)
	}
	named := a.contextName
	f, err := contexts.Load(path)
	switch {
	case errors.Is(err, contexts.ErrNoFile) && named == "":
		return nil
	case errors.Is(err, contexts.ErrNoFile):
		return a.envNamed(usageErr("--context %s: no config file %s (ladder context --help shows its format)", named, path))
	case err != nil:
		return usageErr("%w", err)
	}
	// The file's retry conventions hold for every context, and none.
	a.cfg.Conventions = f.Table
	if named == "" {
		named = f.Current
	}
	if named == "" {
		// No context in use yet, but the TUI's switcher can pick one:
		// what flags and environment gave is where it starts from.
		a.base = &contextBase{flags: cmd.Flags(), cfg: a.cfg, auditLog: a.auditLog, fromEnv: maps.Clone(a.fromEnv)}
		return nil
	}
	c, err := f.Get(named)
	if err != nil {
		if a.contextName == "" {
			return usageErr("current-context: %w", err)
		}
		return a.envNamed(usageErr("--context %s: %w", named, err))
	}
	return a.useContext(cmd.Flags(), c, path)
}

// contextBase is what flags and environment gave, before a context filled
// the rest: where a switch to another context starts from.
type contextBase struct {
	flags    *pflag.FlagSet
	cfg      rabbit.Config
	auditLog string
	fromEnv  map[string]string
}

// useContext fills from c every flag the command line and the environment
// left unset, keeping first what they gave (a.base) for a later switch.
func (a *app) useContext(flags *pflag.FlagSet, c contexts.Context, path string) error {
	if a.base == nil {
		a.base = &contextBase{flags: flags, cfg: a.cfg, auditLog: a.auditLog, fromEnv: maps.Clone(a.fromEnv)}
	}
	a.context = c.Name
	for _, s := range contextFlags(c) {
		fl := flags.Lookup(s.flag)
		if s.value == "" || fl == nil || fl.Changed || a.base.fromEnv[s.flag] != "" {
			continue
		}
		if err := fl.Value.Set(s.value); err != nil {
			return usageErr("context %s in %s: %s: %s", c.Name, path, s.flag, secret.RedactText(err.Error(), s.value))
		}
		if a.fromEnv == nil {
			a.fromEnv = map[string]string{}
		}
		// Errors about the value name where it came from.
		a.fromEnv[s.flag] = "context " + c.Name + "'s " + s.flag
	}
	if c.ReadOnly {
		if !a.cfg.ReadOnly {
			if fl := flags.Lookup("read-only"); fl != nil && (fl.Changed || a.base.fromEnv["read-only"] != "") {
				return usageErr("context %s is read-only: --read-only=false cannot lift that (edit %s)", c.Name, path)
			}
		}
		a.cfg.ReadOnly = true
	}
	// The file's password variable is read when a client is made
	// (credentials), as --password-file is: the command line or the
	// environment may still give one.
	if fl := flags.Lookup("password-file"); c.PasswordEnv != "" && fl != nil && !fl.Changed && a.base.fromEnv["password-file"] == "" {
		a.contextPasswordEnv = c.PasswordEnv
	}
	return nil
}

// switchContext makes name the context in use for the rest of the run
// (the TUI's context switcher): what flags and environment gave stays,
// the previous context's values go (a key the new one lacks returns to
// its default), and the file is read again. Callers hold a.mu.
func (a *app) switchContext(name string) error {
	if a.base == nil {
		return errors.New("no context in use to switch from")
	}
	path, err := a.configPath()
	if err != nil {
		return err
	}
	f, err := contexts.Load(path)
	if err != nil {
		return err
	}
	c, err := f.Get(name)
	if err != nil {
		return err
	}
	// Back to what defaults, flags and environment gave (the flags'
	// values point into a.cfg), then the new context on top.
	base := a.base
	a.cfg, a.auditLog, a.fromEnv = base.cfg, base.auditLog, maps.Clone(base.fromEnv)
	a.cfg.Conventions = f.Table // as the file says now
	a.context, a.contextPasswordEnv = "", ""
	return a.useContext(base.flags, c, path)
}

// contextState is the configuration a context switch changes.
type contextState struct {
	cfg               rabbit.Config
	auditLog          string
	fromEnv           map[string]string
	context, password string
}

func (a *app) saveContext() contextState {
	return contextState{a.cfg, a.auditLog, maps.Clone(a.fromEnv), a.context, a.contextPasswordEnv}
}

func (a *app) restoreContext(s contextState) {
	a.cfg, a.auditLog, a.fromEnv, a.context, a.contextPasswordEnv = s.cfg, s.auditLog, s.fromEnv, s.context, s.password
}

// contextList lists the config file's contexts for the TUI's switcher
// (nil when there is no file or it cannot be read: no switcher).
func (a *app) contextList() []string {
	if a.base == nil {
		return nil
	}
	path, err := a.configPath()
	if err != nil {
		return nil
	}
	f, err := contexts.Load(path)
	if err != nil {
		return nil
	}
	return f.Names()
}

// contextPassword is the password the context's password-env names, ""
// when the context names none; an unset or empty variable is an error
// naming it.
func (a *app) contextPassword() (string, error) {
	if a.contextPasswordEnv == "" {
		return "", nil
	}
	v := os.Getenv(a.contextPasswordEnv)
	if v == "" {
		return "", usageErr("context %s: $%s (its password-env) is not set", a.context, a.contextPasswordEnv)
	}
	return v, nil
}

func newContextCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "context",
		Short: "List, show and choose the named brokers of the config file",
		Long: `A context is a named broker in ladder's config file (TOML, as rabbitmqadmin v2's;
$LADDER_CONFIG or --config, else config.toml in ~/.config/ladder, or
$XDG_CONFIG_HOME/ladder). Its keys are the global flags' names:

  current-context = "staging"

  [contexts.prod]
  amqp-url      = "amqps://ladder@rabbit.prod:5671/"
  api-url       = "https://rabbit.prod:15671"
  vhost         = "orders"
  ca-cert       = "~/.config/ladder/prod-ca.pem"
  read-only     = true
  audit-log     = "~/ladder-prod-audit.jsonl"
  password-file = "~/.config/ladder/prod.password"

--context NAME ($LADDER_CONTEXT) picks one, else current-context does.
Flags and environment win over the file, except that a read-only context
stays read-only. A password never lives in the file: a URL holding one is
refused; name a password-file (refused when others may read it) or a
password-env (an environment variable's name) instead. The context's name
is in the TUI's title and in every audit line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newContextListCmd(a), newContextShowCmd(a), newContextUseCmd(a))
	return cmd
}

// loadContexts reads the config file for the context commands.
func (a *app) loadContexts() (*contexts.File, error) {
	path, err := a.configPath()
	if err != nil {
		return nil, usageErr("%w", err)
	}
	f, err := contexts.Load(path)
	if errors.Is(err, contexts.ErrNoFile) {
		return nil, usageErr("no config file %s (ladder context --help shows its format)", path)
	}
	if err != nil {
		return nil, usageErr("%w", err)
	}
	return f, nil
}

// contextJSON is one context in -o json: what it sets, and where its
// password comes from, never the password.
type contextJSON struct {
	Name               string `json:"name"`
	Current            bool   `json:"current"`
	AMQPURL            string `json:"amqp_url,omitempty"`
	APIURL             string `json:"api_url,omitempty"`
	PrometheusURL      string `json:"prometheus_url,omitempty"`
	Vhost              string `json:"vhost,omitempty"`
	CACert             string `json:"ca_cert,omitempty"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify"`
	ReadOnly           bool   `json:"read_only"`
	AuditLog           string `json:"audit_log,omitempty"`
	APITimeout         string `json:"api_timeout,omitempty"`
	Password           string `json:"password"`
}

func contextView(f *contexts.File, c contexts.Context) contextJSON {
	return contextJSON{
		Name: c.Name, Current: f.Current == c.Name,
		AMQPURL: secret.RedactURL(c.AMQPURL), APIURL: secret.RedactURL(c.APIURL), PrometheusURL: secret.RedactURL(c.PrometheusURL),
		Vhost: c.Vhost, CACert: c.CACert, InsecureSkipVerify: c.InsecureSkipVerify, ReadOnly: c.ReadOnly,
		AuditLog: c.AuditLog, APITimeout: c.APITimeout, Password: passwordSource(c),
	}
}

// passwordSource says where a context's password comes from, never what
// it is.
func passwordSource(c contexts.Context) string {
	switch {
	case c.PasswordFile != "" && c.AllowReadablePasswordFile:
		return "file " + c.PasswordFile + " (others may read it: allowed)"
	case c.PasswordFile != "":
		return "file " + c.PasswordFile
	case c.PasswordEnv != "":
		state := "not set"
		if os.Getenv(c.PasswordEnv) != "" {
			state = "set"
		}
		return "$" + c.PasswordEnv + " (" + state + ")"
	}
	return "none (asked on a terminal when a URL names a user)"
}

func newContextListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the contexts of the config file (* marks the current one)",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			f, err := a.loadContexts()
			if err != nil {
				return err
			}
			views := []contextJSON{}
			for _, n := range f.Names() {
				views = append(views, contextView(f, f.Contexts[n]))
			}
			if a.json() {
				return writeJSON(a.stdout, views)
			}
			rows := [][]string{{"CURRENT", "NAME", "AMQP URL", "VHOST", "READ-ONLY"}}
			for _, v := range views {
				cur := ""
				if v.Current {
					cur = "*"
				}
				rows = append(rows, []string{cur, clean(v.Name), clean(orDash(v.AMQPURL)), clean(orDash(v.Vhost)), strconv.FormatBool(v.ReadOnly)})
			}
			if len(views) == 0 {
				_, err = fmt.Fprintf(a.stdout, "no contexts in %s\n", clean(f.Path))
				return err
			}
			_, err = io.WriteString(a.stdout, table(rows))
			return err
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func newContextShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show [NAME]",
		Short: "Show a context (default: the one in use); never its password",
		Args:  cobra.MaximumNArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			return a.contextNames(args)
		},
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := a.loadContexts()
			if err != nil {
				return err
			}
			name := f.Current
			if a.contextName != "" {
				name = a.contextName
			}
			if len(args) == 1 {
				name = args[0]
			}
			if name == "" {
				return usageErr("no context named and no current-context in %s", f.Path)
			}
			c, err := f.Get(name)
			if err != nil {
				return usageErr("%w", err)
			}
			v := contextView(f, c)
			if a.json() {
				return writeJSON(a.stdout, v)
			}
			rows := [][]string{
				{"name", v.Name}, {"current", strconv.FormatBool(v.Current)},
				{"amqp-url", orDash(v.AMQPURL)}, {"api-url", orDash(v.APIURL)}, {"prometheus-url", orDash(v.PrometheusURL)},
				{"vhost", orDash(v.Vhost)}, {"ca-cert", orDash(v.CACert)}, {"insecure-skip-verify", strconv.FormatBool(v.InsecureSkipVerify)},
				{"read-only", strconv.FormatBool(v.ReadOnly)}, {"audit-log", orDash(v.AuditLog)}, {"api-timeout", orDash(v.APITimeout)},
				{"password", v.Password},
			}
			for i := range rows {
				rows[i][1] = clean(rows[i][1])
			}
			_, err = io.WriteString(a.stdout, table(rows))
			return err
		},
	}
}

func newContextUseCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "use NAME",
		Short: "Make NAME the current context (written to the config file)",
		Args:  cobra.ExactArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			return a.contextNames(args)
		},
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := a.loadContexts()
			if err != nil {
				return err
			}
			if err := contexts.SetCurrent(f, args[0]); err != nil {
				return usageErr("%w", err)
			}
			if a.json() {
				return writeJSON(a.stdout, map[string]string{"current_context": args[0], "config": f.Path})
			}
			_, err = fmt.Fprintf(a.stdout, "current context: %s (%s)\n", clean(args[0]), clean(f.Path))
			return err
		},
	}
}

// contextNames completes a context name.
func (a *app) contextNames(args []string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	path, err := a.configPath()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	f, err := contexts.Load(path)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return f.Names(), cobra.ShellCompDirectiveNoFileComp
}

// isContextCmd: the context commands read the file themselves; a broken
// context must not stop them from showing it.
func isContextCmd(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Name() == "context" && c.Parent() != nil && !c.Parent().HasParent() {
			return true
		}
	}
	return false
}
