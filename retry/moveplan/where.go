package moveplan

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ladder-tui/ladder/retry"
)

// Subject is what a --where expression looks at in one message.
type Subject struct {
	Headers retry.Headers
	// Deaths are its x-death entries, most recent first.
	Deaths []retry.Death
	Origin *retry.Origin
	Retry  retry.RetryState
	Body   []byte
	// Timestamp is the publisher's timestamp property (zero when none).
	Timestamp time.Time
}

// SubjectOf decodes what --where needs from a message's headers and body,
// read by the conventions of t (its vhost's).
func SubjectOf(t retry.Table, h retry.Headers, deathQueues, mains map[string]bool, body []byte, ts time.Time) Subject {
	x := retry.DecodeXDeath(h)
	s := Subject{Headers: h, Deaths: x.Deaths, Retry: t.ReadMessage(h, body, deathQueues), Body: body, Timestamp: ts}
	if o, ok := retry.OriginOf(x, s.Retry, mains); ok {
		s.Origin = &o
	}
	return s
}

// Where is a conjunction of --where expressions: a message is chosen when
// every one holds. The zero Where chooses every message.
type Where struct {
	conds []cond
	text  []string
}

type cond struct {
	match func(s *Subject, now time.Time) bool
	// reads is the retry state field it reads (a retry.Guessed* constant,
	// "" for none): a guessed one is named in the plan (Where.Guesses).
	reads string
}

// ParseWhere reads --where expressions (see docs/moving.md for the grammar):
//
//	reason=rejected|expired|maxlen|delivery_limit   the last death's reason
//	queue=Q                  a queue the message died in
//	origin=EXCHANGE[:KEY]    where it was published before it died
//	error~REGEX              the last error text (any convention the engine reads)
//	header:NAME=VALUE        a header's value, as text
//	header:NAME~REGEX
//	body~REGEX               text bodies only
//	age>DUR, age<DUR         since the last death, else the timestamp
//	retries>=N (also >, <, <=, =)
//
// A bad expression is an error naming it.
func ParseWhere(exprs []string) (Where, error) {
	var w Where
	for _, e := range exprs {
		c, err := parseCond(strings.TrimSpace(e))
		if err != nil {
			return Where{}, fmt.Errorf("--where %q: %w", e, err)
		}
		w.conds = append(w.conds, c)
		w.text = append(w.text, e)
	}
	return w, nil
}

