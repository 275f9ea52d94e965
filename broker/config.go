// Package broker does all of ladder's I/O against RabbitMQ: AMQP 0-9-1
// through amqp091-go and the management API through rabbit-hole. It adapts
// what it reads into the plain values of package retry.
package broker

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
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
}

// Resolved is a Config with every default applied and checked.
type Resolved struct {
	AMQPURL     string
	AMQP        *url.URL
	APIURL      *url.URL // without credentials
	APIUser     string
	APIPassword string
	// PrometheusURL is read only when the management API has no stats.
	PrometheusURL      *url.URL // without credentials
	PrometheusUser     string
	PrometheusPassword string
	Vhost              string
	TLS                *tls.Config // nil unless a TLS URL or CA file asks for it
	ReadOnly           bool
	// apiUserGiven, promUserGiven: the URL held a user, shown redacted.
	apiUserGiven, promUserGiven bool
}

// Resolve applies defaults (API URL from the AMQP host, credentials from the
// AMQP URL, vhost from the AMQP path) and loads TLS material.
func (c Config) Resolve() (*Resolved, error) {
	raw := c.AMQPURL
	if raw == "" {
		raw = DefaultAMQPURL
	}
	au, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--amqp-url %s: %w", RedactURL(raw), redactErr(err, raw))
	}
	if au.Scheme != "amqp" && au.Scheme != "amqps" {
		return nil, fmt.Errorf("--amqp-url %s: scheme must be amqp:// or amqps://", RedactURL(raw))
	}
	if au.Hostname() == "" {
		return nil, fmt.Errorf("--amqp-url %s: no host", RedactURL(raw))
	}
	r := &Resolved{AMQPURL: raw, AMQP: au, ReadOnly: c.ReadOnly}

	api, user, pass, err := httpURL("--api-url", c.APIURL, au, defaultAPIPort, defaultAPITLS, au.Scheme == "amqps")
	if err != nil {
		return nil, err
	}
	r.APIURL = api
	r.apiUserGiven = user != ""
	if user != "" {
		r.APIUser, r.APIPassword = user, pass
	} else {
		r.APIUser, r.APIPassword = amqpCredentials(au)
	}
	prom, user, pass, err := httpURL("--prometheus-url", c.PrometheusURL, api, defaultPromPort, defaultPromTLS, api.Scheme == "https")
	if err != nil {
		return nil, err
	}
	prom.RawQuery = ""
	r.PrometheusURL, r.PrometheusUser, r.PrometheusPassword = prom, user, pass
	r.promUserGiven = user != ""

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

// httpURL reads an http(s) URL given to flag; "" is the host of from on
// port (tlsPort when tls). The URL comes back without its credentials,
// which are returned apart.
func httpURL(flag, raw string, from *url.URL, port, tlsPort string, useTLS bool) (u *url.URL, user, pass string, err error) {
	if raw == "" {
		scheme := "http"
		if useTLS {
			scheme, port = "https", tlsPort
		}
		raw = scheme + "://" + net.JoinHostPort(from.Hostname(), port)
	}
	pu, err := url.Parse(raw)
	if err != nil {
		return nil, "", "", fmt.Errorf("%s %s: %w", flag, RedactURL(raw), redactErr(err, raw))
	}
	if pu.Scheme != "http" && pu.Scheme != "https" {
		return nil, "", "", fmt.Errorf("%s %s: scheme must be http:// or https://", flag, RedactURL(raw))
	}
	if pu.Host == "" {
		return nil, "", "", fmt.Errorf("%s %s: no host", flag, RedactURL(raw))
	}
	if pu.User != nil {
		user = pu.User.Username()
		pass, _ = pu.User.Password()
	}
	out := *pu
	out.User = nil
	out.Path = strings.TrimSuffix(out.Path, "/")
	return &out, user, pass, nil
}

// amqpCredentials returns the AMQP URL's user and password, or guest/guest
// as the AMQP client itself would.
func amqpCredentials(u *url.URL) (string, string) {
	if u.User == nil {
		return "guest", "guest"
	}
	p, _ := u.User.Password()
	return u.User.Username(), p
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
func (r *Resolved) RedactedAMQP() string { return RedactURL(r.AMQPURL) }

// RedactedPrometheus is the Prometheus URL safe to print.
func (r *Resolved) RedactedPrometheus() string {
	if r.PrometheusURL == nil {
		return ""
	}
	if !r.promUserGiven {
		return r.PrometheusURL.String()
	}
	return redactedURL(r.PrometheusURL, r.PrometheusUser, r.PrometheusPassword != "")
}

// RedactedAPI is the management API URL safe to print: a user given in
// --api-url is shown as user:xxxxx@, the way RedactURL shows AMQP URLs.
func (r *Resolved) RedactedAPI() string {
	if !r.apiUserGiven {
		return r.APIURL.String()
	}
	return redactedURL(r.APIURL, r.APIUser, r.APIPassword != "")
}

func (r *Resolved) amqpUser() string {
	u, _ := amqpCredentials(r.AMQP)
	return u
}
