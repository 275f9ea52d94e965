package rabbit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/secret"
)

// dialTimeout bounds the TCP connect and AMQP handshake.
const dialTimeout = 10 * time.Second

// tlsCause words a failed TLS handshake: "its certificate is signed by
// an unknown authority (…)", without Go's "tls: failed to verify
// certificate: x509: …" and its "possibly because of … while trying to
// verify candidate authority certificate …" tail.
func (r *Resolved) tlsCause(err error) (string, bool) {
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var cve *tls.CertificateVerificationError
	var alert tls.AlertError
	switch {
	case errors.As(err, &ua):
		if r.TLS != nil && r.TLS.RootCAs != nil {
			return "its certificate is signed by an unknown authority (not the --ca-cert CA)", true
		}
		return "its certificate is signed by an unknown authority (give its CA with --ca-cert)", true
	case errors.As(err, &he):
		return "its certificate is not valid for " + he.Host + certNames(he.Certificate), true
	case errors.As(err, &ci) && ci.Reason == x509.Expired && ci.Cert != nil:
		return fmt.Sprintf("its certificate is valid only from %s to %s",
			ci.Cert.NotBefore.UTC().Format(time.DateOnly), ci.Cert.NotAfter.UTC().Format(time.DateOnly)), true
	case errors.As(err, &cve):
		return "its certificate does not verify: " + clip(strings.TrimPrefix(cve.Err.Error(), "x509: "), 100), true
	case errors.As(err, &alert):
		return "it refused the handshake (" + strings.TrimPrefix(alert.Error(), "tls: ") + ")", true
	}
	return "", false
}

// certNames is " (it is for a, b, …)": the names a certificate is for.
func certNames(c *x509.Certificate) string {
	if c == nil {
		return ""
	}
	names := append([]string(nil), c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 && c.Subject.CommonName != "" {
		names = append(names, c.Subject.CommonName)
	}
	if len(names) == 0 {
		return ""
	}
	if len(names) > 3 {
		names = append(names[:3], "…")
	}
	return " (it is for " + strings.Join(names, ", ") + ")"
}

// clip cuts s to n runes, marking the cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// netCause is the network-level cause of err ("connection refused", "no
// such host", "timed out"), without the URL Go puts around it. host is
// the name the message already shows: a DNS failure for it is not told
// twice ("at H:5672: no such host H").
func netCause(err error, host string) (string, bool) {
	var de *net.DNSError
	if errors.As(err, &de) {
		name := ""
		if de.Name != host {
			name = " " + de.Name // a proxy's, say
		}
		if de.IsNotFound {
			return "no such host" + name, true
		}
		return "cannot resolve" + name + ": " + de.Err, true
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return "no answer (timed out)", true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		if oe.Timeout() {
			return "no answer (timed out)", true
		}
		var errno syscall.Errno
		if errors.As(oe.Err, &errno) {
			return errno.Error(), true
		}
		return oe.Err.Error(), true
	}
	return "", false
}

// DialAMQP opens an AMQP connection named "ladder <purpose>" so an operator
// can find (and close) it in the management UI.
func (r *Resolved) DialAMQP(ctx context.Context, purpose string) (*amqp.Connection, error) {
	// Asked now, not at Resolve: a rotated password file is read by the
	// next connection.
	user, pass, err := r.AMQPLogin.Credentials(ctx)
	if err != nil {
		return nil, err
	}
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("ladder " + purpose)
	read := new(atomic.Int64)
	var tcpUp atomic.Bool
	cfg := amqp.Config{
		Properties: props,
		Vhost:      r.Vhost,
		// The user and password resolved (a password from a file or a
		// prompt is not in the URL), never the URL's alone.
		SASL: []amqp.Authentication{&amqp.PlainAuth{Username: user, Password: pass}},
		// amqp091 writes ServerName into the config: give it its own copy.
		TLSClientConfig: r.tlsConfig(),
		Heartbeat:       heartbeat,
		Locale:          "en_US",
		Dial: func(network, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialTimeout}
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			tcpUp.Store(true)
			// The deadline covers the handshake; amqp091 clears it afterwards.
			if err := conn.SetDeadline(time.Now().Add(dialTimeout)); err != nil {
				conn.Close()
				return nil, err
			}
			if testWrapConn != nil {
				conn = testWrapConn(conn)
			}
			return &countingConn{Conn: conn, n: read}, nil
		},
	}
	conn, err := amqp.DialConfig(r.AMQPURL, cfg)
	if err != nil {
		switch {
		case tcpUp.Load() && read.Load() == 0 && timedOut(err):
			// Accepted, then silence: a stalled node or path, or a port
			// that waits for the client to speak first.
			err = fmt.Errorf("%w: %w", errHandshakeSilent, err)
		case tcpUp.Load() && closedByPeer(err):
			err = fmt.Errorf("%w: %w", errPeerClosed, err)
		}
		return nil, r.amqpDialError(err)
	}
	received.Store(conn, read)
	watchConn(conn)
	go func() {
		<-conn.NotifyClose(make(chan *amqp.Error, 1))
		received.Delete(conn)
	}()
	return conn, nil
}

