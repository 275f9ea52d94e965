package rabbit

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/secret"
)

func testResolved(t *testing.T, amqpURL, apiURL string) *Resolved {
	t.Helper()
	r, err := Config{AMQPURL: amqpURL, APIURL: apiURL}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDialErrorsClassified: amqp091's errors become one line each, with a
// sentinel for errors.Is and no "Exception (…) Reason:" text.
func TestDialErrorsClassified(t *testing.T) {
	r := testResolved(t, "amqp://guest:s3cret-pw@rabbit:5672/prod", "")
	for _, c := range []struct {
		in   error
		kind error
		want string
	}{
		{&amqp.Error{Code: amqp.AccessRefused, Reason: "username or password not allowed", Server: true}, broker.ErrLoginRefused,
			"login refused for user guest at rabbit:5672"},
		{amqp.ErrCredentials, broker.ErrLoginRefused, "login refused for user guest at rabbit:5672"},
		{&amqp.Error{Code: amqp.NotAllowed, Reason: "NOT_ALLOWED - vhost prod not found", Server: true}, broker.ErrVhostNotFound,
			"vhost prod not found at rabbit:5672"},
		{&amqp.Error{Code: amqp.NotAllowed, Reason: "NOT_ALLOWED - access to vhost 'prod' refused for user 'guest'", Server: true}, broker.ErrNoAccess,
			"user guest has no access to vhost prod at rabbit:5672"},
		{&amqp.Error{Code: amqp.FrameError, Reason: "EOF"}, broker.ErrNotAMQP, "rabbit:5672 does not speak AMQP"},
		// The same peer closing, when amqp091's reader saw it before the
		// protocol header went out: ErrClosed, or the write's own error.
		{fmt.Errorf("%w: %w", errPeerClosed, amqp.ErrClosed), broker.ErrNotAMQP, "rabbit:5672 does not speak AMQP"},
		{fmt.Errorf("%w: %w", errPeerClosed, &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}), broker.ErrNotAMQP, "rabbit:5672 does not speak AMQP"},
		{&amqp.Error{Code: amqp.ConnectionForced, Reason: "CONNECTION_FORCED - shutdown", Server: true}, nil,
			"RabbitMQ at rabbit:5672 closed the connection: CONNECTION_FORCED - shutdown"},
	} {
		err := r.amqpDialError(c.in)
		if err.Error() != c.want {
			t.Errorf("%v: %q, want %q", c.in, err, c.want)
		}
		if c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("%v: not %v", c.in, c.kind)
		}
		if !errors.Is(err, c.in) {
			t.Errorf("%v: the cause left the chain", c.in)
		}
		if strings.Contains(err.Error(), "Exception") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q", err)
		}
	}
	mgmt := testResolved(t, "amqp://guest:guest@rabbit:15672/", "")
	if got := mgmt.amqpDialError(&amqp.Error{Code: amqp.FrameError, Reason: "EOF"}).Error(); got != "rabbit:15672 does not speak AMQP (is it the management port?)" {
		t.Errorf("%q", got)
	}
}

func TestAPIErrorsClassified(t *testing.T) {
	r := testResolved(t, "amqp://guest:s3cret-pw@rabbit:5672/", "")
	for _, c := range []struct {
		in   error
		kind error
		want string
	}{
		{errors.New("Error: API responded with a 401 Unauthorized"), broker.ErrLoginRefused, "login refused for user guest at http://rabbit:15672"},
		{rabbithole.ErrorResponse{StatusCode: 401}, broker.ErrLoginRefused, "login refused for user guest at http://rabbit:15672"},
		{rabbithole.ErrorResponse{StatusCode: 500, Reason: `{"error":"internal","reason":"boom"}`}, nil,
			"overview: management API at http://rabbit:15672: 500 Internal Server Error: boom"},
	} {
		err := r.APIError("overview", c.in)
		if err.Error() != c.want {
			t.Errorf("%v: %q, want %q", c.in, err, c.want)
		}
		if c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("%v: not %v", c.in, c.kind)
		}
	}
}

