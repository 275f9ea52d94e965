package retry

import (
	"errors"
	"fmt"
	"strings"
)

// Table is the conventions a reader knows: those a user declared (in
// ladder's config file, `[conventions.NAME]`) before the built-in ones, so
// a team's own word about its own headers comes first. The zero Table is
// the built-in table alone. It is passed, never global: the vhost a client
// reads carries it (topology.Vhost.Conventions), and every reader of that
// vhost (discovery, peek, the planner) reads through it.
type Table struct {
	declared []Convention
	all      []Convention
}

// NewTable checks each declared convention (Convention.Check) and makes
// the table that reads them first.
func NewTable(declared []Convention) (Table, error) {
	seen := map[string]bool{}
	for i := range conventions {
		seen[strings.ToLower(conventions[i].Name)] = true
	}
	for i := range declared {
		c := &declared[i]
		if seen[strings.ToLower(c.Name)] {
			return Table{}, fmt.Errorf("convention %q: a convention of that name exists already", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
		if err := c.Check(); err != nil {
			return Table{}, fmt.Errorf("convention %q: %w", c.Name, err)
		}
	}
	t := Table{declared: append([]Convention(nil), declared...)}
	t.all = append(append([]Convention(nil), declared...), conventions[:]...)
	return t, nil
}

// All is every convention the table reads, in its order: the declared
// ones, then the built-in ones.
func (t Table) All() []Convention {
	if t.all == nil {
		return conventions[:]
	}
	return t.all
}

// Declared are the conventions a user declared.
func (t Table) Declared() []Convention { return t.declared }

// ReadMessage is the package's ReadMessage through t.
func (t Table) ReadMessage(h Headers, body []byte, deathQueues map[string]bool) RetryState {
	return readMessage(t.All(), h, body, deathQueues)
}

// ShortName is the Short of the convention named name, "" when none is.
func (t Table) ShortName(name string) string {
	for _, c := range t.All() {
		if c.Name == name {
			return c.Short
		}
	}
	return ""
}

// Check says what is wrong with a convention as a user may declare it: a
// name, something to read or name, and well-formed paths (see Convention);
// origins are read from headers only (a move reads headers), and a queue
// naming holds {queue} at most once.
func (c *Convention) Check() error {
	if strings.TrimSpace(c.Name) == "" {
		return errors.New("no name")
	}
	fields := []struct {
		key    string
		paths  []string
		origin bool
	}{
		{"count", c.Count, false}, {"error", c.Error, false}, {"error-type", c.ErrorType, false},
		{"error-time", c.ErrorTime, false}, {"stack-trace", c.StackTrace, false}, {"due-time", c.DueTime, false},
		{"origin-queue", c.OriginQueue, true}, {"origin-exchange", c.OriginExchange, true}, {"origin-routing-key", c.OriginRoutingKey, true},
	}
	any := len(c.ErrorQueues)+len(c.DelayQueues)+len(c.WaitQueues) > 0
	for _, f := range fields {
		for _, p := range f.paths {
			any = true
			if err := checkPath(p); err != nil {
				return fmt.Errorf("%s %q: %w", f.key, p, err)
			}
			if f.origin && strings.HasPrefix(p, bodyPath+"#") {
				return fmt.Errorf("%s %q: origins are read from headers only (a move reads a message's headers, not its body)", f.key, p)
			}
		}
	}
	if !any {
		return errors.New("nothing to read: give count, error or origin-queue (a header or body path), or error-queues")
	}
	for _, pats := range [][]string{c.ErrorQueues, c.DelayQueues, c.QueueNames} {
		for _, p := range pats {
			if strings.TrimSpace(p) == "" || strings.Count(p, "{queue}") > 1 {
				return fmt.Errorf("queue naming %q: want a name, with {queue} at most once for the work queue", p)
			}
		}
	}
	for _, m := range append(append([]string(nil), c.Marks...), c.Requires...) {
		if strings.TrimSpace(m) == "" {
			return errors.New("an empty header name among marks or requires")
		}
	}
	return nil
}

// checkPath says what is wrong with one path (see Convention).
func checkPath(p string) error {
	switch {
	case strings.TrimSpace(p) == "":
		return errors.New("empty")
	case strings.HasPrefix(p, "{"):
		if strings.Count(p, "{") != strings.Count(p, "}") {
			return errors.New("unbalanced braces")
		}
		return nil
	}
	if hdr, field, ok := strings.Cut(p, "#"); ok {
		if hdr == "" || field == "" || strings.HasPrefix(field, ".") || strings.HasSuffix(field, ".") || strings.Contains(field, "..") {
			return errors.New("want HEADER#FIELD.FIELD or body#FIELD.FIELD")
		}
		return nil
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" {
			return errors.New("an empty table key")
		}
	}
	return nil
}
