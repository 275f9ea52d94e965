package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// heldBySingleActiveConsumer makes q's messages unreadable to a browse: q
// is a single-active-consumer queue whose active consumer (this test's,
// holding one message) is not ladder's, so the broker delivers ladder
// nothing while the rest stay ready.
func heldBySingleActiveConsumer(t *testing.T, q string) {
	t.Helper()
	r := brokerEnv(t)
	conn, err := r.DialAMQP(context.Background(), "test sac")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(q, "holder", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-ds
}

// A peek or dump that cannot read what the queue holds says so and exits
// 3 (partial): at its deadline (--max-time), and when the broker delivers
// nothing for a while with messages still ready (another consumer
// preferred) — never a complete-looking result of nothing.
func TestPeekAndDumpThatStopShortSaySoAndExit3(t *testing.T) {
	r := brokerEnv(t)
	q := testQueue(t, r, "sac", 5, amqp.Table{"x-single-active-consumer": true})
	heldBySingleActiveConsumer(t, q)

	code, out, errOut := runLadder(t, "peek", q, "-n", "10", "--max-time", "300ms")
	if code != exitPartial || !strings.Contains(out, "! incomplete: stopped at the 300ms deadline after 0 messages of 4") {
		t.Errorf("peek --max-time: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "stopped at the 300ms deadline") {
		t.Errorf("stderr does not say why: %q", errOut)
	}

	code, out, errOut = runLadder(t, "peek", q, "-n", "10", "-o", "json", "--max-time", "300ms")
	var res struct {
		Incomplete string `json:"incomplete"`
		Messages   []any  `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if code != exitPartial || !strings.Contains(res.Incomplete, "stopped at the 300ms deadline") || len(res.Messages) != 0 {
		t.Errorf("peek -o json: exit %d, incomplete %q, %d messages (%s)", code, res.Incomplete, len(res.Messages), errOut)
	}

	// A dump has no deadline: the broker's silence while messages wait ends it.
	file := filepath.Join(t.TempDir(), "d.jsonl")
	code, _, errOut = runLadder(t, "dump", q, "--out", file)
	if code != exitPartial || !strings.Contains(errOut, "! incomplete: the broker delivered nothing for 5s after 0 messages with 4 still ready") {
		t.Errorf("dump: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("a dump that wrote nothing left its file")
	}
	if d := depthOf(t, r, q); d != 4 {
		t.Errorf("%d ready after, want 4", d)
	}
}

func TestMaxTimeMustBePositive(t *testing.T) {
	code, _, errOut := runLadder(t, "peek", "q", "--max-time", "0s")
	if code != exitUsage || !strings.Contains(errOut, "--max-time 0s") {
		t.Fatalf("exit %d %q", code, errOut)
	}
}

// On a terminal a read that takes a while shows how far it is on stderr,
// one updating line, cleared when it ends (the result follows).
func TestPeekShowsItsProgressOnATerminal(t *testing.T) {
	r := brokerEnv(t)
	q := testQueue(t, r, "sac-tty", 5, amqp.Table{"x-single-active-consumer": true})
	heldBySingleActiveConsumer(t, q)
	env := []string{"NO_COLOR=1", "LADDER_AMQP_URL=" + brokertest.Config().AMQPURL, "LADDER_API_URL=" + brokertest.Config().APIURL}
	// The deadline (2 s) well before the stall bound a single active
	// consumer's queue gets (5 s): a busy machine must not swap them.
	s := newTmux(t, "200", "24", env, "peek", q, "-n", "10", "--max-time", "2s")
	s.waitFor("reading the queue… 0 of 4")
	scr := s.waitFor("! incomplete: stopped at the 2s deadline")
	if strings.Contains(scr, "reading the queue…") {
		t.Errorf("the progress line stayed:\n%s", scr)
	}
}