// testWrapConn, when a test sets it, wraps each dialled socket (to order
// the handshake's reads and writes).
var testWrapConn func(net.Conn) net.Conn

// errPeerClosed marks a dial whose TCP connection was accepted, then
// closed or reset before the AMQP handshake finished. amqp091 reports that
// several ways, by a race between its reader and the protocol header it
// sends: a FrameError (the header went first), ErrClosed (the reader saw
// the close first), the socket's write error, or net.ErrClosed (the reader
// shut the socket between the header's check and its write). All are one
// fact.
var errPeerClosed = errors.New("closed during the AMQP handshake")

// errHandshakeSilent marks a dial whose TCP connection was accepted and
// then sent nothing before the handshake's deadline.
var errHandshakeSilent = errors.New("no answer to the AMQP handshake")

// timedOut tells whether a failed handshake ended at its deadline.
func timedOut(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var ae *amqp.Error
	return errors.As(err, &ae) && !ae.Server && strings.Contains(ae.Reason, "i/o timeout")
}

// closedByPeer tells whether a failed handshake ended by the peer closing
// or resetting the connection.
func closedByPeer(err error) bool {
	return errors.Is(err, amqp.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// received maps every connection DialAMQP opened to the count of bytes
// read from its socket, so a peek can tell a large delivery still arriving
// from none coming (see bytesReceived).
var received sync.Map // *amqp.Connection → *atomic.Int64

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// bytesReceived is how many bytes conn has read so far (-1: not counted).
func bytesReceived(conn *amqp.Connection) int64 {
	if v, ok := received.Load(conn); ok {
		return v.(*atomic.Int64).Load()
	}
	return -1
}

func (r *Resolved) amqpDialError(err error) error {
	return r.redactResult(r.classifyDial(err))
}

func (r *Resolved) classifyDial(err error) error {
	err = r.redact(err)
	addr := net.JoinHostPort(r.AMQP.Hostname(), r.Port())
	var ae *amqp.Error
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &rh):
		return connErr(broker.ErrNotAMQP, err, "%s does not speak TLS (is it a plain AMQP port? use amqp://)", addr)
	case errors.Is(err, amqp.ErrVhost):
		// The broker closed the socket at connection.open without a word.
		return connErr(broker.ErrNoAccess, err, "user %s has no access to vhost %s at %s (or it does not exist)", r.amqpUser(), r.Vhost, addr)
	case errors.Is(err, amqp.ErrSASL):
		return connErr(broker.ErrLoginRefused, err, "login refused for user %s at %s: no login mechanism in common (ladder offers PLAIN)", r.amqpUser(), addr)
	}
	if cause, ok := r.tlsCause(err); ok {
		return connErr(broker.ErrTLS, err, "TLS to RabbitMQ at %s failed: %s", addr, cause)
	}
	if errors.Is(err, errHandshakeSilent) {
		if r.portHint() != "" {
			return connErr(broker.ErrNotAMQP, err, "%s does not speak AMQP%s", addr, r.portHint())
		}
		return connErr(broker.ErrStalled, err, "RabbitMQ at %s accepted the connection but sent nothing in %s (stalled, or not an AMQP port?)", addr, dialTimeout)
	}
	if errors.Is(err, errPeerClosed) {
		return connErr(broker.ErrNotAMQP, err, "%s does not speak AMQP%s", addr, r.portHint())
	}
	if errors.As(err, &ae) {
		return r.amqpRefusal(ae, err, addr)
	}
	if cause, ok := netCause(err, r.AMQP.Hostname()); ok {
		return connErr(broker.ErrUnreachable, err, "cannot reach RabbitMQ at %s (port %s): %s", r.RedactedAMQP(), r.Port(), cause)
	}
	return fmt.Errorf("connect to RabbitMQ at %s: %w", addr, err)
}

