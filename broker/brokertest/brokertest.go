// Package brokertest gives integration tests a real RabbitMQ: it skips with
// a reason when none answers, or fails when LADDER_REQUIRE_BROKER=1 (CI).
package brokertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/rabbit"
)

// Env variables tests read, with the defaults of a local broker.
const (
	EnvRequire = "LADDER_REQUIRE_BROKER"
	EnvAMQPURL = "LADDER_TEST_AMQP_URL"
	EnvAPIURL  = "LADDER_TEST_API_URL"
	// EnvPromURL is the test broker's Prometheus ("" derives it: the API
	// host on 15692, which is 3.10's; the 4.3 node's is on 15693).
	EnvPromURL = "LADDER_TEST_PROMETHEUS_URL"
	// A 4.3 broker with management stats off (rabbitmq.sh up --version
	// 4.3 --no-stats), for rates from Prometheus.
	EnvNoStatsAMQPURL = "LADDER_TEST_NOSTATS_AMQP_URL"
	EnvNoStatsAPIURL  = "LADDER_TEST_NOSTATS_API_URL"
	EnvNoStatsPromURL = "LADDER_TEST_NOSTATS_PROMETHEUS_URL"
)

// Config returns the test broker's configuration.
func Config() rabbit.Config {
	return rabbit.Config{
		AMQPURL:       envOr(EnvAMQPURL, "amqp://guest:guest@127.0.0.1:5672/"),
		APIURL:        envOr(EnvAPIURL, "http://127.0.0.1:15672"),
		PrometheusURL: os.Getenv(EnvPromURL),
	}
}

// Require returns a resolved config for a broker whose AMQP port and
// management API both answer; otherwise it skips (or fails under CI).
func Require(t testing.TB) *rabbit.Resolved {
	t.Helper()
	return require(t, Config(), "scripts/rabbitmq.sh up", EnvAMQPURL)
}

// NoStatsConfig is the stats-less broker's configuration.
func NoStatsConfig() rabbit.Config {
	return rabbit.Config{
		AMQPURL:       envOr(EnvNoStatsAMQPURL, "amqp://guest:guest@127.0.0.1:5675/"),
		APIURL:        envOr(EnvNoStatsAPIURL, "http://127.0.0.1:15675"),
		PrometheusURL: envOr(EnvNoStatsPromURL, "http://127.0.0.1:15695"),
	}
}

// RequireNoStats is Require for the broker with management stats off.
func RequireNoStats(t testing.TB) *rabbit.Resolved {
	t.Helper()
	return require(t, NoStatsConfig(), "scripts/rabbitmq.sh up --version 4.3 --no-stats", EnvNoStatsAMQPURL)
}

func require(t testing.TB, cfg rabbit.Config, up, env string) *rabbit.Resolved {
	t.Helper()
	r, err := cfg.Resolve()
	if err != nil {
		t.Fatalf("test broker config: %v", err)
	}
	why := ""
	if err := probe(net.JoinHostPort(r.AMQP.Hostname(), r.Port())); err != nil {
		why = "no RabbitMQ at " + r.RedactedAMQP() + ": " + err.Error()
	} else if err := probe(r.APIURL.Host); err != nil {
		why = "no management API at " + r.RedactedAPI() + ": " + err.Error()
	}
	if why != "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s (%s=1: a broker is required; run %s)", why, EnvRequire, up)
		}
		t.Skipf("%s (run %s, or set %s)", why, up, env)
	}
	return r
}

func probe(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// Name returns a unique, recognisable name for a test's queue or exchange.
func Name(t testing.TB, suffix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	n := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	if len(n) > 60 {
		n = n[:60]
	}
	if suffix != "" {
		suffix = "." + suffix
	}
	return "ladder-test." + n + "." + hex.EncodeToString(b[:]) + suffix
}

// VhostPrefix starts the name of every vhost a test makes for itself, so a
// sweep can find those an interrupted run left behind.
const VhostPrefix = "ladder-test."

// OwnVhost gives a test a vhost of its own: created with a unique name, the
// test broker's user granted everything on it, deleted (with all it holds,
// ladder's own wait queues too) when the test ends. Tests that read a whole
// vhost — snapshots, topology, discovery, the TUI — use one, so a broker
// full of other people's queues cannot change what they see.
func OwnVhost(t testing.TB) *rabbit.Resolved {
	t.Helper()
	return OwnVhostOn(t, Require(t))
}

// OwnVhostOn is OwnVhost on the broker r reaches.
func OwnVhostOn(t testing.TB, r *rabbit.Resolved) *rabbit.Resolved {
	t.Helper()
	name := Name(t, "")
	if len(name) > 100 {
		name = name[:100]
	}
	if err := API(r, http.MethodPut, "vhosts/"+url.PathEscape(name), nil); err != nil {
		t.Fatalf("create vhost %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := API(r, http.MethodDelete, "vhosts/"+url.PathEscape(name), nil); err != nil {
			t.Errorf("delete vhost %s: %v", name, err)
		}
	})
	perm, _ := json.Marshal(map[string]string{"configure": ".*", "write": ".*", "read": ".*"})
	if err := API(r, http.MethodPut, "permissions/"+url.PathEscape(name)+"/"+url.PathEscape(r.APIUser), perm); err != nil {
		t.Fatalf("grant %s on vhost %s: %v", r.APIUser, name, err)
	}
	own := *r
	own.Vhost = name
	return &own
}

