// Package rabbit is ladder's live client: AMQP 0-9-1 through amqp091-go,
// AMQP 1.0 browses through go-amqp and the management API through
// rabbit-hole. It adapts what it reads into the plain values of packages
// broker and retry, and implements every broker role (see broker.Client).
package rabbit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/internal/secret"
	"github.com/ladder-tui/ladder/retry"
)

// Defaults for a broker on the local machine.
const (
	DefaultAMQPURL  = "amqp://guest:guest@localhost:5672/"
	defaultAPIPort  = "15672"
	defaultAPITLS   = "15671"
	defaultPromPort = "15692"
	defaultPromTLS  = "15691"
)

// Config says how to reach one RabbitMQ: flags and environment end up here.
type Config struct {
	AMQPURL            string // amqp:// or amqps://
	APIURL             string // http:// or https://; "" derives it from AMQPURL
	PrometheusURL      string // http:// or https://; "" is the API host on 15692 (15691 for https)
	Vhost              string // "" takes the AMQP URL's vhost, else "/"
	CACertFile         string
	InsecureSkipVerify bool
	ReadOnly           bool
	// PasswordFile (--password-file) holds the password of every URL that
	// names a user and no password (see secret.ReadFile). It is read again
	// at every connection: a rotated file is picked up without a restart.
	PasswordFile string
	// AllowReadablePasswordFile accepts a PasswordFile others may read
	// (--allow-readable-password-file: a Kubernetes secret's default 0644).
	AllowReadablePasswordFile bool
	// Password is the same, got another way; PasswordFile is not read
	// when it is set.
	Password string
	// Secret is the same again, asked at every connection (a prompt that
	// asks once, a variable); Password and PasswordFile are not used when
	// it is set.
	Secret secret.Credentials
	// APITimeout bounds each management API and Prometheus request (0:
	// DefaultAPITimeout).
	APITimeout time.Duration
	// Conventions are the retry conventions the client reads messages by
	// (the config file's declared ones first): every vhost it reads
	// carries them (topology.Vhost.Conventions).
	Conventions retry.Table
}

// DefaultAPITimeout bounds a management API request unless --api-timeout
// says otherwise.
const DefaultAPITimeout = 15 * time.Second

// Resolved is a Config with every default applied and checked.
type Resolved struct {
	AMQPURL string // as given, without a password from a file or prompt
	AMQP    *url.URL
	// AMQPLogin logs in over AMQP (0-9-1 and 1.0): the URL's user and
	// password, or the URL's user and a password from --password-file, a
	// variable or a prompt, asked at every connection. AMQPUser is the
	// user, for messages.
	AMQPUser  string
	AMQPLogin secret.Credentials
	APIURL    *url.URL // without credentials
	APIUser   string
	APILogin  secret.Credentials
	// PrometheusURL is read only when the management API has no stats;
	// PrometheusLogin is nil when its URL names no user (no credentials
	// are sent).
	PrometheusURL   *url.URL // without credentials
	PrometheusUser  string
	PrometheusLogin secret.Credentials
	Vhost           string
	TLS             *tls.Config // nil unless a TLS URL or CA file asks for it
	ReadOnly        bool
	// APITimeout bounds each HTTP request (management API, Prometheus).
	APITimeout time.Duration
	// Conventions: Config.Conventions.
	Conventions retry.Table
	// apiUserGiven, promUserGiven: the URL held a user, shown redacted;
	// apiPassGiven, promPassGiven: and a password, shown as xxxxx.
	apiUserGiven, promUserGiven bool
	apiPassGiven, promPassGiven bool
	// typed are the URLs' passwords as written in them (escapes and
	// all), for redaction: errors quote URLs as given.
	typed []string
	// seen keeps every password the logins gave (a rotated one too),
	// for redaction; shared by every address.
	seen *secret.Seen
	// Addresses are every node given (--amqp-url a,b,c), this one first,
	// each resolved; nil for one. Reach picks the first that answers.
	Addresses []*Resolved
}

// ErrPasswordNeeded: a URL names a user but no password, and neither
// --password-file nor a prompt gave one. A terminal asks for it (the CLI
// does), anything else must say where it is.
var ErrPasswordNeeded = errors.New("password needed")