// amqpRefusal words an AMQP error met while dialling: the broker's own
// refusal, or a peer that never spoke AMQP. Only the reason is kept:
// amqp091's "Exception (530) Reason: …" adds nothing an operator reads.
func (r *Resolved) amqpRefusal(ae *amqp.Error, err error, addr string) error {
	reason := strings.TrimSpace(ae.Reason)
	switch {
	case ae.Code == amqp.AccessRefused:
		return connErr(broker.ErrLoginRefused, err, "login refused for user %s at %s", r.amqpUser(), addr)
	case ae.Code == amqp.NotAllowed && strings.Contains(reason, "not found"):
		return r.vhostNotFound(err, addr)
	case ae.Code == amqp.NotAllowed && strings.Contains(reason, "refused for user"):
		return connErr(broker.ErrNoAccess, err, "user %s has no access to vhost %s at %s", r.amqpUser(), r.Vhost, addr)
	case !ae.Server && (ae.Code == amqp.FrameError || ae.Code == amqp.SyntaxError):
		// Whatever answered closed or garbled the AMQP handshake.
		if strings.Contains(reason, "timeout") && !speaksHTTP(addr) {
			return connErr(broker.ErrNotAMQP, err, "%s does not speak AMQP (no handshake within %s)", addr, dialTimeout)
		}
		return connErr(broker.ErrNotAMQP, err, "%s does not speak AMQP%s", addr, r.portHint())
	}
	if ae.Server {
		return connErr(nil, err, "RabbitMQ at %s closed the connection: %s", addr, reason)
	}
	return connErr(nil, err, "connect to RabbitMQ at %s: %s", addr, reason)
}

// portHint guesses why an AMQP URL's port did not speak AMQP: an HTTP
// server there (asked, whatever its port: 4.3's management listens on
// 15673 in some setups) or a port number known as the management API's.
func (r *Resolved) portHint() string {
	p := r.Port()
	switch {
	case r.AMQP.Scheme == "amqp" && speaksHTTP(net.JoinHostPort(r.AMQP.Hostname(), p)),
		p == apiPort(r.APIURL) || p == defaultAPIPort || p == defaultAPITLS || p == "80" || p == "443":
		return " (is it the management port?)"
	case p == "5671" && r.AMQP.Scheme == "amqp":
		return " (is it the TLS port? use amqps://)"
	}
	return ""
}

// httpProbeTimeout bounds speaksHTTP: it runs only after a failed dial.
const httpProbeTimeout = 2 * time.Second

// speaksHTTP tells whether an HTTP server answers at addr. An HTTP server
// sent the AMQP protocol header does not answer it (Cowboy waits for a
// request line, then closes the socket), so it is asked a request of its
// own on a new connection.
func speaksHTTP(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, httpProbeTimeout)
	if err != nil {
		return false
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(httpProbeTimeout)); err != nil {
		return false
	}
	if _, err := fmt.Fprintf(conn, "HEAD / HTTP/1.0\r\nHost: %s\r\n\r\n", addr); err != nil {
		return false
	}
	var head [5]byte
	_, err = io.ReadFull(conn, head[:])
	return err == nil && string(head[:]) == "HTTP/"
}

