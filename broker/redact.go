package broker

import (
	"net/url"
	"regexp"
	"strings"
)

const redacted = "xxxxx"

// RedactURL hides the password of a URL. Unparseable input is redacted by
// pattern, so nothing that looks like user:password@ survives.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err == nil && u.Scheme != "" {
		if _, has := u.User.Password(); has {
			return redactedURL(u, u.User.Username(), true)
		}
		return raw
	}
	return RedactText(raw)
}

// redactedURL is the one way a URL is shown: u with user (when given) and
// "xxxxx" for a password it had, "amqp://guest:xxxxx@h/", for AMQP, API
// and Prometheus URLs alike.
func redactedURL(u *url.URL, user string, hasPassword bool) string {
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
	for _, m := range userinfo.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(replaceSecrets(s[last:m[0]], secrets))
		b.WriteString(s[m[2]:m[3]] + ":" + redacted + "@")
		last = m[1]
	}
	b.WriteString(replaceSecrets(s[last:], secrets))
	return b.String()
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

// redactErr returns err with any URL password (and the passwords in urls) hidden.
func redactErr(err error, urls ...string) error {
	var secrets []string
	for _, raw := range urls {
		secrets = append(secrets, secretsOf(raw)...)
	}
	return redactSecrets(err, secrets...)
}

// secretsOf is the password of a URL as it may appear in text (plain and
// escaped); none when it is the user name, which is shown anyway.
func secretsOf(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return nil
	}
	p, _ := u.User.Password()
	return secretForms(u.User.Username(), p)
}

func secretForms(user, pass string) []string {
	if pass == "" || pass == user {
		return nil
	}
	return []string{pass, url.QueryEscape(pass), url.PathEscape(pass)}
}

// redactSecrets returns err with URL passwords and the bare secrets hidden.
func redactSecrets(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := RedactText(err.Error(), secrets...)
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}
