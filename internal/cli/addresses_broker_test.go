package cli

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/internal/present"
)

// --amqp-url and --api-url list several nodes: ladder uses the first that
// answers, and says which on stderr (stdout stays the command's).
func TestSeveralAddressesUseTheFirstThatAnswers(t *testing.T) {
	r := vhostEnv(t)
	cfg := brokertest.Config()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String() // nothing listens there once closed
	l.Close()
	t.Setenv("LADDER_AMQP_URL", "amqp://guest:guest@"+down+"/,"+cfg.AMQPURL)
	t.Setenv("LADDER_API_URL", "http://"+down+","+cfg.APIURL)
	code, out, errOut := runLadder(t, "topology", "-o", "json")
	if code != exitOK {
		t.Fatalf("topology with a down node first: exit %d %s", code, errOut)
	}
	var rep present.TopologyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Vhost != r.Vhost {
		t.Fatalf("stdout is not the report of vhost %s: %v\n%s", r.Vhost, err, out)
	}
	if want := "ladder: using " + r.Address() + " (passed over " + down + " (AMQP): connection refused)\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	// ping names the address it used.
	if code, out, _ := runLadder(t, "ping"); code != exitOK || !strings.Contains(out, r.AMQP.Host) {
		t.Errorf("ping: exit %d %q, want the address that answered", code, out)
	}
	// None answers: one line naming each, exit 1.
	t.Setenv("LADDER_AMQP_URL", "amqp://guest:guest@"+down+"/,amqp://guest:guest@"+down+"/")
	t.Setenv("LADDER_API_URL", "")
	code, _, errOut = runLadder(t, "topology")
	if code != exitError || strings.Count(errOut, down) != 2 || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "guest:guest") {
		t.Errorf("no node answers: exit %d %q", code, errOut)
	}
}