// vhostNotFound is the one wording of a missing vhost, AMQP and API alike,
// naming the server asked (with AMQP and the API on two brokers, the vhost
// may well exist on the other).
func (r *Resolved) vhostNotFound(err error, at string) error {
	return connErr(broker.ErrVhostNotFound, err, "vhost %s not found at %s", r.Vhost, at)
}

// API returns a management API client. Credentials travel in a header, never
// in the endpoint URL, so they cannot leak into error text; they are asked
// of APILogin at every request (see apiAuth).
func (r *Resolved) API() (*rabbithole.Client, error) {
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     r.tlsConfig(),
		TLSHandshakeTimeout: dialTimeout,
		DialContext:         (&net.Dialer{Timeout: dialTimeout}).DialContext,
	}
	// rabbit-hole sets the user and password it was made with on each
	// request: none here, apiAuth sets the current ones.
	c, err := rabbithole.NewTLSClient(r.APIURL.String(), "", "", r.apiAuth(tr))
	if err != nil {
		return nil, fmt.Errorf("--api-url %s: %w", r.RedactedAPI(), err)
	}
	c.SetTimeout(r.APITimeout)
	return c, nil
}

// SetAPIAuth sets req's basic auth to the management API's user and
// password, asked of APILogin now (for tools and tests that make their
// own requests).
func (r *Resolved) SetAPIAuth(req *http.Request) error {
	user, pass, err := r.APILogin.Credentials(req.Context())
	if err != nil {
		return err
	}
	req.SetBasicAuth(user, pass)
	return nil
}

// apiAuth is next with every request's basic auth set from APILogin when
// it is sent: a rabbit-hole client keeps the password it was made with,
// this one never holds one.
func (r *Resolved) apiAuth(next http.RoundTripper) http.RoundTripper {
	return basicAuth{next: next, login: r.APILogin}
}

type basicAuth struct {
	next  http.RoundTripper
	login secret.Credentials
}

func (b basicAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	user, pass, err := b.login.Credentials(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes it, whatever happens
		}
		return nil, err
	}
	// A RoundTripper must not change the request it is given.
	req = req.Clone(req.Context())
	req.SetBasicAuth(user, pass)
	return b.next.RoundTrip(req)
}

func (r *Resolved) transport() *http.Transport {
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     r.tlsConfig(),
		TLSHandshakeTimeout: dialTimeout,
		DialContext:         (&net.Dialer{Timeout: dialTimeout}).DialContext,
		MaxIdleConnsPerHost: 4,
	}
}

// APIError describes a management API failure with the (credential-free)
// API address; what is the request ("overview", "list queues in vhost /").
// Request URLs, with their ?columns=… queries, never appear.
func (r *Resolved) APIError(what string, err error) error {
	return r.redactResult(r.classifyAPI(what, err))
}

