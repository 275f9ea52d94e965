package broker

import (
	"errors"
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
			u.User = url.UserPassword(u.User.Username(), redacted)
			return u.String()
		}
		return raw
	}
	return RedactText(raw)
}

// userinfo matches scheme://user:password@ in free text.
// The password runs to the last "@" before a quote or line end: a mistyped
// one may hold "/", "@" or spaces. Over-redacting is the safe mistake.
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):[^"'\n]*@`)

// RedactText hides the password of every URL found in s and any of the given
// secrets appearing bare (an error may quote a password on its own).
func RedactText(s string, secrets ...string) string {
	s = userinfo.ReplaceAllString(s, "${1}:"+redacted+"@")
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
	if err == nil {
		return nil
	}
	var secrets []string
	for _, raw := range urls {
		if u, perr := url.Parse(raw); perr == nil {
			if p, ok := u.User.Password(); ok {
				secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
			}
		}
	}
	msg := RedactText(err.Error(), secrets...)
	if msg == err.Error() {
		return err
	}
	var re *redactedError
	if errors.As(err, &re) {
		return &redactedError{msg: msg, err: re.err}
	}
	return &redactedError{msg: msg, err: err}
}
