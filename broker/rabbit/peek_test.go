package rabbit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/wire"
	"github.com/ladder-tui/ladder/retry"
)

func peekIDs(res *broker.PeekResult) []string {
	var out []string
	for _, m := range res.Messages {
		out = append(out, m.Properties.MessageID)
	}
	return out
}

func TestPeekTwiceSameOrderRemovesNothing(t *testing.T) {
	f := newFixture(t)
	q := f.queue("q", nil)
	f.publishN(q, 20, "k")
	l := f.live(true) // peeking is allowed in read-only mode
	ctx := context.Background()
	first, err := l.Peek(ctx, q, broker.PeekOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	second, err := l.Peek(ctx, q, broker.PeekOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := "[k-0 k-1 k-2 k-3 k-4 k-5 k-6 k-7 k-8 k-9]"
	if fmt.Sprint(peekIDs(first)) != want || fmt.Sprint(peekIDs(second)) != want {
		t.Fatalf("first %v second %v", peekIDs(first), peekIDs(second))
	}
	if first.Messages[0].Redelivered || !second.Messages[0].Redelivered {
		t.Errorf("redelivered: first %v second %v (a peek sets it)", first.Messages[0].Redelivered, second.Messages[0].Redelivered)
	}
	if len(first.SideEffects) == 0 || !strings.Contains(strings.Join(first.SideEffects, " "), "redelivered") {
		t.Errorf("side effects not reported: %v", first.SideEffects)
	}
	if first.Total != 20 || first.Ready != 20 {
		t.Errorf("total %d ready %d", first.Total, first.Ready)
	}
	if d := f.depth(q); d != 20 {
		t.Fatalf("peek removed messages: depth %d", d)
	}
}

func TestPeekReportsReadyVersusTotal(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newFixture(t)
	q := f.queue("q", nil)
	f.publishN(q, 5, "h")
	// Another consumer holds two messages unacked: they cannot be seen.
	ch := f.channel()
	if err := ch.Qos(2, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(q, "holder", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-ds
	<-ds
	l := f.live(true)
	var res *broker.PeekResult
	// Management counters lag; poll until they show the unacked pair.
	for i := 0; i < 100; i++ {
		res, err = l.Peek(context.Background(), q, broker.PeekOptions{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total == 5 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if res.Ready != 3 || len(res.Messages) != 3 || res.Messages[0].Properties.MessageID != "h-2" {
		t.Fatalf("ready %d total %d ids %v", res.Ready, res.Total, peekIDs(res))
	}
	if res.Total != 5 {
		t.Logf("management total lagged: %d", res.Total)
	}
	ch.Close()
}

func TestPeekDecodesHeaderTypesAlike(t *testing.T) {
	f := newFixture(t)
	q := f.queue("q", nil)
	var msgs []amqp.Publishing
	for i, v := range []any{int8(3), int16(3), int32(3), int64(3)} {
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprint(i), Headers: amqp.Table{"x-retry-count": v}})
	}
	// Every AMQP field type, through the real broker: what comes back is
	// plain values (the headers contract the inspector relies on).
	msgs = append(msgs, amqp.Publishing{MessageId: "all", Headers: amqp.Table{
		"b": true, "i8": int8(-3), "i16": int16(-300), "i32": int32(-70000), "i64": int64(1) << 40,
		"f32": float32(1.5), "f64": 2.25, "dec": amqp.Decimal{Scale: 2, Value: -425}, "s": "text",
		"x": []byte{0, 1, 0xff}, "t": time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), "v": nil,
		"arr": []interface{}{int32(1), amqp.Table{"deep": "x"}}, "nested": amqp.Table{"k": int16(1)},
	}})
	// A client republishing a message with its x-death (as 3.x brokers interpret).
	msgs = append(msgs, amqp.Publishing{MessageId: "xd", Headers: amqp.Table{
		"x-death": []interface{}{amqp.Table{"count": int32(3), "queue": "orders.process", "reason": "rejected", "exchange": "orders.topic", "routing-keys": []interface{}{"orders.created"}}},
	}})
	f.publish("", q, msgs...)
	res, err := f.live(true).Peek(context.Background(), q, broker.PeekOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Messages[:4] {
		if m.Retry.Count != 3 || m.Retry.Source != "x-retry-count" {
			t.Errorf("message %s: retry %+v", m.Properties.MessageID, m.Retry)
		}
	}
	for k, v := range res.Messages[4].Headers {
		if !wire.PlainHeaderValue(v) {
			t.Errorf("header %s: %T is not a plain value", k, v)
		}
	}
	if d, ok := res.Messages[4].Headers["dec"].(retry.Decimal); !ok || d.String() != "-4.25" {
		t.Errorf("decimal came back as %#v", res.Messages[4].Headers["dec"])
	}
	xd := res.Messages[5]
	if len(xd.Deaths) != 1 || xd.Deaths[0].Count != 3 || xd.Deaths[0].Queue != "orders.process" {
		t.Fatalf("deaths %+v", xd.Deaths)
	}
	if xd.Origin == nil || xd.Origin.Exchange != "orders.topic" || xd.Origin.RoutingKey != "orders.created" {
		t.Errorf("origin %+v", xd.Origin)
	}
}

func TestPeekBoundsTheBody(t *testing.T) {
	f := newFixture(t)
	q := f.queue("q", nil)
	f.publish("", q, amqp.Publishing{MessageId: "big", Body: []byte(strings.Repeat("a", 100000))}, amqp.Publishing{MessageId: "bin", Body: []byte{0xff, 0x00, 0x1b}})
	res, err := f.live(true).Peek(context.Background(), q, broker.PeekOptions{Limit: 2, BodyPreview: 64})
	if err != nil {
		t.Fatal(err)
	}
	big, bin := res.Messages[0], res.Messages[1]
	if big.BodySize != 100000 || len(big.Body) != 64 || !big.BodyTruncated || len(big.BodyPreview) != 64 {
		t.Errorf("big: size %d kept %d truncated %v", big.BodySize, len(big.Body), big.BodyTruncated)
	}
	if bin.BodyPreview != "hex:ff001b" {
		t.Errorf("binary preview %q", bin.BodyPreview)
	}
}

// The scenario: per-message TTLs 10 min, 1 s, 1 s, 15 min in one
// wait queue. Seen here (3.10): after 2 s the two 1 s messages still wait
// behind the head — but a consumer that takes the head uncovers them, and
// the broker dead-letters them at once. A peek can therefore not show them;
// it must say that it released them, and nothing may be lost.
func TestPeekHeadOfLineBlockedMessagesAreReportedReleased(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newFixture(t)
	dlx := f.queue("back", nil)
	q := f.queue("wait", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlx})
	now := time.Now()
	var msgs []amqp.Publishing
	for i, exp := range []string{"600000", "1000", "1000", "900000"} {
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprint(i), Expiration: exp, Timestamp: now})
	}
	f.publish("", q, msgs...)
	time.Sleep(2 * time.Second)
	if d := f.depth(q); d != 4 {
		t.Fatalf("before the peek: depth %d, want 4 (the overdue pair blocked behind the head)", d)
	}
	// Its messages carry their own TTLs: read-only refuses the read that
	// releases them, and the peek needs consent (Force).
	if _, err := f.live(true).Peek(context.Background(), q, broker.PeekOptions{Limit: 10, Force: true}); !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("read-only peek of a wait queue whose messages carry their own TTLs: %v, want refused", err)
	}
	if _, err := f.live(false).Peek(context.Background(), q, broker.PeekOptions{Limit: 10}); !errors.Is(err, broker.ErrPeekReleases) {
		t.Fatalf("peek without consent: %v, want refused (ErrPeekReleases)", err)
	}
	if d := f.depth(q); d != 4 {
		t.Fatalf("a refused peek released messages: depth %d, want 4", d)
	}
	res, err := f.live(false).Peek(context.Background(), q, broker.PeekOptions{Limit: 10, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(peekIDs(res)) != "[0 3]" {
		t.Fatalf("peeked %v", peekIDs(res))
	}
	if res.Released != 2 || !strings.Contains(strings.Join(res.SideEffects, " "), "2 messages left the queue") {
		t.Fatalf("released %d, side effects %v", res.Released, res.SideEffects)
	}
	for i, m := range res.Messages {
		if m.HoL == nil || m.HoL.Blocked || m.HoL.Overdue != 0 {
			t.Errorf("message %d: %+v", i, m.HoL)
		}
	}
	// Nothing lost: the released pair went where their TTL sends them.
	back := idsOf(f.drain(dlx, 500*time.Millisecond))
	if back["1"] != 1 || back["2"] != 1 || len(back) != 2 {
		t.Errorf("dead-lettered %v", back)
	}
}

func TestPeekStreamHasNoSideEffects(t *testing.T) {
	f := newFixture(t)
	q := f.queue("stream", amqp.Table{"x-queue-type": "stream"})
	f.publishN(q, 5, "s")
	l := f.live(true)
	for i := 0; i < 2; i++ {
		res, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(peekIDs(res)) != "[s-0 s-1 s-2]" || len(res.SideEffects) != 0 || res.Messages[0].Redelivered {
			t.Fatalf("peek %d: %v side effects %v", i, peekIDs(res), res.SideEffects)
		}
	}
}

func TestPeekMissingQueueNamesIt(t *testing.T) {
	f := newFixture(t)
	_, err := f.live(true).Peek(context.Background(), "ladder-no-such-queue", broker.PeekOptions{})
	if !errors.Is(err, broker.ErrNotFound) || !strings.Contains(err.Error(), `"ladder-no-such-queue"`) {
		t.Fatalf("err %v", err)
	}
}

func TestPeekEmptyQueueReportsNoSideEffects(t *testing.T) {
	f := newFixture(t)
	q := f.queue("empty", nil)
	res, err := f.live(true).Peek(context.Background(), q, broker.PeekOptions{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 0 || len(res.SideEffects) != 0 {
		t.Fatalf("%+v", res)
	}
}
