package cli

import (
	"encoding/json"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/usecase"
)

// peek --group-by reads as a peek does: it stops at --max-time, says so
// ("grouped N of M · partial: the scan stopped at its 300ms deadline") and exits 3. The
// queue's messages are held by another consumer (single active consumer),
// so the browse gets none and the deadline, not the broker's silence (5 s),
// is what ends it, however busy the machine.
func TestPeekGroupByStopsAtMaxTime(t *testing.T) {
	r := brokerEnv(t)
	q := testQueue(t, r, "group-deadline", 5, amqp.Table{"x-single-active-consumer": true})
	heldBySingleActiveConsumer(t, q)

	code, out, errOut := runLadder(t, "peek", q, "--group-by", "error", "--max-time", "300ms")
	if code != exitPartial || !strings.Contains(out, "grouped 0 of 4 ready messages by error · partial: the scan stopped at its 300ms deadline") ||
		!strings.Contains(out, "! incomplete: stopped at the 300ms deadline after 0 messages of 4") {
		t.Errorf("peek --group-by --max-time: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "stopped at the 300ms deadline") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr does not say why in one line: %q", errOut)
	}

	code, out, errOut = runLadder(t, "peek", q, "--group-by", "error", "-o", "json", "--max-time", "300ms")
	var res usecase.GroupedPeek
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if g := res.Grouping; code != exitPartial || g == nil || !g.Capped || g.Grouped != 0 || g.Of != 4 || !strings.Contains(res.Incomplete, "stopped at the 300ms deadline") {
		t.Errorf("-o json: exit %d, grouping %+v, incomplete %q (%s)", code, res.Grouping, res.Incomplete, errOut)
	}
	if d := depthOf(t, r, q); d != 4 {
		t.Errorf("%d ready after, want 4", d)
	}
}

// On a terminal peek --group-by shows how far its read is, as a peek does,
// and clears the line when it ends.
func TestPeekGroupByShowsItsProgressOnATerminal(t *testing.T) {
	r := brokerEnv(t)
	q := testQueue(t, r, "group-tty", 5, amqp.Table{"x-single-active-consumer": true})
	heldBySingleActiveConsumer(t, q)
	env := []string{"NO_COLOR=1", "LADDER_AMQP_URL=" + brokertest.Config().AMQPURL, "LADDER_API_URL=" + brokertest.Config().APIURL}
	s := newTmux(t, "200", "24", env, "peek", q, "--group-by", "error", "--max-time", "4s")
	s.waitFor("reading the queue… 0 of 4")
	scr := s.waitFor("stopped at the 4s deadline")
	if strings.Contains(scr, "reading the queue…") {
		t.Errorf("the progress line stayed:\n%s", scr)
	}
}