func (r *Resolved) classifyAPI(what string, err error) error {
	err = r.redact(err)
	host := r.APIURL.Host
	var he rabbithole.ErrorResponse
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &he) && he.StatusCode == http.StatusUnauthorized,
		// rabbit-hole words its 401 as a plain error.
		strings.Contains(err.Error(), "API responded with a 401"):
		// The API answers 401 for a wrong password and for a user it
		// knows but will not serve: its reason tells them apart. The user
		// is named once: the URL without its user:xxxxx@.
		switch why := strings.ToLower(apiReason(he)); {
		case strings.Contains(why, "not management user"):
			return connErr(broker.ErrNoAccess, err, "user %s may not use the management API at %s (it needs the management or monitoring tag)", r.APIUser, r.APIURL)
		case strings.Contains(why, "virtual host"):
			return connErr(broker.ErrNoAccess, err, "user %s has no access to vhost %s (management API at %s)", r.APIUser, r.Vhost, r.APIURL)
		case strings.Contains(why, "not administrator"):
			return connErr(broker.ErrNoAccess, err, "%s: user %s may not do that through the management API at %s (it needs the administrator tag)", what, r.APIUser, r.APIURL)
		}
		return connErr(broker.ErrLoginRefused, err, "login refused for user %s at %s", r.APIUser, r.APIURL)
	case errors.As(err, &he):
		// The status and the broker's reason, not rabbit-hole's JSON dump.
		return fmt.Errorf("%s: management API at %s: %w", what, r.RedactedAPI(),
			secret.Reworded(strconv.Itoa(he.StatusCode)+" "+http.StatusText(he.StatusCode)+apiReason(he), err))
	case errors.As(err, &rh):
		return connErr(broker.ErrNotAMQP, err, "%s does not speak TLS (is it a plain HTTP port? use http://)", host)
	case strings.Contains(err.Error(), "malformed HTTP response"):
		hint := ""
		switch p := apiPort(r.APIURL); {
		case strings.Contains(err.Error(), `malformed HTTP response "\x15\x03`):
			// A TLS alert record: the server wants a TLS handshake.
			hint = " (it speaks TLS: use https://)"
		case p == r.Port() || p == "5672" || p == "5671":
			hint = " (is it the AMQP port?)"
		}
		return connErr(broker.ErrNotAMQP, err, "%s does not speak HTTP%s", host, hint)
	}
	if cause, ok := r.tlsCause(err); ok {
		return connErr(broker.ErrTLS, err, "TLS to the management API at %s failed: %s", host, cause)
	}
	if slow := r.apiSlow(err); slow != "" {
		return connErr(broker.ErrAPISlow, err, "management API at %s slow: %s", host, slow)
	}
	if cause, ok := netCause(err, r.APIURL.Hostname()); ok {
		return connErr(broker.ErrUnreachable, err, "cannot reach the management API at %s: %s", host, cause)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return connErr(nil, err, "%s: management API at %s: %s", what, r.RedactedAPI(), ue.Err)
	}
	return fmt.Errorf("%s: management API at %s: %w", what, r.RedactedAPI(), err)
}

// apiSlow words a request that connected but got no answer in time: the
// management API is slow (a busy node listing thousands of queues), not
// down. "" for anything else, a connect that timed out among them.
func (r *Resolved) apiSlow(err error) string {
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		return ""
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return "" // nothing accepted the connection: unreachable
	}
	if strings.Contains(err.Error(), "Client.Timeout") {
		return fmt.Sprintf("no answer in %s (--api-timeout)", r.APITimeout)
	}
	return "no answer in time"
}

// apiReason is ": why" from a management API error body, when it says more
// than the status.
func apiReason(he rabbithole.ErrorResponse) string {
	why := strings.TrimSpace(he.Reason)
	var body struct{ Error, Reason string }
	switch {
	case strings.HasPrefix(why, "{") && json.Unmarshal([]byte(why), &body) == nil:
		why = body.Reason
	case strings.HasPrefix(why, "<"):
		why = "" // a web server's HTML page, not the API's reason
	}
	if why == "" || strings.EqualFold(why, http.StatusText(he.StatusCode)) {
		return ""
	}
	if r := []rune(why); len(r) > 120 {
		why = string(r[:120]) + "…"
	}
	return ": " + why
}

// redactResult is a classified error with every password r knows of
// hidden once more: a classifier may quote a cause's inner text (a
// *url.Error's Err) that the redaction of the whole did not reach.
func (r *Resolved) redactResult(err error) error {
	var ce *broker.ConnError
	if errors.As(err, &ce) {
		ce.RedactWith(func(s string) string { return secret.RedactText(s, r.secrets()...) })
	}
	return r.redact(err)
}

// redact hides every password r knows of in err's text.
func (r *Resolved) redact(err error) error {
	return secret.RedactSecrets(err, r.secrets()...)
}

// secrets are r's passwords in the forms they may appear in text.
func (r *Resolved) secrets() []string {
	s := secret.SecretsOf(r.AMQPURL)
	s = append(s, r.typed...)
	for _, p := range r.seen.Pairs() {
		s = append(s, secret.SecretForms(p.User, p.Password)...)
	}
	return s
}

func apiPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func (r *Resolved) tlsConfig() *tls.Config {
	if r.TLS == nil {
		return nil
	}
	return r.TLS.Clone()
}
