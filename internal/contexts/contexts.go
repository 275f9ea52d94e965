// Package contexts reads ladder's config file: named brokers, "contexts",
// as kubectl's kubeconfig and rabbitmqadmin v2's config name theirs, so an
// engineer who looks after staging, prod and two regions picks one by name
// (--context prod) instead of repeating URLs, vhost, CA file and read-only
// on every run. The file is TOML (rabbitmqadmin v2's format), its keys
// those of ladder's flags:
//
//	current-context = "staging"
//
//	[contexts.prod]
//	amqp-url      = "amqps://ladder@rabbit.prod:5671/"
//	api-url       = "https://rabbit.prod:15671"
//	vhost         = "orders"
//	ca-cert       = "~/.config/ladder/prod-ca.pem"
//	read-only     = true
//	audit-log     = "~/ladder-prod-audit.jsonl"
//	password-file = "~/.config/ladder/prod.password"   # or password-env = "PROD_RABBIT_PASSWORD"
//
// It may also teach ladder retry conventions of its own ([conventions.NAME],
// see ConventionSpec), read for every context.
//
// A password never lives in the file: a URL holding one is refused, and a
// context names a password file (read by secret.ReadFile: refused
// when others may read it) or an environment variable instead.
package contexts

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/ladder-tui/ladder/retry"
)

// EnvConfig names the config file instead of the default path.
const EnvConfig = "LADDER_CONFIG"

// ErrNoFile: the config file does not exist.
var ErrNoFile = errors.New("no config file")

// File is the config file as read.
type File struct {
	// Path is where it was read from.
	Path string `toml:"-"`
	// Current is the context used when none is named (ladder context use).
	Current  string             `toml:"current-context"`
	Contexts map[string]Context `toml:"contexts"`
	// Conventions are the retry conventions the user declares
	// ([conventions.NAME], see ConventionSpec); Table reads them first.
	Conventions map[string]ConventionSpec `toml:"conventions"`
	Table       retry.Table               `toml:"-"`
}

// Context is one named broker. Empty fields leave ladder's defaults (and
// flags and environment always win over the file, but never over
// ReadOnly: a read-only context stays read-only).
type Context struct {
	Name               string `toml:"-"`
	AMQPURL            string `toml:"amqp-url"`
	APIURL             string `toml:"api-url"`
	PrometheusURL      string `toml:"prometheus-url"`
	Vhost              string `toml:"vhost"`
	CACert             string `toml:"ca-cert"`
	InsecureSkipVerify bool   `toml:"insecure-skip-verify"`
	ReadOnly           bool   `toml:"read-only"`
	AuditLog           string `toml:"audit-log"`
	// PasswordFile or PasswordEnv (at most one) hold the password of a
	// URL that names a user without one.
	PasswordFile string `toml:"password-file"`
	PasswordEnv  string `toml:"password-env"`
	// AllowReadablePasswordFile accepts a password file others may read
	// (a Kubernetes secret mounted with its default 0644).
	AllowReadablePasswordFile bool   `toml:"allow-readable-password-file"`
	APITimeout                string `toml:"api-timeout"`
}

// DefaultPath is $LADDER_CONFIG, else config.toml in ladder's directory of
// the user's config directory ($XDG_CONFIG_HOME/ladder, ~/.config/ladder;
// ~/Library/Application Support/ladder on macOS).
func DefaultPath() (string, error) {
	if p := os.Getenv(EnvConfig); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("config file: %w (set $%s)", err, EnvConfig)
	}
	return filepath.Join(dir, "ladder", "config.toml"), nil
}

// maxFile bounds what Load reads: a config file, not a file named by
// mistake.
const maxFile = 1 << 20

// Load reads and checks the config file at path. A missing file is
// ErrNoFile; every other error names the file and, where it can, the
// context and key.
func Load(path string) (*File, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoFile)
	}
	if err != nil {
		return nil, fmt.Errorf("config file %w", err)
	}
	if fi.IsDir() || fi.Size() > maxFile {
		return nil, fmt.Errorf("config file %s: not a config file (a directory, or over 1 MiB)", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file %w", err)
	}
	return parse(path, data)
}

// parse is Load of data read from path.
func parse(path string, data []byte) (*File, error) {
	f := &File{Path: path}
	md, err := toml.Decode(string(data), f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("config file %s: line %d: %s", path, pe.Position.Line, oneLine(pe.Message))
		}
		return nil, fmt.Errorf("config file %s: %s", path, oneLine(err.Error()))
	}
	if und := md.Undecoded(); len(und) > 0 {
		if strings.HasPrefix(und[0].String(), "conventions.") {
			return nil, fmt.Errorf("config file %s: unknown key %s (a convention's keys: count, count-is-attempt, error, error-type, error-time, stack-trace, origin-queue, origin-exchange, origin-routing-key, marks, error-queues, delay-queues, short)", path, strconvQuote(und[0].String()))
		}
		return nil, fmt.Errorf("config file %s: unknown key %s (keys are the flags' names: amqp-url, vhost, read-only…)", path, strconvQuote(und[0].String()))
	}
	for name, c := range f.Contexts {
		c.Name = name
		if err := c.check(filepath.Dir(path)); err != nil {
			return nil, fmt.Errorf("config file %s: context %s: %w", path, strconvQuote(name), err)
		}
		f.Contexts[name] = c
	}
	t, err := f.conventionTable()
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	f.Table = t
	return f, nil
}

