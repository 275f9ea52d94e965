package contexts

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ladder-tui/ladder/retry"
)

// ConventionSpec is a retry convention a user declares in the config file,
// for a framework (or a team's own code) ladder's table does not know:
//
//	[conventions.acme-jobs]
//	count            = "header:x-acme-tries"      # or "body:meta.tries"
//	count-is-attempt = true                        # it numbers attempts: the first is 1
//	error            = "header:x-acme-error"
//	error-type       = "header:x-acme-error-class"
//	error-time       = "body:meta.failedAt"
//	stack-trace      = "body:meta.trace"
//	origin-queue     = "header:x-acme-queue"      # headers only: moves read headers
//	origin-exchange  = "header:x-acme-topic"
//	marks            = ["x-acme-tries"]           # headers only it writes
//	error-queues     = ["{queue}.graveyard"]      # its dead end of a work queue
//	delay-queues     = ["{queue}.later"]          # held by its workers until due
//
// A path is header:NAME (NAME/KEY for a key of a table header, NAME#K.K
// for a field of JSON text in a header) or body:K.K (a field of a JSON
// body). Each field takes one path or a list, the first readable wins.
type ConventionSpec struct {
	Short            string   `toml:"short"`
	Count            Paths    `toml:"count"`
	CountIsAttempt   bool     `toml:"count-is-attempt"`
	Error            Paths    `toml:"error"`
	ErrorType        Paths    `toml:"error-type"`
	ErrorTime        Paths    `toml:"error-time"`
	TimeIsMillis     bool     `toml:"time-is-millis"`
	StackTrace       Paths    `toml:"stack-trace"`
	OriginQueue      Paths    `toml:"origin-queue"`
	OriginExchange   Paths    `toml:"origin-exchange"`
	OriginRoutingKey Paths    `toml:"origin-routing-key"`
	Marks            []string `toml:"marks"`
	ErrorQueues      []string `toml:"error-queues"`
	DelayQueues      []string `toml:"delay-queues"`
}

// Paths is one path or a list of them.
type Paths []string

// UnmarshalTOML takes a string or an array of strings.
func (p *Paths) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		*p = Paths{v}
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("want a path or a list of paths, got %T in the list", e)
			}
			*p = append(*p, s)
		}
	default:
		return fmt.Errorf("want a path (\"header:NAME\" or \"body:FIELD\") or a list of them, got %T", v)
	}
	return nil
}

// conventionTable checks f's declared conventions and makes the table
// every reader reads them through (first, before the built-in ones).
func (f *File) conventionTable() (retry.Table, error) {
	names := make([]string, 0, len(f.Conventions))
	for name := range f.Conventions {
		names = append(names, name)
	}
	slices.Sort(names)
	var declared []retry.Convention
	for _, name := range names {
		c, err := f.Conventions[name].convention(name, f.Path)
		if err != nil {
			return retry.Table{}, fmt.Errorf("convention %s: %w", strconvQuote(name), err)
		}
		declared = append(declared, c)
	}
	return retry.NewTable(declared)
}

// convention is s as the retry engine reads it.
func (s ConventionSpec) convention(name, path string) (retry.Convention, error) {
	if !validName.MatchString(name) {
		return retry.Convention{}, errors.New("a name is 1 to 64 letters, digits, '.', '_', '-' or '@'")
	}
	c := retry.Convention{
		Name: name, Short: s.Short, Source: "config file " + path,
		CountIsAttempt: s.CountIsAttempt, TimeIsMillis: s.TimeIsMillis,
		Marks: s.Marks, ErrorQueues: s.ErrorQueues, DelayQueues: s.DelayQueues,
	}
	if c.Short == "" {
		c.Short = strings.ToLower(name[:min(3, len(name))])
	}
	if len([]rune(c.Short)) > 3 {
		return retry.Convention{}, fmt.Errorf("short %q: three letters at most (it names the convention in narrow columns)", c.Short)
	}
	c.QueueNames = append(append([]string{"{queue}"}, s.ErrorQueues...), s.DelayQueues...)
	for _, f := range []struct {
		key  string
		in   Paths
		into *[]string
	}{
		{"count", s.Count, &c.Count}, {"error", s.Error, &c.Error}, {"error-type", s.ErrorType, &c.ErrorType},
		{"error-time", s.ErrorTime, &c.ErrorTime}, {"stack-trace", s.StackTrace, &c.StackTrace},
		{"origin-queue", s.OriginQueue, &c.OriginQueue}, {"origin-exchange", s.OriginExchange, &c.OriginExchange},
		{"origin-routing-key", s.OriginRoutingKey, &c.OriginRoutingKey},
	} {
		for _, p := range f.in {
			if strings.HasPrefix(f.key, "origin-") && strings.HasPrefix(p, "body:") {
				return retry.Convention{}, fmt.Errorf("%s %s: origins are read from headers only (a move reads a message's headers, not its body)", f.key, strconvQuote(p))
			}
			internal, err := enginePath(p)
			if err != nil {
				return retry.Convention{}, fmt.Errorf("%s %s: %w", f.key, strconvQuote(p), err)
			}
			*f.into = append(*f.into, internal)
		}
	}
	return c, nil
}

// enginePath is a user's path (header:NAME, body:FIELD) in the engine's
// syntax (retry.Convention).
func enginePath(p string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "header:"); ok && strings.TrimSpace(rest) != "" {
		return rest, nil
	}
	if rest, ok := strings.CutPrefix(p, "body:"); ok && strings.TrimSpace(rest) != "" {
		return "body#" + rest, nil
	}
	return "", errors.New(`want "header:NAME" (NAME/KEY inside a table, NAME#FIELD inside JSON text) or "body:FIELD.FIELD"`)
}