// API sends one request to the test broker's management API (path after
// /api/) and fails on any status of 300 or more. A request whose kept-alive
// connection the server had just closed (EOF, reset: Go retries only GETs
// by itself) is sent again, twice at most; a DELETE sent again that finds
// nothing left (404) did its work the first time.
func API(r *rabbit.Resolved, method, path string, body []byte) error {
	var err error
	for attempt := range 3 {
		var retry bool
		if retry, err = apiOnce(r, method, path, body, attempt > 0); !retry {
			return err
		}
	}
	return err
}

func apiOnce(r *rabbit.Resolved, method, path string, body []byte, again bool) (retry bool, err error) {
	req, err := http.NewRequest(method, r.APIURL.String()+"/api/"+path, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	if err := r.SetAPIAuth(req); err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if again && method == http.MethodDelete && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if resp.StatusCode >= 300 {
		return false, fmt.Errorf("%s /api/%s: %s %s", method, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	return false, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// The brokers of each version scripts/rabbitmq.sh starts, by their fixed
// ports (EnvVersionAMQPURL and friends override them).
var versionPorts = map[string][3]string{
	"3.10": {"5672", "15672", "15692"},
	"4.3":  {"5673", "15673", "15693"},
	"4.0":  {"5674", "15674", "15694"},
}

// EnvVersionAMQPURL names the variable overriding the AMQP URL of the test
// broker of version ("LADDER_TEST_AMQP_URL_4_0"); EnvVersionAPIURL and
// EnvVersionPromURL the management and Prometheus URLs.
func EnvVersionAMQPURL(version string) string { return EnvAMQPURL + "_" + versionSuffix(version) }
func EnvVersionAPIURL(version string) string  { return EnvAPIURL + "_" + versionSuffix(version) }
func EnvVersionPromURL(version string) string { return EnvPromURL + "_" + versionSuffix(version) }

func versionSuffix(v string) string { return strings.ReplaceAll(v, ".", "_") }

// VersionConfig is the configuration of the test broker of version ("3.10",
// "4.0" or "4.3"); ok is false for a version scripts/rabbitmq.sh does not run.
func VersionConfig(version string) (cfg rabbit.Config, ok bool) {
	p, ok := versionPorts[version]
	if !ok {
		return rabbit.Config{}, false
	}
	return rabbit.Config{
		AMQPURL:       envOr(EnvVersionAMQPURL(version), "amqp://guest:guest@127.0.0.1:"+p[0]+"/"),
		APIURL:        envOr(EnvVersionAPIURL(version), "http://127.0.0.1:"+p[1]),
		PrometheusURL: envOr(EnvVersionPromURL(version), "http://127.0.0.1:"+p[2]),
	}, true
}

// RequireVersion is Require for the broker of one RabbitMQ version, whatever
// LADDER_TEST_AMQP_URL says: for tests of behaviour that differs by version
// (make test runs the suite on 3.10 and 4.3, and starts 4.0 for these). It
// skips with the reason when that broker does not answer, or answers as
// another version; under LADDER_REQUIRE_BROKER=1 it fails instead.
func RequireVersion(t testing.TB, version string) *rabbit.Resolved {
	t.Helper()
	cfg, ok := VersionConfig(version)
	if !ok {
		t.Fatalf("RequireVersion(%q): no test broker of that version (3.10, 4.0 or 4.3)", version)
	}
	up := "scripts/rabbitmq.sh up --version " + version
	r := require(t, cfg, up, EnvVersionAMQPURL(version))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := rabbit.NewManagement(r)
	if err != nil {
		t.Fatalf("RabbitMQ %s: %v", version, err)
	}
	defer m.Close()
	got, err := m.BrokerVersion(ctx)
	if err == nil && got != version && !strings.HasPrefix(got, version+".") {
		err = fmt.Errorf("it answers as RabbitMQ %s", got)
	}
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("RabbitMQ %s at %s: %v (%s=1: a broker is required; run %s)", version, r.RedactedAPI(), err, EnvRequire, up)
		}
		t.Skipf("RabbitMQ %s at %s: %v (run %s)", version, r.RedactedAPI(), err, up)
	}
	return r
}

// WaitManagedDepth waits (bounded by a minute) until the management API
// reports queue in r's vhost holding n messages. The API's counts lag the
// queue by up to a stats interval (5 s): a command that reads the ladder
// just after a test filled it would see it grow, the finding true.
func WaitManagedDepth(t testing.TB, r *rabbit.Resolved, queue string, n int64) {
	t.Helper()
	m, err := rabbit.NewManagement(r)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var got int64
	ok := WaitFor(time.Minute, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		q, err := m.Queue(ctx, r.Vhost, queue)
		got = q.Messages
		return err == nil && got == n
	})
	if !ok {
		t.Fatalf("the management API reports %d messages in %s, want %d", got, queue, n)
	}
}
