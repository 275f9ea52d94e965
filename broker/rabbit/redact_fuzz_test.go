package rabbit

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/secret"
)

// urlShapes are the ways a password reaches ladder in a URL, well formed
// or not (%s is the password): the shapes issue 21 found printed back,
// and their neighbours.
var urlShapes = []string{
	"amqp://u:%s@h:5672/",
	"amqp://u:%s@h:5672/vh",
	"amqps://u:%s@h/",
	"u:%s@host:5677",      // no scheme
	"amqp:/u:%s@h",        // one slash
	"amqp//u:%s@h",        // no colon
	"amqps:u:%s@h",        // no slashes
	"amqp:u:%s@h:5672/",   // opaque
	"amqp://u:%s@h:bad/",  // a bad port
	"amqp://u:%s@:5672/",  // no host
	"amqp://u:%s@h/a b",   // a space
	"amqp://u:%s@h/%%zz",  // a bad escape
	"http://u:%s@h:15672", // an HTTP URL at --amqp-url
	"ftp://u:%s@h/",
	"amqp://u:%s@h:5672/?heartbeat=x",
	"amqp://u:%s@",
	"//u:%s@h",
	"amqp://u:%s@h@",
	" amqp://u:%s@h/",
	"amqp://u:%s@h/\n",
}

// FuzzURLNeverShowsPassword: whatever a URL's shape and wherever it is
// given (--amqp-url, --api-url, --prometheus-url), no error, description
// or redacted form holds its password.
func FuzzURLNeverShowsPassword(f *testing.F) {
	for i := range urlShapes {
		for where := range 3 {
			f.Add(uint8(i), "hunter2-secret", uint8(where))
		}
	}
	for _, s := range []string{"pa/ss-word", "p@ss/word", "12/secret", "12?secret", "1#secret", "p:ss:word", "pa ss word", "%zzsecret", "s3cr3t@", "\"quoted\"", "new\nline", "s3cr\x1bt"} {
		f.Add(uint8(0), s, uint8(0))
		f.Add(uint8(3), s, uint8(0))
		f.Add(uint8(0), s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, shape uint8, secret string, where uint8) {
		// A secret of a few letters may be a word of the message itself.
		if len(secret) < 6 {
			return
		}
		tmpl := urlShapes[int(shape)%len(urlShapes)]
		seen := urlOutputs(tmpl, secret, where%3)
		// What the messages say anyway (with a neutral password in the
		// same place) is no leak: "amqp://" or "valid URL" as a password.
		neutral := strings.Join(urlOutputs(tmpl, "Neutral0Pw", where%3), "\n")
		if strings.Contains(neutral, secret) {
			return
		}
		for _, out := range seen {
			if strings.Contains(out, secret) {
				t.Fatalf("URL %q (shape %q at %d): the password is shown: %q", fmt.Sprintf(tmpl, secret), tmpl, where%3, out)
			}
		}
	})
}

// urlOutputs is every text ladder may show about a URL of shape tmpl with
// password pw given at where (0 AMQP, 1 API, 2 Prometheus).
func urlOutputs(tmpl, pw string, where uint8) []string {
	raw := fmt.Sprintf(tmpl, pw)
	c := Config{AMQPURL: "amqp://guest:guest@127.0.0.1:5672/"}
	switch where {
	case 0:
		c.AMQPURL = raw
	case 1:
		c.APIURL = raw
	default:
		c.PrometheusURL = raw
	}
	out := []string{secret.RedactURL(raw)}
	r, err := c.Resolve()
	if err != nil {
		return append(out, err.Error(), broker.Describe(err), broker.Describe(fmt.Errorf("peek: %w", err)))
	}
	out = append(out, r.RedactedAMQP(), r.RedactedAPI(), r.RedactedPrometheus(), r.Vhost)
	// Errors that quote the URL, as Go's and amqp091's do, pass through
	// the classifiers' redaction.
	quoted := &url.Error{Op: "Get", URL: raw, Err: errors.New("connection reset by peer " + raw)}
	for _, e := range []error{
		r.amqpDialError(fmt.Errorf("dial %s: %w", raw, quoted)),
		r.APIError("overview", quoted),
		r.redact(quoted),
	} {
		out = append(out, e.Error(), broker.Describe(e))
	}
	return out
}

// FuzzAnyURLNeverShowsPassword: the same with the URL around the password
// fuzzed too, not only the shapes above: before + "u:" + secret + "@" +
// after, whatever before and after hold.
func FuzzAnyURLNeverShowsPassword(f *testing.F) {
	for _, s := range urlShapes {
		before, after, _ := strings.Cut(s, "u:%s@")
		f.Add(strings.ReplaceAll(before, "%%", "%"), "hunter2-secret", strings.ReplaceAll(after, "%%", "%"), uint8(0))
	}
	f.Add("amqp://", "p@ss/wo:rd", "h:5672/vh?x=1#f", uint8(1))
	f.Fuzz(func(t *testing.T, before, secret, after string, where uint8) {
		if len(secret) < 6 {
			return
		}
		esc := func(s string) string { return strings.ReplaceAll(s, "%", "%%") }
		tmpl := esc(before) + "u:%s@" + esc(after)
		neutral := strings.Join(urlOutputs(tmpl, "Neutral0Pw", where%3), "\n")
		if strings.Contains(neutral, secret) || strings.Contains(before+after, secret) {
			return // the message says it anyway, or the secret is not only the password
		}
		for _, out := range urlOutputs(tmpl, secret, where%3) {
			if strings.Contains(out, secret) {
				t.Fatalf("URL %q at %d: the password is shown: %q", fmt.Sprintf(tmpl, secret), where%3, out)
			}
		}
	})
}
