package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// --api-timeout, and LADDER_API_TIMEOUT in its place, bound every
// management API request end to end: through a proxy that holds each
// answer back 3 s, a 1 s bound gives up in the words that name it. 0 is a
// usage error.
func TestAPITimeoutFromTheFlagAndTheEnvironment(t *testing.T) {
	r := brokerEnv(t)
	slow := brokertest.NewDelayedAPI(t, r.APIURL)
	slow.SetDelay(3 * time.Second)
	t.Setenv("LADDER_API_URL", slow.URL)
	want := "management API at " + strings.TrimPrefix(slow.URL, "http://") + " slow: no answer in 1s (--api-timeout)"

	if line := oneLine(t, "", "topology", "--api-timeout", "1s"); !strings.Contains(line, want) {
		t.Errorf("--api-timeout 1s: %q, want %q", line, want)
	}
	t.Setenv("LADDER_API_TIMEOUT", "1s")
	if line := oneLine(t, "", "topology"); !strings.Contains(line, want) {
		t.Errorf("LADDER_API_TIMEOUT=1s: %q, want %q", line, want)
	}
	// The flag wins over the environment.
	if line := oneLine(t, "", "topology", "--api-timeout", "2s"); !strings.Contains(line, "no answer in 2s (--api-timeout)") {
		t.Errorf("--api-timeout 2s over LADDER_API_TIMEOUT=1s: %q", line)
	}

	for _, c := range []struct {
		env  string
		args []string
	}{
		{"", []string{"topology", "--api-timeout", "0"}},
		{"0", []string{"topology"}},
	} {
		t.Setenv("LADDER_API_TIMEOUT", c.env)
		code, out, errOut := runLadder(t, c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "--api-timeout 0s: want more than 0") {
			t.Errorf("LADDER_API_TIMEOUT=%q %v: exit %d, %q %q; want %d and the flag named", c.env, c.args, code, out, errOut, exitUsage)
		}
	}
}
