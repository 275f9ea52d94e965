package secret

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

const redacted = "xxxxx"

// RedactURL hides the password of a URL. Input that is not a plain
// scheme://[user[:password]@]host… URL loses everything before its last
// "@" ("xxxxx@host:5677"): whatever its shape (u:pw@h without a scheme,
// amqp:/u:pw@h, a password with an unencoded "/"), nothing that may be a
// password survives.
func RedactURL(raw string) string {
	if u, ok := PlainURL(raw); ok {
		if _, has := u.User.Password(); has {
			return RedactedURL(u, u.User.Username(), true)
		}
		return raw
	}
	if at := strings.LastIndex(raw, "@"); at >= 0 {
		return RedactText(redacted + raw[at:])
	}
	if _, err := url.Parse(raw); err != nil && strings.Contains(raw, "://") {
		// scheme://u:pw with the host left out: the "port" may be the
		// password.
		return "(not a valid URL)"
	}
	return RedactText(raw)
}

// PlainURL parses raw when it is scheme://[userinfo@]host… with no "@"
// after its host part. Go's parser takes "u:pa/ss@h" as host "u:pa" and
// path "/ss@h", "u:@#pw@h" as user "u" and fragment "pw@h", "amqps:u:pw@h"
// as opaque and "u:pw@h" as scheme "u": none of those may be shown as
// they are. (A vhost holding "@" is written %40.)
func PlainURL(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Opaque != "" || !strings.HasPrefix(raw[len(u.Scheme):], "://") {
		return nil, false
	}
	rest := raw[len(u.Scheme)+3:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 && strings.Contains(rest[i:], "@") {
		return nil, false
	}
	return u, true
}

// RedactedURL is the one way a URL is shown: u with user (when given) and
// "xxxxx" for a password it had, "amqp://guest:xxxxx@h/", for AMQP, API
// and Prometheus URLs alike.
func RedactedURL(u *url.URL, user string, hasPassword bool) string {
	out := *u
	switch {
	case hasPassword:
		out.User = url.UserPassword(user, redacted)
	case user != "":
		out.User = url.User(user)
	default:
		out.User = nil
	}
	return out.String()
}

// userinfo matches scheme://user:password@ in free text.
// The password runs to the last "@" before a quote or line end: a mistyped
// one may hold "/", "@" or spaces. Over-redacting is the safe mistake.
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):[^"'\n]*@`)

// RedactText hides the password of every URL found in s and any of the given
// secrets appearing bare (an error may quote a password on its own). A URL
// keeps its user name: "amqp://guest:xxxxx@", never "xxxxx:xxxxx@", even
// when a secret is the same word.
func RedactText(s string, secrets ...string) string {
	var b strings.Builder
	last := 0
	var users []string
	for _, m := range userinfo.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(replaceSecrets(s[last:m[0]], secrets))
		b.WriteString(s[m[2]:m[3]] + ":" + redacted + "@")
		users = append(users, s[m[2]:m[3]])
		last = m[1]
	}
	b.WriteString(replaceSecrets(s[last:], secrets))
	// A secret the pieces split (a password ending in a quote ends the
	// pattern's match early) is hidden in the whole, unless it is part of
	// a user name kept.
	out := b.String()
	for _, sec := range secrets {
		if !slices.ContainsFunc(users, func(u string) bool { return strings.Contains(u, sec) }) {
			out = replaceSecrets(out, []string{sec})
		}
	}
	return out
}

func replaceSecrets(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 3 { // short strings like "a" would mangle unrelated text
			s = strings.ReplaceAll(s, sec, redacted)
		}
	}
	return s
}

// redactedError keeps the chain for errors.Is/As while its text is safe.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Reworded is err told in msg's words (already redacted): errors.Is and
// As still see err, its text is never shown.
func Reworded(msg string, err error) error { return &redactedError{msg: msg, err: err} }

// redactErr returns err with any URL password (and the passwords in urls) hidden.
func redactErr(err error, urls ...string) error {
	var secrets []string
	for _, raw := range urls {
		secrets = append(secrets, SecretsOf(raw)...)
	}
	return RedactSecrets(err, secrets...)
}

// SecretsOf is the password of a URL as it may appear in text (plain and
// escaped); none when it is the user name, which is shown anyway.
func SecretsOf(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return nil
	}
	p, _ := u.User.Password()
	out := SecretForms(u.User.Username(), p)
	// As typed, escapes and all: errors quote the URL given.
	if typed := TypedPassword(raw); typed != "" && typed != p && len(out) > 0 {
		out = append(out, typed)
	}
	return out
}

// TypedPassword is the password of raw as it is written in it (before
// percent-decoding), "" when its authority holds none or it is the user
// name (shown anyway: hiding it would print "xxxxx:xxxxx@").
func TypedPassword(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	user, pw, _ := strings.Cut(rest[:at], ":")
	if pw == user {
		return ""
	}
	return pw
}

func SecretForms(user, pass string) []string {
	if pass == "" || pass == user {
		return nil
	}
	return []string{pass, url.QueryEscape(pass), url.PathEscape(pass)}
}

// RedactSecrets returns err with URL passwords and the bare secrets hidden.
func RedactSecrets(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := RedactText(err.Error(), secrets...)
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}