// Resolve applies defaults (API URL from the AMQP host, credentials from the
// AMQP URL, vhost from the AMQP path) and loads TLS material. Its errors
// never hold a password, whatever was given: a URL that does not parse is
// not echoed at all (see parseURL).
//
// --amqp-url, --api-url and --prometheus-url may each list several nodes,
// separated by commas (a comma in a password stays: a list is cut only
// before a scheme). The i-th API and Prometheus URL go with the i-th AMQP
// URL; one is shared by all; none is derived from each AMQP host.
func (c Config) Resolve() (*Resolved, error) {
	seen := new(secret.Seen)
	amqps := splitURLs(c.AMQPURL, "amqp", "amqps")
	apis := splitURLs(c.APIURL, "http", "https")
	proms := splitURLs(c.PrometheusURL, "http", "https")
	if len(amqps) <= 1 && len(apis) <= 1 && len(proms) <= 1 {
		return c.resolveOne(seen)
	}
	n := max(len(amqps), 1)
	pick := func(flag string, list []string, i int) (string, error) {
		switch len(list) {
		case 0:
			return "", nil
		case 1:
			return list[0], nil
		case n:
			return list[i], nil
		}
		return "", fmt.Errorf("%s lists %d URLs for %d AMQP URLs: give one, or one for each", flag, len(list), n)
	}
	var all []*Resolved
	for i := range n {
		one := c
		if len(amqps) > 0 {
			one.AMQPURL = amqps[i]
		}
		var err error
		if one.APIURL, err = pick("--api-url", apis, i); err != nil {
			return nil, err
		}
		if one.PrometheusURL, err = pick("--prometheus-url", proms, i); err != nil {
			return nil, err
		}
		r, err := one.resolveOne(seen)
		if err != nil {
			if n > 1 {
				return nil, fmt.Errorf("address %d of %d: %w", i+1, n, err)
			}
			return nil, err
		}
		all = append(all, r)
	}
	first := *all[0]
	first.Addresses = all
	for _, r := range all {
		first.typed = append(first.typed, r.typed...)
	}
	return &first, nil
}

// splitURLs cuts a comma list of URLs with these schemes; a comma not
// followed by one of them belongs to the URL (a password may hold one).
func splitURLs(raw string, schemes ...string) []string {
	if raw == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] != ',' {
			continue
		}
		rest := strings.TrimLeft(raw[i+1:], " ")
		for _, s := range schemes {
			if strings.HasPrefix(rest, s+"://") {
				out = append(out, strings.TrimSpace(raw[start:i]))
				start = len(raw) - len(rest)
				i = start - 1
				break
			}
		}
	}
	return append(out, strings.TrimSpace(raw[start:]))
}

