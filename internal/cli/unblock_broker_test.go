package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A delay queue written to straight, with a 10-minute message at its head
// and 1,000 short ones behind it: after ladder unblock the short ones leave
// on time, the head waits its remaining time in its own queue, none lost.
func TestUnblockFreesTheShortMessagesOnTheBroker(t *testing.T) {
	r := vhostEnv(t)
	ctx := context.Background()
	conn, err := r.DialAMQP(ctx, "test unblock")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("work", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("work.delay", true, false, false, false, amqp.Table{
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	const short = 1000
	start := time.Now()
	pub := func(id, exp string) {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", "work.delay", false, false, amqp.Publishing{
			MessageId: id, Expiration: exp, Timestamp: time.Now(), DeliveryMode: amqp.Persistent, Body: []byte(id)})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish %s: %v", id, err)
		}
	}
	pub("head", "600000")
	for i := range short {
		pub(fmt.Sprint("short-", i), "8000")
	}

	code, out, errOut := runLadder(t, "unblock", "work.delay", "--yes", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var res unblockResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Unblock.Picks) != 1 || res.Unblock.Picks[0].MessageID != "head" || res.Move == nil || res.Move.Moved != 1 {
		t.Fatalf("unblock: %s", out)
	}
	rem := time.Duration(res.Unblock.Picks[0].RemainingMS) * time.Millisecond
	if rem <= 9*time.Minute || rem > 10*time.Minute {
		t.Errorf("remaining %v, want just under 10m", rem)
	}

	// The short ones arrive in work on time: by their 8 s (and slack).
	deadline := start.Add(8*time.Second + 20*time.Second)
	for depthOf(t, r, "work") < short {
		if time.Now().After(deadline) {
			t.Fatalf("work has %d of %d short messages %v after they were published", depthOf(t, r, "work"), short, time.Since(start))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if d := depthOf(t, r, "work.delay"); d != 0 {
		t.Errorf("work.delay still holds %d", d)
	}
	// Every id once: 1,000 short ones in work, the head in its own queue
	// with its remaining delay as TTL.
	seen := map[string]int{}
	drainIDs(t, ch, "work", seen)
	var own string
	for _, rt := range res.Move.Routes {
		own = rt.Through
	}
	if !strings.HasPrefix(own, "ladder.delay.") {
		t.Fatalf("routes %+v: want the head in a ladder.delay queue", res.Move.Routes)
	}
	drainIDs(t, ch, own, seen)
	if len(seen) != short+1 || seen["head"] != 1 {
		t.Fatalf("%d distinct ids (head %d), want %d", len(seen), seen["head"], short+1)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s seen %d times", id, n)
		}
	}
}

// drainIDs takes every message of q (acking it) and counts its ids.
func drainIDs(t *testing.T, ch *amqp.Channel, q string, seen map[string]int) {
	t.Helper()
	for {
		d, ok, err := ch.Get(q, true)
		if err != nil {
			t.Fatalf("get %s: %v", q, err)
		}
		if !ok {
			return
		}
		seen[d.MessageId]++
	}
}
