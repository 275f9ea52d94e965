package rabbit_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp1 "github.com/Azure/go-amqp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/usecase"
)

// on43 is a fixture in a vhost of the test's own on RabbitMQ 4.3, whatever
// the test broker is: AMQP 1.0 browsing is 4.3's (and the vhost is named
// to AMQP 1.0 as "vhost:<name>").
func on43(t *testing.T) *fixture {
	t.Helper()
	return fixtureOn(t, brokertest.OwnVhostOn(t, brokertest.RequireVersion(t, "4.3")))
}

// bothWays peeks q over AMQP 1.0, then over AMQP 0-9-1 (AMQP 1.0 refused,
// forced past the delivery limit the 0-9-1 peek counts toward).
func bothWays(t *testing.T, f *fixture, q string, limit int) (amqp1Res, amqp091Res *broker.PeekResult) {
	t.Helper()
	l := f.live(false)
	ctx := context.Background()
	a, err := l.Peek(ctx, q, broker.PeekOptions{Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(a.SideEffects, " "), "AMQP 1.0") {
		t.Fatalf("not browsed over AMQP 1.0: %v", a.SideEffects)
	}
	f.waitDepth(q, len(a.Messages)) // the releases apply asynchronously
	l091 := f.live(false)
	rabbit.RefuseAMQP1(t, l091)
	b, err := l091.Peek(ctx, q, broker.PeekOptions{Limit: limit, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(b.SideEffects, " "), "AMQP 1.0 was not available") {
		t.Fatalf("not browsed over AMQP 0-9-1: %v", b.SideEffects)
	}
	if len(a.Messages) != len(b.Messages) {
		t.Fatalf("AMQP 1.0 %d messages, 0-9-1 %d", len(a.Messages), len(b.Messages))
	}
	return a, b
}

// sameDecoded compares what both browses decoded, but for what each
// delivery changes: the redelivered flag and the quorum counters (the
// first browse raised x-acquired-count, the 0-9-1 peek saw that).
func sameDecoded(t *testing.T, a, b broker.Message) {
	t.Helper()
	for _, m := range []*broker.Message{&a, &b} {
		m.Redelivered = false
		h := m.Headers.Clone()
		delete(h, "x-acquired-count")
		delete(h, "x-delivery-count")
		m.Headers = h
	}
	if reflect.DeepEqual(a, b) {
		return
	}
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := 0; i < av.NumField(); i++ {
		if !reflect.DeepEqual(av.Field(i).Interface(), bv.Field(i).Interface()) {
			t.Errorf("message %d (%s): %s\n AMQP 1.0 %#v\n 0-9-1    %#v", a.Position, a.Properties.MessageID, av.Type().Field(i).Name, av.Field(i).Interface(), bv.Field(i).Interface())
		}
	}
}

// The same quorum queue peeked both ways decodes to the same messages:
// every header type a 0-9-1 publisher can send (but those RabbitMQ does
// not carry: see below), every property, the x-death history of two
// dead-letterings, the retry count and the origin read from it.
func TestAMQP1BrowseDecodesAsAMQP091(t *testing.T) {
	f := on43(t)
	q := f.queue("qq", amqp.Table{"x-queue-type": "quorum"})
	second := f.queue("second", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": q})
	first := f.queue("first", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": second})
	ts := time.Unix(time.Now().Unix(), 0)
	rich := amqp.Publishing{
		MessageId: "rich", CorrelationId: "urn:uuid:01020304-0506-0708-090a-0b0c0d0e0f10", ReplyTo: "reply queue/1",
		ContentType: "application/json", ContentEncoding: "identity", DeliveryMode: amqp.Persistent, Priority: 7,
		Expiration: "600000", Timestamp: ts, Type: "order.created", UserId: "guest", AppId: "shop",
		Headers: amqp.Table{
			"x-retry-count": int32(2), "b": true, "i8": int8(-3), "u8": uint8(200), "i16": int16(-300), "u16": uint16(60000),
			"i32": int32(-70000), "u32": uint32(4000000000), "i64": int64(1) << 40, "f32": float32(1.5), "f64": 2.25,
			"s": "text", "long": strings.Repeat("L", 300), "bin": []byte{0, 1, 0xff}, "t": time.Unix(1700000000, 0), "v": nil,
			"x-table": amqp.Table{"k": int16(1), "deep": amqp.Table{"x": "y"}}, "x-arr": []interface{}{"a", int32(2)},
			"x-exception-message": "boom", "CC": []interface{}{"elsewhere"},
		},
		Body: []byte(`{"id":"rich"}`),
	}
	f.publish("", q, rich, amqp.Publishing{MessageId: "plain", Body: []byte("plain")})
	// No delivery mode at all (f.publish would make it persistent).
	if err := f.ch.Publish("", q, false, false, amqp.Publishing{MessageId: "transient", Body: []byte{0xff, 0}}); err != nil {
		t.Fatal(err)
	}
	// Two dead-letterings: first, then second, then into q.
	f.publish("", first, amqp.Publishing{MessageId: "died", Headers: amqp.Table{"app": "svc"}, Body: []byte("died")})
	for _, from := range []string{first, second} {
		f.rejectOne(from)
	}
	f.waitDepth(q, 4)
	a, b := bothWays(t, f, q, 10)
	if got := peekIDs(a); fmt.Sprint(got) != "[rich plain transient died]" {
		t.Fatalf("AMQP 1.0 browse: %v", got)
	}
	for i := range a.Messages {
		sameDecoded(t, a.Messages[i], b.Messages[i])
	}
	died := a.Messages[3]
	// A quorum queue applies the 0-9-1 peek's returns asynchronously: a
	// peek at once would find fewer ready (seen: none, on a busy machine).
	f.waitDepth(q, 4)
	l := f.live(true)
	if _, err := l.Peek(context.Background(), q, broker.PeekOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := rabbit.OwnRedelivered(l, q); n != 4 {
		t.Errorf("the client counted %d redeliveries of its own, want 4 (kept out of the storm)", n)
	}
	if len(died.Deaths) != 2 || died.Deaths[0].Queue != second || died.Deaths[1].Queue != first {
		t.Errorf("deaths %+v", died.Deaths)
	}
	if a.Messages[0].Retry.Count != 2 || a.Messages[0].Headers["x-table"] == nil || a.Messages[0].Headers["CC"] == nil {
		t.Errorf("rich: retry %+v headers %v", a.Messages[0].Retry, a.Messages[0].Headers)
	}
}

// rejectOne takes the head of queue and rejects it (dead-lettering it).
func (f *fixture) rejectOne(queue string) {
	f.t.Helper()
	ch := f.channel()
	defer ch.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		d, ok, err := ch.Get(queue, false)
		if err != nil {
			f.t.Fatal(err)
		}
		if ok {
			if err := d.Reject(false); err != nil {
				f.t.Fatal(err)
			}
			return
		}
	}
	f.t.Fatalf("%s: nothing to reject", queue)
}

// What RabbitMQ 4.3 does not carry over AMQP 1.0, pinned so that a change
// shows: a 0-9-1 header not starting with "x-" that holds a table or an
// array never reaches an AMQP 1.0 browse (docs/safety.md says so).
func TestAMQP1BrowseLacksNonXTableHeaders(t *testing.T) {
	f := on43(t)
	q := f.queue("qq", amqp.Table{"x-queue-type": "quorum"})
	f.publish("", q, amqp.Publishing{MessageId: "t", Headers: amqp.Table{"arr": []interface{}{"a"}, "tab": amqp.Table{"k": "v"}, "kept": "yes"}})
	a, b := bothWays(t, f, q, 1)
	got, want := a.Messages[0].Headers, b.Messages[0].Headers
	if _, ok := want["arr"]; !ok {
		t.Fatalf("0-9-1 lacks arr: %v", want)
	}
	if _, ok := got["arr"]; ok || got["tab"] != nil || got["kept"] != "yes" {
		t.Fatalf("AMQP 1.0 browse headers %v: RabbitMQ now carries tables and arrays (update amqp1_message.go and docs/safety.md)", got)
	}
}

// Messages published over AMQP 1.0 decode as a 0-9-1 peek of them does,
// through RabbitMQ's own conversion: ids that are no short string, an
// amqp-value body, reply-to addresses.
func TestAMQP1BrowseDecodesAMQP1Published(t *testing.T) {
	f := on43(t)
	q := f.queue("qq", amqp.Table{"x-queue-type": "quorum"})
	ctx := context.Background()
	c, err := f.r.DialAMQP1(ctx, "test publisher")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "/queues/"+url.PathEscape(q), nil)
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	now := time.Now().Truncate(time.Millisecond)
	for _, m := range []*amqp1.Message{
		{Header: &amqp1.MessageHeader{Durable: true, Priority: 7, TTL: 90 * time.Second},
			Properties: &amqp1.MessageProperties{MessageID: "id-str", UserID: []byte("guest"), ReplyTo: str("/queues/rq"), CorrelationID: uint64(42),
				ContentType: str("application/json"), CreationTime: &now, GroupID: str("grp")},
			ApplicationProperties: map[string]any{"s": "str", "i8": int8(-3), "u64": uint64(1) << 63, "f64": 2.25, "b": true, "ts": now, "x-retry-count": int32(2)},
			Annotations:           amqp1.Annotations{"x-custom": "ann"},
			Data:                  [][]byte{[]byte(`{"a":1}`)}},
		{Properties: &amqp1.MessageProperties{MessageID: uint64(7), ReplyTo: str("/exchanges/e/k")}, Data: [][]byte{[]byte("p1"), []byte("p2")}},
		{Properties: &amqp1.MessageProperties{MessageID: amqp1.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, CorrelationID: []byte{1, 2}}, Value: "an amqp-value string"},
		{Properties: &amqp1.MessageProperties{MessageID: strings.Repeat("M", 300)}, Data: [][]byte{[]byte("y")}},
	} {
		if err := snd.Send(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.waitDepth(q, 4)
	a, b := bothWays(t, f, q, 10)
	for i := range a.Messages {
		sameDecoded(t, a.Messages[i], b.Messages[i])
	}
}

// RabbitMQ 4.3.6 cannot convert a 0-9-1 header holding a decimal for AMQP
// 1.0 and ends the session: the messages the browse held go back as after
// a crash, counting a delivery. The peek shows what it read, says so, and
// the client's next browse (of another queue) works again on a new
// session.
func TestAMQP1BrowseEndedByTheBrokerIsReported(t *testing.T) {
	f := on43(t)
	q := f.queue("qq", amqp.Table{"x-queue-type": "quorum"})
	f.publish("", q, amqp.Publishing{MessageId: "a"}, amqp.Publishing{MessageId: "b"},
		amqp.Publishing{MessageId: "dec", Headers: amqp.Table{"price": amqp.Decimal{Scale: 2, Value: 425}}}, amqp.Publishing{MessageId: "d"})
	l := f.live(true)
	for i := 0; i < 2; i++ {
		res, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: 1})
		if err != nil || fmt.Sprint(peekIDs(res)) != "[a]" || res.Incomplete != "" {
			t.Fatalf("peek of the head, before: %v %v %q", peekIDs(res), err, res.Incomplete)
		}
	}
	res, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(res.SideEffects, " ")
	if res.Incomplete == "" || len(res.Messages) > 2 || !strings.Contains(text, "delivery counted (x-delivery-count +1)") || !strings.Contains(text, "decimal") || strings.Contains(res.Incomplete, "\n") {
		t.Fatalf("messages %v, incomplete %q, side effects %q", peekIDs(res), res.Incomplete, text)
	}
	f.waitDepth(q, 4)
	// What the crash cost is visible.
	res, err = f.live(true).Peek(context.Background(), q, broker.PeekOptions{Limit: 1})
	if err != nil || fmt.Sprint(peekIDs(res)) != "[a]" {
		t.Fatalf("after: %v %v", peekIDs(res), err)
	}
	if n, _ := res.Messages[0].Headers["x-delivery-count"].(int64); n != 1 {
		t.Errorf("the crash counted %v deliveries on the head, want 1", res.Messages[0].Headers["x-delivery-count"])
	}
	// The client browses over AMQP 1.0 again, on a new session.
	other := f.queue("other", amqp.Table{"x-queue-type": "quorum"})
	f.publish("", other, amqp.Publishing{MessageId: "o"})
	res, err = l.Peek(context.Background(), other, broker.PeekOptions{})
	if err != nil || fmt.Sprint(peekIDs(res)) != "[o]" || !strings.Contains(strings.Join(res.SideEffects, " "), "over AMQP 1.0 and released") {
		t.Fatalf("another queue after: %v %v %q", peekIDs(res), err, res.SideEffects)
	}
}

// A queue whose AMQP 1.0 browse the broker ended has no costless browse
// for that client any more (the next would end at the same message, every
// message it held counted a delivery): its next peeks are refused under
// read-only mode, and asked for toward the delivery limit, saying why;
// forced, they read over AMQP 0-9-1. A refused peek counts nothing.
func TestPeekAfterAnEndedAMQP1BrowseHasACost(t *testing.T) {
	f := on43(t)
	q := f.queue("qq", amqp.Table{"x-queue-type": "quorum"})
	f.publish("", q, amqp.Publishing{MessageId: "a"},
		amqp.Publishing{MessageId: "dec", Headers: amqp.Table{"price": amqp.Decimal{Scale: 2, Value: 425}}}, amqp.Publishing{MessageId: "c"})
	ctx := context.Background()
	const why = "an earlier browse over AMQP 1.0 ended at a message RabbitMQ could not convert"
	head := func() any {
		t.Helper()
		f.waitDepth(q, 3)
		res, err := f.live(true).Peek(ctx, q, broker.PeekOptions{Limit: 1})
		if err != nil || len(res.Messages) != 1 {
			t.Fatalf("head: %v", err)
		}
		return res.Messages[0].Headers["x-delivery-count"]
	}
	for _, readOnly := range []bool{true, false} {
		l := f.live(readOnly)
		res, err := l.Peek(ctx, q, broker.PeekOptions{Limit: 3})
		if err != nil || res.Incomplete == "" || !strings.Contains(strings.Join(res.SideEffects, " "), "ladder's next peeks of this queue count a delivery: "+why) {
			t.Fatalf("read-only %v: the ended browse: %v, %q", readOnly, err, res.SideEffects)
		}
		before := head()
		want := broker.ErrPeekCostsDelivery
		if readOnly {
			want = broker.ErrReadOnly
		}
		for i := 0; i < 3; i++ {
			_, err := l.Peek(ctx, q, broker.PeekOptions{Limit: 3})
			var refused *broker.PeekRefused
			if !errors.As(err, &refused) || !errors.Is(err, want) || !strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("read-only %v, peek %d after: %v", readOnly, i, err)
			}
		}
		if after := head(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("read-only %v: the refused peeks counted: x-delivery-count %v, then %v", readOnly, before, after)
		}
	}
	l := f.live(false)
	if res, err := l.Peek(ctx, q, broker.PeekOptions{Limit: 3}); err != nil || res.Incomplete == "" {
		t.Fatalf("a fresh client's browse did not end: %v", err)
	}
	// (The ended browses' returns went as after a crash: the order is
	// theirs.) The broker takes back what that browse held in its own time:
	// a peek before all 3 are ready again starts from fewer.
	f.waitDepth(q, 3)
	res, err := l.Peek(ctx, q, broker.PeekOptions{Limit: 3, Force: true})
	if err != nil || len(res.Messages) != 3 || res.Incomplete != "" || !strings.Contains(strings.Join(res.SideEffects, " "), why) {
		t.Fatalf("forced: %v %v %q", peekIDs(res), err, res.SideEffects)
	}
}

// When AMQP 1.0 is refused, a 4.3 quorum queue has no costless browse:
// read-only refuses, naming why; forced, the 0-9-1 peek says what it cost.
func TestPeekWithoutAMQP1FallsBack(t *testing.T) {
	f := on43(t)
	q := f.queue("qq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3)})
	f.publishN(q, 2, "m")
	ro := f.live(true)
	rabbit.RefuseAMQP1(t, ro)
	_, err := ro.Peek(context.Background(), q, broker.PeekOptions{})
	if !errors.Is(err, broker.ErrReadOnly) || !strings.Contains(err.Error(), "the costless browse over AMQP 1.0 failed: amqp:not-implemented") {
		t.Fatalf("read-only: %v", err)
	}
	rw := f.live(false)
	rabbit.RefuseAMQP1(t, rw)
	if _, err := rw.Peek(context.Background(), q, broker.PeekOptions{}); !errors.Is(err, broker.ErrPeekCostsDelivery) {
		t.Fatalf("unforced: %v", err)
	}
	res, err := rw.Peek(context.Background(), q, broker.PeekOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(res.SideEffects, " "); !strings.Contains(text, "increments x-delivery-count and x-acquired-count") || !strings.Contains(text, "AMQP 1.0 failed") {
		t.Fatalf("side effects %q", text)
	}
}

// A drain can end the broker's sending early (seen on 4.3.6: 512 of 1,000
// ready messages): the browse takes rounds until it has all it wants, in
// order, and counts no delivery.
func TestAMQP1BrowseTakesEveryReadyMessage(t *testing.T) {
	f := on43(t)
	q := f.queue("qq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3)})
	f.publishN(q, 1500, "m")
	res, err := f.live(true).Peek(context.Background(), q, broker.PeekOptions{Limit: 1200, BodyPreview: 16})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 1200 || res.Incomplete != "" {
		t.Fatalf("%d messages, incomplete %q", len(res.Messages), res.Incomplete)
	}
	for i, m := range res.Messages {
		if m.Properties.MessageID != fmt.Sprintf("m-%d", i) {
			t.Fatalf("position %d holds %s", i, m.Properties.MessageID)
		}
	}
	f.waitDepth(q, 1500)
}

// The AMQP 1.0 browse follows the same rules as the 0-9-1 one: each
// message goes to Each in queue order (none kept: a dump of a 4.3 quorum
// queue streams to its file), progress is reported, and a browse-dump
// writes every line with no delivery counted.
func TestAMQP1BrowseHandsEachMessageOnAndDumpsAll(t *testing.T) {
	f := on43(t)
	q := f.queue("qq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3)})
	const n = 3000 // more than one round of credit
	f.seedSmall(q, n, "m")
	f.waitDepth(q, n)
	l := f.live(true)
	var ids []string
	var last broker.PeekProgress
	res, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: n, BodyPreview: 1,
		Progress: func(p broker.PeekProgress) { last = p },
		Each: func(m *broker.Message) error {
			ids = append(ids, m.Properties.MessageID)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.SideEffects, " "), "AMQP 1.0") {
		t.Fatalf("not browsed over AMQP 1.0: %v", res.SideEffects)
	}
	if res.Incomplete != "" || len(res.Messages) != 0 {
		t.Errorf("incomplete %q, %d messages kept (Each keeps none)", res.Incomplete, len(res.Messages))
	}
	inOrder(t, ids, "m", n)
	if !last.Done || last.Read != n {
		t.Errorf("last progress %+v", last)
	}
	f.waitDepth(q, n)

	var w memWriter
	rep, err := usecase.Dump(context.Background(), l, usecase.DumpOptions{Queue: q}, &w)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != n {
		t.Errorf("dump wrote %d of %d", rep.Written, n)
	}
	inOrder(t, dumpIDs(t, w.Bytes()), "m", n)
	f.waitDepth(q, n)
	// Two browses of every message, and none counted a delivery.
	ch := f.channel()
	defer ch.Close()
	d, ok, err := ch.Get(q, false)
	if err != nil || !ok {
		t.Fatalf("get: %v %v", ok, err)
	}
	if c, has := d.Headers["x-delivery-count"]; has {
		t.Errorf("x-delivery-count %v after two AMQP 1.0 browses", c)
	}
	d.Nack(false, true)
}