func (c Config) resolveOne(seen *secret.Seen) (*Resolved, error) {
	raw := c.AMQPURL
	given := raw != ""
	if raw == "" {
		raw = DefaultAMQPURL
	}
	au, err := parseURL("--amqp-url", raw, amqpURLShape, "amqp", "amqps")
	if err != nil {
		return nil, err
	}
	timeout := c.APITimeout
	if timeout <= 0 {
		timeout = DefaultAPITimeout
	}
	r := &Resolved{AMQPURL: raw, AMQP: au, ReadOnly: c.ReadOnly, APITimeout: timeout, Conventions: c.Conventions, seen: seen}
	for _, u := range []string{raw, c.APIURL, c.PrometheusURL} {
		if p := secret.TypedPassword(u); len(p) >= 3 {
			r.typed = append(r.typed, p)
		}
	}

	// One source of a password (a file, a variable, a prompt) for every
	// URL naming a user without one; tried once now, so that a file
	// others may read or an unset variable stops ladder at once, and only
	// when some URL needs it. Each connection asks it again.
	var src secret.Credentials
	password := func(flag, user string) (secret.Credentials, error) {
		if src == nil {
			switch {
			case c.Secret != nil:
				src = c.Secret
			case c.Password != "":
				src = secret.Static{Password: c.Password}
			case c.PasswordFile != "":
				src = secret.Named("--password-file", secret.File{Path: c.PasswordFile, AllowReadable: c.AllowReadablePasswordFile})
			default:
				return nil, secret.Reworded(fmt.Sprintf("%s names user %s and no password: give it with --password-file FILE ($LADDER_PASSWORD_FILE), or run ladder on a terminal to be asked", flag, user), ErrPasswordNeeded)
			}
			src = seen.Watch(src)
			if _, _, err := src.Credentials(context.Background()); err != nil {
				return nil, err
			}
		}
		return secret.Login(user, src), nil
	}
	static := func(user, pass string) secret.Credentials {
		seen.Add(user, pass)
		return secret.Static{User: user, Password: pass}
	}
	switch p, has := au.User.Password(); {
	case au.User == nil:
		r.AMQPUser, r.AMQPLogin = "guest", static("guest", "guest") // as the AMQP client itself would
	case has:
		r.AMQPUser, r.AMQPLogin = au.User.Username(), static(au.User.Username(), p)
	default:
		if r.AMQPLogin, err = password("--amqp-url", au.User.Username()); err != nil {
			return nil, err
		}
		r.AMQPUser = au.User.Username()
	}

	api, user, pass, hasPass, err := httpURL("--api-url", c.APIURL, au, defaultAPIPort, defaultAPITLS, au.Scheme == "amqps")
	if err != nil {
		return nil, err
	}
	r.APIURL = api
	r.apiUserGiven, r.apiPassGiven = user != "", hasPass
	switch {
	case user == "":
		r.APIUser, r.APILogin = r.AMQPUser, r.AMQPLogin
	case hasPass:
		r.APIUser, r.APILogin = user, static(user, pass)
	default:
		if r.APILogin, err = password("--api-url", user); err != nil {
			return nil, err
		}
		r.APIUser = user
	}
	prom, user, pass, hasPass, err := httpURL("--prometheus-url", c.PrometheusURL, api, defaultPromPort, defaultPromTLS, api.Scheme == "https")
	if err != nil {
		return nil, err
	}
	prom.RawQuery = ""
	// Prometheus gets a password only when its URL names a user: the
	// endpoint is open by default, and no credential goes where none was
	// asked for.
	switch {
	case user != "" && !hasPass:
		if r.PrometheusLogin, err = password("--prometheus-url", user); err != nil {
			return nil, err
		}
	case user != "":
		r.PrometheusLogin = static(user, pass)
	}
	r.PrometheusURL, r.PrometheusUser = prom, user
	r.promUserGiven, r.promPassGiven = user != "", hasPass
	if (c.Password != "" || c.PasswordFile != "" || c.Secret != nil) && src == nil {
		// A password no URL takes is a mistake worth a word: the user
		// thinks it is used.
		switch {
		case !given:
			return nil, fmt.Errorf("--password-file: no URL names a user to use it for (--amqp-url amqp://USER@host/)")
		case au.User == nil:
			return nil, fmt.Errorf("--password-file: --amqp-url names no user to use it for (amqp://USER@host/)")
		}
		return nil, fmt.Errorf("--password-file: --amqp-url has a password of its own: keep one (amqp://%s@host/ takes the file's)", au.User.Username())
	}

	switch {
	case c.Vhost != "":
		r.Vhost = c.Vhost
	default:
		r.Vhost = amqpVhost(au)
	}

	if au.Scheme == "amqps" || r.APIURL.Scheme == "https" || r.PrometheusURL.Scheme == "https" || c.CACertFile != "" || c.InsecureSkipVerify {
		tc := &tls.Config{InsecureSkipVerify: c.InsecureSkipVerify} //nolint:gosec // only when the user asks
		if c.CACertFile != "" {
			pem, err := os.ReadFile(c.CACertFile)
			if err != nil {
				return nil, fmt.Errorf("--ca-cert %s: %w", c.CACertFile, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--ca-cert %s: no PEM certificate found", c.CACertFile)
			}
			tc.RootCAs = pool
		}
		r.TLS = tc
	}
	return r, nil
}

// The shapes parseURL's errors show, never the URL given. No
// scheme://user:password@ in them: redaction would show that as
// user:xxxxx@, as if ladder hid something.
const (
	amqpURLShape = `"amqp://host:port/vhost"`
	httpURLShape = `"http://host:port"`
)

// parseURL reads a URL given to flag and checks its scheme. Its errors
// never echo raw or Go's parse error (both may hold the password: Go's
// 'invalid port ":w" after host' is part of an unencoded one), only the
// URL redacted when it parsed into scheme://[user[:xxxxx]@]host, else the
// shape expected.
func parseURL(flag, raw, shape string, schemes ...string) (*url.URL, error) {
	invalid := func(why string) error {
		return fmt.Errorf("%s is not a valid URL%s (%s, user:password@ before the host, special characters in the password percent-encoded)", flag, why, shape)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, invalid("")
	}
	if _, ok := secret.PlainURL(raw); !ok {
		if u.Scheme == "" || u.Opaque != "" || !strings.HasPrefix(raw[len(u.Scheme):], "://") {
			// scheme:… without "//" (amqps:u:pw@h, amqp:/u:pw@h), or no
			// scheme at all (u:pw@h parses as scheme "u").
			return nil, invalid(": it must start with " + schemeList(schemes))
		}
		// An "@" after the host part: a password holding "/", "?" or "#"
		// ended the host part early.
		return nil, fmt.Errorf("%s is not a valid URL: an '@' follows the host part (in a password, / ? # are written %%2F %%3F %%23; in a vhost, @ is %%40)", flag)
	}
	if strings.ContainsAny(raw, " \t\r\n") {
		return nil, invalid(": it holds a space or a line break")
	}
	shown := secret.RedactedURL(u, u.User.Username(), hasPassword(u))
	if !slices.Contains(schemes, u.Scheme) {
		return nil, fmt.Errorf("%s %s: scheme must be %s", flag, shown, schemeList(schemes))
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%s %s: no host", flag, shown)
	}
	return u, nil
}

func hasPassword(u *url.URL) bool {
	_, ok := u.User.Password()
	return ok
}

// schemeList is "amqp:// or amqps://".
func schemeList(schemes []string) string {
	out := make([]string, len(schemes))
	for i, s := range schemes {
		out[i] = s + "://"
	}
	return strings.Join(out, " or ")
}

// httpURL reads an http(s) URL given to flag; "" is the host of from on
// port (tlsPort when tls). The URL comes back without its credentials,
// which are returned apart (hasPass: the URL held a password, maybe "").
func httpURL(flag, raw string, from *url.URL, port, tlsPort string, useTLS bool) (u *url.URL, user, pass string, hasPass bool, err error) {
	if raw == "" {
		scheme := "http"
		if useTLS {
			scheme, port = "https", tlsPort
		}
		raw = scheme + "://" + net.JoinHostPort(from.Hostname(), port)
	}
	pu, err := parseURL(flag, raw, httpURLShape, "http", "https")
	if err != nil {
		return nil, "", "", false, err
	}
	if pu.User != nil {
		user = pu.User.Username()
		pass, hasPass = pu.User.Password()
	}
	out := *pu
	out.User = nil
	out.Path = strings.TrimSuffix(out.Path, "/")
	return &out, user, pass, hasPass, nil
}

// amqpVhost follows the AMQP URI spec: the path minus its leading slash,
// percent-decoded; an empty path means "/".
func amqpVhost(u *url.URL) string {
	p := strings.TrimPrefix(u.Path, "/")
	if p == "" {
		return "/"
	}
	return p
}

// Port returns the AMQP port, with the scheme's default when none is given.
func (r *Resolved) Port() string {
	if p := r.AMQP.Port(); p != "" {
		return p
	}
	if r.AMQP.Scheme == "amqps" {
		return "5671"
	}
	return "5672"
}

// RedactedAMQP is the AMQP URL safe to print.
func (r *Resolved) RedactedAMQP() string { return secret.RedactURL(r.AMQPURL) }

// RedactedPrometheus is the Prometheus URL safe to print.
func (r *Resolved) RedactedPrometheus() string {
	if r.PrometheusURL == nil {
		return ""
	}
	if !r.promUserGiven {
		return r.PrometheusURL.String()
	}
	return secret.RedactedURL(r.PrometheusURL, r.PrometheusUser, r.promPassGiven)
}

// RedactedAPI is the management API URL safe to print: a user given in
// --api-url is shown as user:xxxxx@, the way RedactURL shows AMQP URLs.
func (r *Resolved) RedactedAPI() string {
	if !r.apiUserGiven {
		return r.APIURL.String()
	}
	return secret.RedactedURL(r.APIURL, r.APIUser, r.apiPassGiven)
}

func (r *Resolved) amqpUser() string { return r.AMQPUser }