// Guesses says which of the fields w chose s by were guessed from a
// field's name (retry.RetryState.Guessed), with their sources: a note the
// plan carries for that message ("" when none was).
func (w Where) Guesses(s Subject) string {
	var out []string
	for _, c := range w.conds {
		if c.reads == "" || !s.Retry.IsGuessed(c.reads) {
			continue
		}
		src := s.Retry.Source
		if c.reads == retry.GuessedError {
			src = s.Retry.ErrorSource
		}
		n := "chosen by --where on " + strings.ReplaceAll(c.reads, "_", " ") + " " + s.Retry.SourceLabel(c.reads, src)
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// Empty reports whether w chooses every message.
func (w Where) Empty() bool { return len(w.conds) == 0 }

// Exprs are the expressions as given (for reports and the audit log).
func (w Where) Exprs() []string { return w.text }

// Match reports whether every expression holds for s, seen at now.
func (w Where) Match(s Subject, now time.Time) bool {
	for _, c := range w.conds {
		if !c.match(&s, now) {
			return false
		}
	}
	return true
}

func parseCond(e string) (cond, error) {
	if rest, ok := strings.CutPrefix(e, "header:"); ok {
		if name, v, ok := strings.Cut(rest, "~"); ok && !strings.Contains(name, "=") {
			re, err := compile(v)
			if err != nil {
				return cond{}, err
			}
			return cond{match: func(s *Subject, _ time.Time) bool {
				t, ok := headerText(s.Headers, name)
				return ok && re.MatchString(t)
			}}, nil
		}
		if name, v, ok := strings.Cut(rest, "="); ok && name != "" {
			return cond{match: func(s *Subject, _ time.Time) bool {
				t, ok := headerText(s.Headers, name)
				return ok && t == v
			}}, nil
		}
		return cond{}, fmt.Errorf("want header:NAME=VALUE or header:NAME~REGEX")
	}
	for _, op := range []string{">=", "<=", "~", "=", ">", "<"} {
		field, value, ok := strings.Cut(e, op)
		if !ok || strings.ContainsAny(field, "<>=~") {
			continue
		}
		return fieldCond(field, op, value)
	}
	return cond{}, fmt.Errorf("want FIELD=VALUE, FIELD~REGEX or a comparison (reason, queue, origin, error, header:NAME, body, age, retries)")
}

func fieldCond(field, op, value string) (cond, error) {
	bad := func() (cond, error) { return cond{}, fmt.Errorf("%s does not take %q", field, op) }
	switch field {
	case "reason":
		if op != "=" {
			return bad()
		}
		r := retry.Reason(value)
		switch r {
		case retry.ReasonRejected, retry.ReasonExpired, retry.ReasonMaxlen, retry.ReasonDeliveryLimit:
		default:
			return cond{}, fmt.Errorf("reason %q: want rejected, expired, maxlen or delivery_limit", value)
		}
		return cond{match: func(s *Subject, _ time.Time) bool { return len(s.Deaths) > 0 && s.Deaths[0].Reason == r }}, nil
	case "queue":
		if op != "=" {
			return bad()
		}
		return cond{match: func(s *Subject, _ time.Time) bool {
			for _, d := range s.Deaths {
				if d.Queue == value {
					return true
				}
			}
			return false
		}}, nil
	case "origin":
		if op != "=" {
			return bad()
		}
		ex, key, hasKey := strings.Cut(value, ":")
		return cond{match: func(s *Subject, _ time.Time) bool {
			return s.Origin != nil && s.Origin.Exchange == ex && (!hasKey || s.Origin.RoutingKey == key)
		}}, nil
	case "error", "body":
		if op != "~" {
			return bad()
		}
		re, err := compile(value)
		if err != nil {
			return cond{}, err
		}
		if field == "error" {
			return cond{match: func(s *Subject, _ time.Time) bool {
				return s.Retry.LastError != "" && re.MatchString(s.Retry.LastError)
			}, reads: retry.GuessedError}, nil
		}
		return cond{match: func(s *Subject, _ time.Time) bool { return utf8.Valid(s.Body) && re.Match(s.Body) }}, nil
	case "age":
		if op != ">" && op != "<" {
			return bad()
		}
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return cond{}, fmt.Errorf("age %q: want a duration like 10m or 2h", value)
		}
		return cond{match: func(s *Subject, now time.Time) bool {
			at := s.Timestamp
			if len(s.Deaths) > 0 && !s.Deaths[0].Time.IsZero() {
				at = s.Deaths[0].Time
			}
			if at.IsZero() {
				return false // age unknown: never chosen by age
			}
			if op == ">" {
				return now.Sub(at) > d
			}
			return now.Sub(at) < d
		}}, nil
	case "retries":
		if op == "~" {
			return bad()
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return cond{}, fmt.Errorf("retries %q: want a whole number", value)
		}
		return cond{match: func(s *Subject, _ time.Time) bool {
			c := s.Retry.Count
			switch op {
			case ">=":
				return c >= n
			case "<=":
				return c <= n
			case ">":
				return c > n
			case "<":
				return c < n
			}
			return c == n
		}, reads: retry.GuessedCount}, nil
	}
	return cond{}, fmt.Errorf("unknown field %q (reason, queue, origin, error, header:NAME, body, age, retries)", field)
}

func compile(expr string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("regular expression: %w", err)
	}
	return re, nil
}

// headerText is a scalar header's value as text ([]byte as text, numbers
// in decimal); tables, arrays and absent headers have none.
func headerText(h retry.Headers, name string) (string, bool) {
	v, ok := h[name]
	if !ok {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	case nil, []any, map[string]any, retry.Headers:
		return "", false
	case time.Time:
		return x.UTC().Format(time.RFC3339), true
	}
	return fmt.Sprint(v), true
}
