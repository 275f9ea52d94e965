// Package brokertest gives integration tests a real RabbitMQ: it skips with
// a reason when none answers, or fails when LADDER_REQUIRE_BROKER=1 (CI).
package brokertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// Env variables tests read, with the defaults of a local broker.
const (
	EnvRequire = "LADDER_REQUIRE_BROKER"
	EnvAMQPURL = "LADDER_TEST_AMQP_URL"
	EnvAPIURL  = "LADDER_TEST_API_URL"
)

// Config returns the test broker's configuration.
func Config() broker.Config {
	return broker.Config{
		AMQPURL: envOr(EnvAMQPURL, "amqp://guest:guest@127.0.0.1:5672/"),
		APIURL:  envOr(EnvAPIURL, "http://127.0.0.1:15672"),
	}
}

// Require returns a resolved config for a broker whose AMQP port and
// management API both answer; otherwise it skips (or fails under CI).
func Require(t testing.TB) *broker.Resolved {
	t.Helper()
	r, err := Config().Resolve()
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
			t.Fatalf("%s (%s=1: a broker is required; run scripts/rabbitmq.sh up)", why, EnvRequire)
		}
		t.Skipf("%s (run scripts/rabbitmq.sh up, or set %s)", why, EnvAMQPURL)
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

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
