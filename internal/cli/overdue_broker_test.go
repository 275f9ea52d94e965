package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// The wait queue, written to straight: a 1-hour head and 500
// behind it at 2 s, no queue TTL, dead-lettering to work. Once the 500 are
// overdue, any read past the head releases them at once (RabbitMQ expires
// only the head). So ladder peek refuses without --force-peek, in one line
// naming the queue, at most how many and where they go, and releases
// nothing; --read-only refuses even with it; unblock --dry-run likewise;
// forced, each says how many it released and where.
func TestOverdueWaitQueueIsReadOnlyWithConsent(t *testing.T) {
	r := vhostEnv(t)
	ctx := context.Background()
	ch := brokertest.Channel(t, r, "test overdue")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	var published time.Time
	fill := func(work string) {
		declareDelayQueue(t, ch, work)
		pub := func(id, exp string) {
			dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", work+".delay", false, false, amqp.Publishing{
				MessageId: id, Expiration: exp, Timestamp: time.Now(), Body: []byte(id)})
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := dc.WaitContext(ctx); !ok || err != nil {
				t.Fatalf("publish %s: %v", id, err)
			}
		}
		pub("head", "3600000")
		for i := range 500 {
			pub(fmt.Sprint("short-", i), "2000")
		}
		published = time.Now()
	}
	fill("a")
	fill("b")
	// The broker's clock: 2 s after the last publish they are all overdue.
	time.Sleep(time.Until(published.Add(3 * time.Second)))
	unchanged := func(work string) {
		t.Helper()
		if d := depthOf(t, r, work+".delay"); d != 501 {
			t.Fatalf("%s.delay holds %d, want 501: the refused read released messages", work, d)
		}
		if d := depthOf(t, r, work); d != 0 {
			t.Fatalf("%s holds %d, want 0", work, d)
		}
	}

	code, out, errOut := runLadder(t, "peek", "a.delay")
	if code == exitOK {
		t.Fatalf("peek without --force-peek ran:\n%s", out)
	}
	line := strings.TrimSpace(errOut)
	t.Logf("refused: %s", line)
	if strings.Count(line, "\n") != 0 || !strings.Contains(line, "a.delay") || !strings.Contains(line, "at most 500 messages") ||
		!strings.Contains(line, "queue a") || !strings.Contains(line, "--force-peek") {
		t.Errorf("refusal is not one line naming the queue, at most 500, where and --force-peek:\n%s", errOut)
	}
	unchanged("a")

	if code, out, _ := runLadder(t, "--read-only", "peek", "a.delay", "--force-peek"); code == exitOK {
		t.Fatalf("--read-only peek --force-peek ran:\n%s", out)
	}
	unchanged("a")

	code, out, errOut = runLadder(t, "unblock", "a.delay", "--dry-run")
	if code == exitOK || !strings.Contains(errOut, "at most 500 messages") || !strings.Contains(errOut, "--force-peek") {
		t.Fatalf("unblock --dry-run without --force-peek: exit %d\n%s\n%s", code, out, errOut)
	}
	unchanged("a")

	// Forced: the dry run reads, and says what its read released.
	code, out, errOut = runLadder(t, "unblock", "a.delay", "--dry-run", "--force-peek")
	if code != exitOK || !strings.Contains(out, "500 messages left the queue during the peek") || !strings.Contains(out, "to queue a:") {
		t.Errorf("unblock --dry-run --force-peek: exit %d, does not say 500 released to queue a\n%s\n%s", code, out, errOut)
	}
	t.Logf("forced dry run:\n%s", out)
	if d := depthOf(t, r, "a"); d != 500 {
		t.Errorf("a holds %d after the forced dry run, want the 500 released", d)
	}

	code, out, errOut = runLadder(t, "peek", "b.delay", "--force-peek", "-o", "json")
	if code != exitOK {
		t.Fatalf("peek --force-peek: exit %d\n%s\n%s", code, out, errOut)
	}
	var res struct {
		Released   int64  `json:"released"`
		ReleasedTo string `json:"released_to"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Released != 500 || res.ReleasedTo != "queue b" {
		t.Errorf("peek --force-peek released %d to %q, want 500 to queue b\n%s", res.Released, res.ReleasedTo, out)
	}
}
