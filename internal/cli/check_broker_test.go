package cli

import (
	"encoding/json"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/retry/topology"
)

// On the broker: a vhost with nothing wrong checks clean (exit 0, nothing
// printed); a queue dead-lettering to an exchange that does not exist,
// named with a terminal escape, fails the check (exit 4) with one line
// naming it, the escape made harmless, and -o json counts it.
func TestCheckOnTheBroker(t *testing.T) {
	r := vhostEnv(t)
	if code, out, errOut := runLadder(t, "check"); code != exitOK || out != "" {
		t.Fatalf("an empty vhost: exit %d %q %s", code, out, errOut)
	}
	q := testQueue(t, r, "dead\x1b[2Jend", 1, amqp.Table{"x-dead-letter-exchange": "no.such.exchange"})
	code, out, errOut := runLadder(t, "check")
	if code != exitFindings || strings.Count(out, "\n") != 1 || !strings.Contains(out, topology.CodeUnroutableDeadLetter) ||
		strings.Contains(out, "\x1b") || !strings.Contains(out, clean(q)) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runLadder(t, "check", "-o", "json")
	var rep checkReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if code != exitFindings || rep.Failing != 1 || len(rep.Findings) < 1 || rep.Findings[0].Queue != q {
		t.Errorf("json: exit %d %+v", code, rep)
	}
}