// validName: a context name is typed on the command line and shown on
// screens: letters, digits and . _ - @ only.
var validName = regexp.MustCompile(`^[\p{L}\p{N}._@-]{1,64}$`)

// check validates c and makes its paths absolute: ~/ is the home
// directory, a relative path is relative to the file's directory.
func (c *Context) check(dir string) error {
	if !validName.MatchString(c.Name) {
		return errors.New("a name is 1 to 64 letters, digits, '.', '_', '-' or '@'")
	}
	for _, u := range []struct{ key, raw string }{{"amqp-url", c.AMQPURL}, {"api-url", c.APIURL}, {"prometheus-url", c.PrometheusURL}} {
		if u.raw == "" {
			continue
		}
		p, err := url.Parse(u.raw)
		if err != nil {
			// url's error quotes the URL, and with it a password.
			return fmt.Errorf("%s is not a URL", u.key)
		}
		if _, has := p.User.Password(); has {
			return fmt.Errorf("%s holds a password: keep it out of the file (password-file or password-env)", u.key)
		}
	}
	if c.PasswordFile != "" && c.PasswordEnv != "" {
		return errors.New("password-file and password-env are both set: keep one")
	}
	if c.PasswordEnv != "" && !validEnv.MatchString(c.PasswordEnv) {
		return errors.New("password-env is the name of an environment variable (PROD_RABBIT_PASSWORD), not its value")
	}
	for _, p := range []*string{&c.CACert, &c.AuditLog, &c.PasswordFile} {
		if *p == "" {
			continue
		}
		abs, err := expand(*p, dir)
		if err != nil {
			return err
		}
		*p = abs
	}
	return nil
}

var validEnv = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func expand(p, dir string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%s: %w", p, err)
		}
		return filepath.Join(home, rest), nil
	}
	if filepath.IsAbs(p) {
		return p, nil
	}
	return filepath.Join(dir, p), nil
}

// Names lists the contexts by name.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Contexts))
	for n := range f.Contexts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Get returns the context called name.
func (f *File) Get(name string) (Context, error) {
	if c, ok := f.Contexts[name]; ok {
		return c, nil
	}
	have := "it has none"
	if len(f.Contexts) > 0 {
		have = "it has " + strings.Join(f.Names(), ", ")
	}
	return Context{}, fmt.Errorf("no context %s in %s (%s)", strconvQuote(name), f.Path, have)
}

// SetCurrent makes name the file's current context, keeping the rest of
// the file as written (comments and order): the top-level
// current-context line is replaced, or added first. The file is replaced
// whole (written beside it, then renamed), with its permissions.
func SetCurrent(f *File, name string) error {
	if _, err := f.Get(name); err != nil {
		return err
	}
	b, err := os.ReadFile(f.Path)
	if err != nil {
		return fmt.Errorf("config file %w", err)
	}
	fi, err := os.Stat(f.Path)
	if err != nil {
		return fmt.Errorf("config file %w", err)
	}
	line := "current-context = " + tomlQuote(name)
	lines := strings.SplitAfter(string(b), "\n")
	done := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			break // a table: no top-level key after it
		}
		if k, _, ok := strings.Cut(t, "="); ok && strings.Trim(strings.TrimSpace(k), `"`) == "current-context" {
			lines[i] = line + "\n"
			done = true
			break
		}
	}
	out := strings.Join(lines, "")
	if !done {
		out = line + "\n" + out
	}
	// What is written must read back as asked: a hand-made file in a
	// shape this edit does not know is left alone.
	var check File
	if _, err := toml.Decode(out, &check); err != nil || check.Current != name {
		return fmt.Errorf("config file %s: current-context could not be set in place; set it by hand", f.Path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), ".config-*.toml")
	if err != nil {
		return fmt.Errorf("config file %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(out); err != nil {
		tmp.Close()
		return fmt.Errorf("config file %s: %w", f.Path, err)
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		tmp.Close()
		return fmt.Errorf("config file %s: %w", f.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("config file %s: %w", f.Path, err)
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("config file %w", err)
	}
	f.Current = name
	return nil
}

func tomlQuote(s string) string {
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(map[string]string{"k": s}); err != nil {
		return `""`
	}
	_, v, _ := strings.Cut(strings.TrimSpace(b.String()), "= ")
	return v
}

// strconvQuote quotes a name from the file for an error line: control
// runes escaped, so nothing in it acts on the terminal.
func strconvQuote(s string) string {
	return fmt.Sprintf("%q", s)
}

func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || unicode.IsControl(r) }), " ")
}