func TestDescribe(t *testing.T) {
	ce := &broker.ConnError{Msg: "login refused for user guest at h:5672", Kind: broker.ErrLoginRefused}
	if got := broker.Describe(fmt.Errorf("peek: queue %q: %w", "q", ce)); got != ce.Msg {
		t.Errorf("%q", got)
	}
	partial := fmt.Errorf("move from q: 3 of 5 moved: %w: %w", ce, broker.ErrPartial)
	if got := broker.Describe(partial); got != partial.Error() {
		t.Errorf("a partial run lost its count: %q", got)
	}
	if !broker.WaitsForUser(ce) || broker.WaitsForUser(fmt.Errorf("x: %w", broker.ErrUnreachable)) {
		t.Error("WaitsForUser")
	}
}

// TestTLSErrorsClassified: Go's TLS verification errors become one short
// line naming the address, without "tls: failed to verify certificate:
// x509: …" or the candidate-authority tail.
func TestTLSErrorsClassified(t *testing.T) {
	leaf := &x509.Certificate{
		DNSNames:    []string{"rabbit.internal"},
		IPAddresses: []net.IP{net.IPv4(10, 0, 0, 1)},
		NotBefore:   time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:    time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	verify := func(err error) error { return &tls.CertificateVerificationError{Err: err} }
	unknown := verify(x509.UnknownAuthorityError{Cert: leaf})
	plain := testResolved(t, "amqps://guest:s3cret-pw@rabbit:5671/", "")
	withCA, err := Config{AMQPURL: "amqps://guest:s3cret-pw@rabbit:5671/", CACertFile: writeCA(t)}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r    *Resolved
		in   error
		want string
	}{
		{plain, unknown, "TLS to RabbitMQ at rabbit:5671 failed: its certificate is signed by an unknown authority (give its CA with --ca-cert)"},
		{withCA, unknown, "TLS to RabbitMQ at rabbit:5671 failed: its certificate is signed by an unknown authority (not the --ca-cert CA)"},
		{plain, verify(x509.HostnameError{Certificate: leaf, Host: "rabbit"}),
			"TLS to RabbitMQ at rabbit:5671 failed: its certificate is not valid for rabbit (it is for rabbit.internal, 10.0.0.1)"},
		{plain, verify(x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired}),
			"TLS to RabbitMQ at rabbit:5671 failed: its certificate is valid only from 2020-01-01 to 2021-01-01"},
		{plain, verify(x509.CertificateInvalidError{Cert: leaf, Reason: x509.NotAuthorizedToSign}),
			"TLS to RabbitMQ at rabbit:5671 failed: its certificate does not verify: certificate is not authorized to sign other certificates"},
		{plain, &net.OpError{Op: "remote error", Err: tls.AlertError(116)},
			"TLS to RabbitMQ at rabbit:5671 failed: it refused the handshake (certificate required)"},
	} {
		err := c.r.amqpDialError(c.in)
		if err.Error() != c.want {
			t.Errorf("%v:\n got %q\nwant %q", c.in, err, c.want)
		}
		if !errors.Is(err, broker.ErrTLS) || !broker.WaitsForUser(err) || !errors.Is(err, c.in) {
			t.Errorf("%v: not ErrTLS, or the cause left the chain", c.in)
		}
		if len(err.Error()) > 190 {
			t.Errorf("%d characters: %q", len(err.Error()), err)
		}
	}
	// The management API: Go's *url.Error around it, the request URL gone.
	api := plain.APIError("overview", &url.Error{Op: "Get", URL: "https://rabbit:15671/api/overview?columns=x", Err: unknown})
	if want := "TLS to the management API at rabbit:15671 failed: its certificate is signed by an unknown authority (give its CA with --ca-cert)"; api.Error() != want || !errors.Is(api, broker.ErrTLS) {
		t.Errorf("API: %q, want %q", api, want)
	}
	// http:// at an https port: the reply is a TLS alert.
	httpAtTLS := testResolved(t, "amqp://guest:guest@rabbit:5672/", "http://rabbit:15671")
	got := httpAtTLS.APIError("overview", &url.Error{Op: "Get", URL: "http://rabbit:15671/api/overview",
		Err: errors.New(`net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x15\x03\x01\x00\x02\x02P"`)})
	if want := "rabbit:15671 does not speak HTTP (it speaks TLS: use https://)"; got.Error() != want {
		t.Errorf("http at TLS: %q, want %q", got, want)
	}
}

