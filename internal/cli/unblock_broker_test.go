package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/usecase"
)

// A delay queue written to straight, with a 10-minute message at its head
// and 1,000 short ones behind it: after ladder unblock the short ones leave
// on time, the head waits its remaining time in its own queue, none lost.
func TestUnblockFreesTheShortMessagesOnTheBroker(t *testing.T) {
	r := vhostEnv(t)
	ctx := context.Background()
	ch := brokertest.Channel(t, r, "test unblock")
	declareDelayQueue(t, ch, "work")
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
	// On a busy machine publishing alone can take seconds: the last short
	// message falls due 8 s after it was confirmed, not after the first.
	published := time.Now()

	code, out, errOut := runLadder(t, "unblock", "work.delay", "--force-peek", "--yes", "-o", "json")
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

	// The short ones arrive in work on time: by their 8 s (and generous
	// slack: a bound, not a timing claim); blocked, they would wait 10 min.
	deadline := published.Add(8*time.Second + 60*time.Second)
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

// Repro D of issue 12 on a broker, and look-alikes: messages with no id
// and the same body are told apart. In work3.delay a 30 s and a 10-minute
// "x" both hold a 10 s "z" back: each moves with its own remaining delay,
// and the 30 s one arrives in work3 when due, not 10 minutes late. In
// work4.delay five identical 15 s messages wait behind a 10-minute one with
// the same body: only the head moves (the dry run says 1 too).
func TestUnblockTellsLookAlikesApartOnTheBroker(t *testing.T) {
	r := vhostEnv(t)
	ctx := context.Background()
	ch := brokertest.Channel(t, r, "test unblock look-alikes")
	declareDelayQueue(t, ch, "work3")
	declareDelayQueue(t, ch, "work4")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	pub := func(q, body, exp string) {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", q, false, false, amqp.Publishing{
			Expiration: exp, Timestamp: time.Now(), DeliveryMode: amqp.Persistent, Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish %s: %v", body, err)
		}
	}
	start := time.Now()
	pub("work3.delay", "x", "30000")
	pub("work3.delay", "x", "600000")
	pub("work3.delay", "z", "10000")
	pub("work4.delay", "same", "600000")
	for range 5 {
		pub("work4.delay", "same", "15000")
	}

	code, out, errOut := runLadder(t, "unblock", "work3.delay", "--force-peek", "--yes", "-o", "json")
	var res unblockResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("work3: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	if res.Move == nil || len(res.Unblock.Picks) != 2 || res.Move.Requested != 2 || res.Move.Moved != 2 || len(res.Move.Routes) != 2 {
		t.Fatalf("work3: want 2 picked and moved, each its own way: %s", out)
	}
	code, out, errOut = runLadder(t, "unblock", "work4.delay", "--force-peek", "--dry-run", "-o", "json")
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.Move == nil || res.Move.Requested != 1 || res.Move.Via["delay_queue"] != 1 {
		t.Fatalf("work4 dry run: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	code, out, errOut = runLadder(t, "unblock", "work4.delay", "--force-peek", "--yes", "-o", "json")
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.Move == nil || res.Move.Requested != 1 || res.Move.Moved != 1 {
		t.Fatalf("work4: exit %d %v\n%s\n%s", code, err, out, errOut)
	}

	// z (10 s) and the 30 s x reach work3 by 30 s and slack; all five
	// 15 s look-alikes reach work4. (The delays are long enough that no
	// message falls due while the commands run on a busy machine: an
	// overdue one is released by the read, as it should be, and the test
	// would plan something else.)
	deadline := start.Add(30*time.Second + time.Minute)
	for depthOf(t, r, "work3") < 2 || depthOf(t, r, "work4") < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("after %v work3 has %d of 2, work4 %d of 5", time.Since(start), depthOf(t, r, "work3"), depthOf(t, r, "work4"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(start)
	got := map[string]int{}
	for _, q := range []string{"work3", "work4"} {
		for {
			d, ok, err := ch.Get(q, true)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			exp, _ := d.Headers["x-ladder-original-expiration"].(string)
			got[q+":"+string(d.Body)+"/"+exp]++
		}
	}
	want := map[string]int{"work3:z/": 1, "work3:x/30000": 1, "work4:same/": 5}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("arrived %v, want %v (in %v)", got, want, took)
	}
	if d := depthOf(t, r, "work3.delay") + depthOf(t, r, "work4.delay"); d != 0 {
		t.Errorf("the delay queues still hold %d", d)
	}
}

// The time spent confirming adds no lateness on a broker: planned at the
// peek, moved 4 s later, an 8 s message still reaches work when it was due
// (not 4 s late), through a wait queue of its remaining delay as of the
// peek.
func TestUnblockKeepsTheDueTimeOnTheBroker(t *testing.T) {
	r := vhostEnv(t)
	ctx := context.Background()
	ch := brokertest.Channel(t, r, "test unblock lateness")
	declareDelayQueue(t, ch, "work")
	// A whole second, as AMQP timestamps are: the due time is exact.
	stamp := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(stamp))
	for _, m := range []struct{ id, exp string }{{"long", "8000"}, {"short", "1000"}} {
		if err := ch.PublishWithContext(ctx, "", "work.delay", false, false, amqp.Publishing{
			MessageId: m.id, Expiration: m.exp, Timestamp: stamp, Body: []byte(m.id)}); err != nil {
			t.Fatal(err)
		}
	}
	live, err := rabbit.NewLive(r, "test unblock lateness")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	req, plan, _, err := usecase.PrepareUnblockWith(ctx, live, "work.delay", usecase.UnblockOptions{ForcePeek: true})
	if err != nil || len(plan.Picks) != 1 || plan.Picks[0].MessageID != "long" {
		t.Fatalf("%+v %v", plan, err)
	}
	dry := req
	dry.DryRun = true
	preview, err := live.Move(ctx, dry, nil)
	if err != nil || len(preview.Planned) != 1 {
		t.Fatalf("%+v %v", preview, err)
	}
	time.Sleep(4 * time.Second) // confirming
	req.Expect = preview.Planned
	if rep, err := live.Move(ctx, req, nil); err != nil || rep.Moved != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	due := stamp.Add(8 * time.Second)
	for {
		d, ok, err := ch.Get("work", true)
		if err != nil {
			t.Fatal(err)
		}
		if ok && d.MessageId == "long" {
			break
		}
		if time.Now().After(due.Add(3 * time.Second)) {
			t.Fatalf("long not in work %v after it was due", time.Since(due))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Generous: the broker checks expiry promptly, but the box is busy.
	if late := time.Since(due); late > 1500*time.Millisecond || late < -500*time.Millisecond {
		t.Errorf("long arrived %v after it was due", late)
	} else {
		t.Logf("long arrived %v after it was due", late)
	}
}

// A pick that leaves between the preview and the move (it expired, or a
// consumer took it) is said to be gone, the move exits partial and nothing
// behind it is lost. With the queue empty by then, the live broker says
// what the simulation says (it said "nothing to move", exit 0).
func TestUnblockWhenThePickHasLeft(t *testing.T) {
	r := vhostEnv(t)
	ctx := context.Background()
	ch := brokertest.Channel(t, r, "test unblock pick left")
	declareDelayQueue(t, ch, "work")
	publish := func(id, exp string) {
		t.Helper()
		if err := ch.PublishWithContext(ctx, "", "work.delay", false, false, amqp.Publishing{
			MessageId: id, Expiration: exp, Timestamp: time.Now(), Body: []byte(id)}); err != nil {
			t.Fatal(err)
		}
	}
	const behind = 20
	publish("head", "600000")
	msgs := make([]amqp.Publishing, behind)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("short-%d", i), Expiration: "300000", Timestamp: time.Now(), Body: []byte("s")}
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	if err := brokertest.PublishConfirmed(ctx, ch, "", "work.delay", msgs); err != nil {
		t.Fatal(err)
	}
	live, err := rabbit.NewLive(r, "test unblock pick left")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	prepare := func() broker.MoveRequest {
		t.Helper()
		req, plan, _, err := usecase.PrepareUnblockWith(ctx, live, "work.delay", usecase.UnblockOptions{ForcePeek: true})
		if err != nil || len(plan.Picks) != 1 || plan.Picks[0].MessageID != "head" {
			t.Fatalf("%+v %v", plan, err)
		}
		dry := req
		dry.DryRun = true
		preview, err := live.Move(ctx, dry, nil)
		if err != nil || len(preview.Planned) != 1 {
			t.Fatalf("%+v %v", preview, err)
		}
		req.Expect = preview.Planned
		return req
	}
	take := func() *amqp.Delivery {
		t.Helper()
		for range 100 {
			d, ok, err := ch.Get("work.delay", false)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				return &d
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatal("work.delay is empty")
		return nil
	}
	req := prepare()
	if d := take(); d.MessageId != "head" { // the pick leaves
		t.Fatalf("took %q", d.MessageId)
	} else if err := d.Ack(false); err != nil {
		t.Fatal(err)
	}
	rep, err := live.Move(ctx, req, nil)
	notes := strings.Join(rep.Notes, "\n")
	if !errors.Is(err, broker.ErrPartial) || rep.Moved != 0 || rep.Requested != 1 || !strings.Contains(notes, "not found") {
		t.Fatalf("%+v %v", rep, err)
	}
	// Nothing lost: every message behind the pick is still there.
	if q, err := ch.QueueDeclarePassive("work.delay", true, false, false, false, nil); err != nil || q.Messages != behind {
		t.Fatalf("work.delay holds %d, want %d (%v)", q.Messages, behind, err)
	}
	if _, err := ch.QueuePurge("work.delay", false); err != nil {
		t.Fatal(err)
	}

	// The queue empty by the time of the move: as in the simulation.
	publish("head", "600000")
	publish("short", "300000")
	req = prepare()
	for range 2 {
		if err := take().Ack(false); err != nil {
			t.Fatal(err)
		}
	}
	rep, err = live.Move(ctx, req, nil)
	if !errors.Is(err, broker.ErrPartial) || rep.Requested != 1 || !strings.Contains(strings.Join(rep.Notes, "\n"), "not found") {
		t.Fatalf("empty queue: %+v %v", rep, err)
	}
}

// declareDelayQueue declares work and work.delay, a queue without a TTL
// that dead-letters into it: the shape unblock acts on.
func declareDelayQueue(t *testing.T, ch *amqp.Channel, work string) {
	t.Helper()
	if _, err := ch.QueueDeclare(work, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(work+".delay", true, false, false, false, amqp.Table{
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": work}); err != nil {
		t.Fatal(err)
	}
}
