package cli

import (
	"net"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// --amqp-url on one broker, --api-url on another: ping and topology say
// which address answered what, and stop (ping said "ok" with the API's
// version, topology "vhost not found" without naming the server).
func TestTwoBrokersPingAndTopologyStop(t *testing.T) {
	api := brokerEnv(t)
	other := brokertest.RequireNoStats(t)
	u := *other.AMQP
	u.Path = "/"
	t.Setenv("LADDER_AMQP_URL", u.String())
	t.Setenv("LADDER_API_URL", api.APIURL.String())
	t.Setenv("LADDER_VHOST", "")
	amqpAt := net.JoinHostPort(other.AMQP.Hostname(), other.Port())
	for _, cmd := range []string{"ping", "topology"} {
		got := oneLine(t, "", cmd)
		if !strings.HasPrefix(got, "two brokers: "+amqpAt+" (AMQP) is cluster ") || !strings.Contains(got, api.APIURL.Host+" (management API) is ") {
			t.Errorf("%s: %q", cmd, got)
		}
	}
}