// writeCA writes a self-signed CA certificate as PEM and returns its path.
func writeCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// webServer serves body with status for every path but those in api
// (path → JSON answered 200 or, with a leading "404 ", 404).
func webServer(t *testing.T, status int, body string, api map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if js, ok := api[req.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/json")
			if rest, nf := strings.CutPrefix(js, "404 "); nf {
				w.WriteHeader(http.StatusNotFound)
				js = rest
			}
			_, _ = io.WriteString(w, js)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const htmlNotFound = "<!DOCTYPE HTML>\n<html><head><title>Error response</title></head><body><h1>404 Not Found</h1></body></html>\n"

const apiNotFound = `404 {"error":"Object Not Found","reason":"Not Found"}`

func testManagement(t *testing.T, apiURL string) *Management {
	t.Helper()
	m, err := NewManagement(testResolved(t, "amqp://guest:guest@127.0.0.1:5672/", apiURL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// A 404 from a web server that is not the management API (python -m
// http.server, a path prefix missing from --api-url) is not "vhost / not
// found", and its HTML page is never the reason.
func TestNotFoundFromAnotherWebServer(t *testing.T) {
	ctx := context.Background()
	srv := webServer(t, http.StatusNotFound, htmlNotFound, nil)
	m := testManagement(t, srv.URL)
	want := srv.URL + " is not a RabbitMQ management API (GET /api/overview: 404 Not Found)"
	_, qerr := m.Queue(ctx, "/", "q")
	_, verr := m.Vhost(ctx, "/")
	_, oerr := m.BrokerVersion(ctx)
	for what, err := range map[string]error{"queue": qerr, "vhost": verr, "overview": oerr} {
		if err == nil || broker.Describe(err) != want {
			t.Errorf("%s: %q, want %q", what, broker.Describe(err), want)
		}
		if errors.Is(err, broker.ErrVhostNotFound) || errors.Is(err, broker.ErrNotFound) || !errors.Is(err, broker.ErrNotAMQP) {
			t.Errorf("%s: classified as %v", what, err)
		}
	}

	// Behind a path prefix: the API answers under /rabbit only.
	prefixed := webServer(t, http.StatusNotFound, htmlNotFound, map[string]string{
		"/rabbit/api/overview":        `{"rabbitmq_version":"3.10.8"}`,
		"/rabbit/api/vhosts/nosuch":   apiNotFound,
		"/rabbit/api/queues/nosuch/q": apiNotFound,
	})
	if _, err := testManagement(t, prefixed.URL).Queue(ctx, "/", "q"); broker.Describe(err) != prefixed.URL+" is not a RabbitMQ management API (GET /api/overview: 404 Not Found)" {
		t.Errorf("prefix left out: %q", broker.Describe(err))
	}
	if _, err := testManagement(t, prefixed.URL+"/rabbit").Queue(ctx, "nosuch", "q"); broker.Describe(err) != "vhost nosuch not found at "+prefixed.Listener.Addr().String()+" (management API, RabbitMQ 3.10.8)" || !errors.Is(err, broker.ErrVhostNotFound) {
		t.Errorf("prefix given: %q", broker.Describe(err))
	}

	// The overview answers but the vhost's 404 is a proxy's page: the
	// management API did not say the vhost is missing.
	proxy := webServer(t, http.StatusNotFound, htmlNotFound, map[string]string{"/api/overview": `{"rabbitmq_version":"3.10.8"}`})
	if _, err := testManagement(t, proxy.URL).Queue(ctx, "/", "q"); errors.Is(err, broker.ErrVhostNotFound) {
		t.Errorf("a proxy's 404 said the vhost is missing: %q", broker.Describe(err))
	}

	// Another status with an HTML page: the status, not the page.
	broken := webServer(t, http.StatusBadGateway, htmlNotFound, nil)
	_, err := testManagement(t, broken.URL).BrokerVersion(ctx)
	if got := broker.Describe(err); strings.Contains(got, "<") || !strings.Contains(got, "502 Bad Gateway") {
		t.Errorf("502: %q", got)
	}

	// A 200 that is not JSON.
	page := webServer(t, http.StatusOK, "<html>hello</html>", nil)
	_, err = testManagement(t, page.URL).BrokerVersion(ctx)
	if got, want := broker.Describe(err), page.URL+" is not a RabbitMQ management API (GET /api/overview: the answer is not JSON)"; got != want {
		t.Errorf("200 HTML: %q, want %q", got, want)
	}
}

// A long host name is shown once and the line stays within 200
// characters with "ladder: " (it was 217 to 238 for a 77-character host:
// "at H:15672: no such host H").
func TestErrorLineBoundedAndHostOnce(t *testing.T) {
	host := strings.Repeat("h", 69) + ".invalid" // 77 characters
	r := testResolved(t, "amqp://guest:s3cret-pw@"+host+":5672/", "")
	dnsErr := func() error {
		return &url.Error{Op: "Get", URL: "http://" + host + ":15672/api/overview?columns=rabbitmq_version",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}}
	}
	for what, err := range map[string]error{
		"api":  r.APIError("overview", dnsErr()),
		"amqp": r.amqpDialError(dnsErr()),
	} {
		got := err.Error()
		if n := strings.Count(got, host); n != 1 {
			t.Errorf("%s: the host %d times: %q", what, n, got)
		}
		if !strings.Contains(got, host+":") || !strings.HasSuffix(got, ": no such host") {
			t.Errorf("%s: %q", what, got)
		}
		if n := utf8.RuneCountInString("ladder: " + got); n > 200 {
			t.Errorf("%s: %d characters: %q", what, n, got)
		}
	}
	// A broker's reason, however long, is cut on a rune boundary.
	long := r.amqpDialError(&amqp.Error{Code: amqp.ConnectionForced, Reason: strings.Repeat("é", 300), Server: true}).Error()
	if n := utf8.RuneCountInString(long); n != maxErrLine || !utf8.ValidString(long) || !strings.HasSuffix(long, "é…") ||
		!strings.HasPrefix(long, "RabbitMQ at "+host+":5672 closed the connection: ") {
		t.Errorf("%d runes: %q", n, long)
	}
}

// Prometheus failures are worded as the API's: host:port and the cause,
// not Go's "Get \"…?vhost=…\": dial tcp …: connect: connection refused".
func TestPrometheusErrorsClassified(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	down, err := NewManagement(mustResolve(t, Config{AMQPURL: "amqp://guest:guest@127.0.0.1:5672/", PrometheusURL: "http://prom:hunter2-pw@" + closed}))
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	_, err = down.prometheusQueues(ctx, "/")
	if got, want := broker.Describe(err), "prometheus at "+closed+" unreachable: connection refused (--prometheus-url)"; got != want {
		t.Errorf("refused: %q, want %q", got, want)
	}

	srv := webServer(t, http.StatusServiceUnavailable, htmlNotFound, nil)
	up, err := NewManagement(mustResolve(t, Config{AMQPURL: "amqp://guest:guest@127.0.0.1:5672/", PrometheusURL: srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	_, err = up.prometheusQueues(ctx, "/")
	if got, want := broker.Describe(err), "prometheus at "+srv.Listener.Addr().String()+" answered 503 Service Unavailable (--prometheus-url)"; got != want {
		t.Errorf("503: %q, want %q", got, want)
	}
}

func mustResolve(t *testing.T, c Config) *Resolved {
	t.Helper()
	r, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// An AMQP URL at an HTTP server gets the management-port hint whatever
// the port (4.3's management may listen on 15673, say); a peer that is
// not HTTP does not.
func TestAMQPAtHTTPServerSaysManagementPort(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	// As Cowboy does, give up on a request line that never comes.
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	r := testResolved(t, "amqp://guest:guest@"+addr+"/", "")
	_, err := r.DialAMQP(context.Background(), "test")
	if got, want := broker.Describe(err), addr+" does not speak AMQP (is it the management port?)"; got != want || !errors.Is(err, broker.ErrNotAMQP) {
		t.Errorf("%q, want %q", got, want)
	}

	// Something that closes at once and answers nothing is no HTTP server.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	mute := l.Addr().String()
	_, err = testResolved(t, "amqp://guest:guest@"+mute+"/", "").DialAMQP(context.Background(), "test")
	if got, want := broker.Describe(err), mute+" does not speak AMQP"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// A peer that accepts and closes at once gets one answer whichever of
// amqp091's reader and its protocol header wins the race (CI saw
// "channel/connection is not open" when the reader won).
func TestPeerClosingDuringHandshakeOneAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := l.Addr().String()
	orders := map[string]func(net.Conn) net.Conn{
		"as it comes": nil,
		// The header waits until the reader has met the close.
		"reader first": func(c net.Conn) net.Conn { return &readFirstConn{Conn: c, read: make(chan struct{})} },
	}
	prev := testWrapConn
	defer func() { testWrapConn = prev }()
	for name, wrap := range orders {
		testWrapConn = wrap
		for range 20 {
			_, err := testResolved(t, "amqp://guest:guest@"+addr+"/", "").DialAMQP(context.Background(), "test")
			if got, want := broker.Describe(err), addr+" does not speak AMQP"; got != want || !errors.Is(err, broker.ErrNotAMQP) {
				t.Fatalf("%s: %q, want %q", name, got, want)
			}
		}
	}
}

// readFirstConn holds every write until a read has failed, and then until
// amqp091 has had time to shut the connection down.
type readFirstConn struct {
	net.Conn
	once sync.Once
	read chan struct{}
}

func (c *readFirstConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.once.Do(func() { close(c.read) })
	}
	return n, err
}

func (c *readFirstConn) Write(b []byte) (int, error) {
	<-c.read
	time.Sleep(20 * time.Millisecond)
	return c.Conn.Write(b)
}

// Every URL is redacted the one way, user kept: amqp://bob:xxxxx@, and so
// http://bob:xxxxx@ for the API and Prometheus (they dropped the user).
func TestRedactionSameForEveryURL(t *testing.T) {
	r := mustResolve(t, Config{
		AMQPURL:       "amqp://bob:hunter2-a@rabbit:5672/prod",
		APIURL:        "http://ann:hunter2-b@rabbit:15672",
		PrometheusURL: "https://cat:hunter2-c@rabbit:15691",
	})
	for got, want := range map[string]string{
		r.RedactedAMQP():       "amqp://bob:xxxxx@rabbit:5672/prod",
		r.RedactedAPI():        "http://ann:xxxxx@rabbit:15672",
		r.RedactedPrometheus(): "https://cat:xxxxx@rabbit:15691",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
		if got != secret.RedactURL(strings.ReplaceAll(want, "xxxxx", "pw")) {
			t.Errorf("%q differs from RedactURL's", got)
		}
	}
	// No user given: none shown (the API's comes from the AMQP URL).
	plain := mustResolve(t, Config{AMQPURL: "amqp://bob:hunter2-a@rabbit:5672/"})
	if plain.RedactedAPI() != "http://rabbit:15672" || plain.RedactedPrometheus() != "http://rabbit:15692" {
		t.Errorf("%q %q", plain.RedactedAPI(), plain.RedactedPrometheus())
	}
	// A user without a password is shown as given.
	if got := mustResolve(t, Config{APIURL: "http://ann@rabbit:15672", Password: "pw-from-a-prompt"}).RedactedAPI(); got != "http://ann@rabbit:15672" {
		t.Errorf("%q", got)
	}
}

// Each way an AMQP connection or channel ends mid-operation has its own
// words and kind; only amqp091's parse failures read as an unreadable
// message (EOF and resets reach it as the same FrameError).
func TestAMQPLostClassified(t *testing.T) {
	for _, c := range []struct {
		why  *amqp.Error
		kind error
		want string
	}{
		{&amqp.Error{Code: amqp.FrameError, Reason: "EOF"}, broker.ErrConnLost, "peek q: connection to RabbitMQ at h:5672 lost: closed by the other side (node stopped or killed?)"},
		{&amqp.Error{Code: amqp.FrameError, Reason: "read tcp 1.2.3.4:1->5.6.7.8:5672: read: connection reset by peer"}, broker.ErrConnLost, "peek q: connection to RabbitMQ at h:5672 lost: reset by the other side"},
		{&amqp.Error{Code: amqp.FrameError, Reason: "read tcp 1.2.3.4:1->5.6.7.8:5672: i/o timeout"}, broker.ErrStalled, "peek q: RabbitMQ at h:5672 stopped answering (no heartbeat): connection dropped"},
		{&amqp.Error{Code: amqp.FrameError, Reason: amqp.ErrSyntax.Error()}, broker.ErrUnparsable, "peek q: the AMQP client could not read a message from h:5672 (" + unparsedHint + ") and dropped the connection"},
		{&amqp.Error{Code: amqp.ConnectionForced, Reason: "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'", Server: true}, broker.ErrConnLost,
			"peek q: RabbitMQ at h:5672 closed the connection: CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'"},
		{&amqp.Error{Code: amqp.AccessRefused, Reason: "ACCESS_REFUSED - write access to exchange 'x' in vhost 'v' refused for user 'u'", Server: true}, broker.ErrAccessRefused,
			"peek q refused: ACCESS_REFUSED - write access to exchange 'x' in vhost 'v' refused for user 'u' (RabbitMQ at h:5672)"},
		{&amqp.Error{Code: amqp.PreconditionFailed, Reason: "PRECONDITION_FAILED - message size 20971520 is larger than configured max size 16777216", Server: true}, broker.ErrTooLarge,
			"peek q refused, message too large: PRECONDITION_FAILED - message size 20971520 is larger than configured max size 16777216 (RabbitMQ at h:5672)"},
		// The broker's words when its limit is at the ceiling (512 MiB).
		{&amqp.Error{Code: amqp.PreconditionFailed, Reason: "PRECONDITION_FAILED - message size 536870913 is larger than max size 536870912", Server: true}, broker.ErrTooLarge,
			"peek q refused, message too large: PRECONDITION_FAILED - message size 536870913 is larger than max size 536870912 (RabbitMQ at h:5672)"},
	} {
		err := amqpLost("h:5672", "peek q", c.why)
		if err.Error() != c.want || !errors.Is(err, c.kind) || !errors.Is(err, c.why) {
			t.Errorf("%v:\n got %q\nwant %q (%v)", c.why, err, c.want, c.kind)
		}
		if parse := errors.Is(c.kind, broker.ErrUnparsable); clientCouldNotParse(c.why) != parse {
			t.Errorf("%v: read as unparsable %v", c.why, !parse)
		}
	}
	if amqpLost("h:5672", "peek q", nil) != nil {
		t.Error("a close ladder asked for is a loss")
	}
}

// A publish's write can fail on the socket before the client has read the
// broker's close frame: the failure waits for that reason (here already
// kept by the channel's watch) and names the broker's close; with none it
// is a lost connection, said as one, never the raw "write tcp …".
func TestSocketWriteFailureSaysTheConnectionWasLost(t *testing.T) {
	reset := &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET}
	err := AMQPFailure(nil, "publish", reset, nil)
	if !errors.Is(err, broker.ErrConnLost) || !strings.Contains(err.Error(), "lost: reset by the other side") {
		t.Errorf("no close reason: %v", err)
	}
	w := &CloseWatch{c: make(chan *amqp.Error, 1)}
	w.c <- &amqp.Error{Code: amqp.ConnectionForced, Reason: "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'", Server: true}
	err = AMQPFailure(nil, "publish", reset, w)
	if !errors.Is(err, broker.ErrConnLost) || !strings.Contains(err.Error(), "closed the connection: CONNECTION_FORCED") {
		t.Errorf("with the broker's close: %v", err)
	}
}

// maxErrLine is broker's bound on a connection error's text (NewConnError).
const maxErrLine = 190
