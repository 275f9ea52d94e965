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
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

func idsOf(ds []amqp.Delivery) map[string]int {
	out := map[string]int{}
	for _, d := range ds {
		out[d.MessageId]++
	}
	return out
}

func TestMoveEveryMessageExactlyOnce(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	const n = 10000
	f.publishN(src, n, "m")
	var last broker.MoveProgress
	rep, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}},
		func(p broker.MoveProgress) { last = p })
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requested != n || rep.Moved != n || rep.Failed+rep.Returned+rep.Skipped != 0 {
		t.Fatalf("report %+v", rep)
	}
	if last.Done != n || last.Total != n {
		t.Errorf("last progress %+v", last)
	}
	if d := f.depth(src); d != 0 {
		t.Errorf("source still has %d", d)
	}
	got := idsOf(f.drain(dst, time.Second))
	if len(got) != n {
		t.Fatalf("target has %d distinct ids, want %d", len(got), n)
	}
	for i := 0; i < n; i++ {
		if c := got[fmt.Sprintf("m-%d", i)]; c != 1 {
			t.Fatalf("m-%d arrived %d times", i, c)
		}
	}
}

func TestMoveKeepsPropertiesAndHeaderTypes(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	ts := time.Unix(1764500000, 0)
	f.publish("", src, amqp.Publishing{
		MessageId: "keep-1", CorrelationId: "c-9", ContentType: "text/plain", Type: "order.created", AppId: "billing",
		Timestamp: ts, Priority: 3, Body: []byte("body"),
		Headers: amqp.Table{"x-retry-count": int16(2), "big": int64(1 << 40), "small": int8(-3), "name": "v", "flag": true},
	})
	rep, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}, nil)
	if err != nil || rep.Moved != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	ds := f.drain(dst, 500*time.Millisecond)
	if len(ds) != 1 {
		t.Fatalf("%d messages", len(ds))
	}
	d := ds[0]
	if d.MessageId != "keep-1" || d.CorrelationId != "c-9" || d.ContentType != "text/plain" || d.Type != "order.created" ||
		d.AppId != "billing" || !d.Timestamp.Equal(ts) || d.Priority != 3 || string(d.Body) != "body" || d.DeliveryMode != amqp.Persistent {
		t.Errorf("properties changed: %+v", d)
	}
	want := amqp.Table{"x-retry-count": int16(2), "big": int64(1 << 40), "small": int8(-3), "name": "v", "flag": true, moveplan.HeaderMovedFrom: src}
	for k, v := range want {
		if d.Headers[k] != v {
			t.Errorf("header %s = %#v (%T), want %#v (%T)", k, d.Headers[k], d.Headers[k], v, v)
		}
	}
	if _, ok := d.Headers[broker.HeaderMoveID].(string); !ok {
		t.Errorf("no %s header", broker.HeaderMoveID)
	}
}

func TestMoveResetRetriesKeepsConvention(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publish("", src,
		amqp.Publishing{MessageId: "a", Headers: amqp.Table{"x-retry-count": int16(4)}},
		amqp.Publishing{MessageId: "b", Headers: amqp.Table{"yii-attempt": "3"}},
	)
	_, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, ResetRetries: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]amqp.Table{}
	for _, d := range f.drain(dst, 500*time.Millisecond) {
		got[d.MessageId] = d.Headers
	}
	if got["a"]["x-retry-count"] != int16(0) {
		t.Errorf("a: x-retry-count %#v", got["a"]["x-retry-count"])
	}
	// yii2-queue counts attempts from 1: no retries yet is attempt "1".
	if got["b"]["yii-attempt"] != "1" {
		t.Errorf("b: yii-attempt %#v", got["b"]["yii-attempt"])
	}
}

func TestMoveUnroutableTargetLeavesEverythingInSource(t *testing.T) {
	f := newFixture(t)
	src := f.queue("src", nil)
	ex := f.exchange("nowhere", "direct", nil) // no bindings
	f.publishN(src, 50, "u")
	rep, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetExchange, Name: ex, RoutingKey: "k", HasKey: true}}, nil)
	if !errors.Is(err, broker.ErrPartial) {
		t.Fatalf("err %v, want partial", err)
	}
	if rep.Moved != 0 || rep.Skipped != 50 || !strings.Contains(rep.Planned[0].Skip, "routes to no queue") {
		t.Fatalf("report %+v", rep)
	}
	if d := f.depth(src); d != 50 {
		t.Fatalf("source has %d, want all 50", d)
	}
	// Order kept: the first message is still first.
	ds := f.drain(src, 500*time.Millisecond)
	if ds[0].MessageId != "u-0" || ds[49].MessageId != "u-49" {
		t.Errorf("order changed: first %s last %s", ds[0].MessageId, ds[49].MessageId)
	}
}

func TestMoveMissingTargetRefusedBeforeAnything(t *testing.T) {
	f := newFixture(t)
	src := f.queue("src", nil)
	f.publishN(src, 3, "x")
	_, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: "no-such-queue-ladder"}}, nil)
	if err == nil || !strings.Contains(err.Error(), `"no-such-queue-ladder"`) {
		t.Fatalf("err %v", err)
	}
	if d := f.depth(src); d != 3 {
		t.Fatalf("source has %d", d)
	}
}

func TestMoveReadOnlyRefused(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publishN(src, 2, "r")
	_, err := f.live(true).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}, nil)
	if !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("err %v", err)
	}
	if f.depth(src) != 2 || f.depth(dst) != 0 {
		t.Fatal("read-only move changed queues")
	}
}

func TestMoveLimitAndPositions(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publishN(src, 10, "p")
	l := f.live(false)
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Limit: 3}, nil)
	if err != nil || rep.Moved != 3 {
		t.Fatalf("%+v %v", rep, err)
	}
	// Now p-3 … p-9 remain; move positions 1 and 4 (p-4 and p-7).
	rep, err = l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Positions: []int{1, 4}}, nil)
	if err != nil || rep.Moved != 2 || rep.Requested != 2 {
		t.Fatalf("%+v %v", rep, err)
	}
	got := idsOf(f.drain(dst, 500*time.Millisecond))
	for _, id := range []string{"p-0", "p-1", "p-2", "p-4", "p-7"} {
		if got[id] != 1 {
			t.Errorf("%s not moved once: %v", id, got)
		}
	}
	var left []string
	for _, d := range f.drain(src, 500*time.Millisecond) {
		left = append(left, d.MessageId)
	}
	if fmt.Sprint(left) != "[p-3 p-5 p-6 p-8 p-9]" {
		t.Errorf("source left %v, want the others in order", left)
	}
}

func TestMoveDryRunMovesNothing(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publishN(src, 4, "d")
	rep, err := f.live(true).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, DryRun: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Planned) != 4 || rep.Planned[0].MessageID != "d-0" || rep.Planned[0].RoutingKey != dst || rep.Moved != 0 {
		t.Fatalf("%+v", rep)
	}
	if f.depth(src) != 4 || f.depth(dst) != 0 {
		t.Fatal("dry run moved messages")
	}
}

// A delayed move to a target that routes nowhere would be dropped when the
// delay ends: every message is skipped and stays.
func TestMoveWithDelayToUnroutableTargetLeavesEverything(t *testing.T) {
	f := newVhostFixture(t)
	src := f.queue("src", nil)
	ex := f.exchange("nowhere", "direct", nil)
	f.publishN(src, 5, "n")
	rep, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetExchange, Name: ex, RoutingKey: "k", HasKey: true}, Delay: time.Second}, nil)
	if !errors.Is(err, broker.ErrPartial) || rep.Moved != 0 || rep.Skipped != 5 {
		t.Fatalf("%+v %v", rep, err)
	}
	if !strings.Contains(rep.Planned[0].Skip, "routes to no queue") {
		t.Errorf("note %q", rep.Planned[0].Skip)
	}
	if f.depth(src) != 5 {
		t.Fatal("messages left the source")
	}
}

// A position whose message changed since the peek is not moved.
func TestMovePositionChecksTheMessageID(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publishN(src, 3, "id")
	rep, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst},
		Positions: []int{0, 1}, PositionIDs: []string{"id-0", "someone-else"}}, nil)
	if !errors.Is(err, broker.ErrPartial) || rep.Moved != 1 || rep.Skipped != 1 || !strings.Contains(rep.Planned[0].Skip, "someone-else") {
		t.Fatalf("%+v %v", rep, err)
	}
	if got := idsOf(f.drain(dst, 300*time.Millisecond)); got["id-0"] != 1 || len(got) != 1 {
		t.Fatalf("moved %v", got)
	}
	var left []string
	for _, d := range f.drain(src, 300*time.Millisecond) {
		left = append(left, d.MessageId)
	}
	if fmt.Sprint(left) != "[id-1 id-2]" {
		t.Fatalf("left %v", left)
	}
}

// A delayed move takes a per-message expiration off (it would cut the wait
// short) and keeps it in a header.
func TestMoveWithDelayKeepsExpirationInAHeader(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newVhostFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publish("", src, amqp.Publishing{MessageId: "e", Expiration: "100000"})
	rep, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Delay: 500 * time.Millisecond}, nil)
	if err != nil || rep.Moved != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	t.Cleanup(func() { f.deleteQueue(retry.ReplayQueueName("", dst, 500)) })
	ds := f.drain(dst, 2*time.Second)
	if len(ds) != 1 || ds[0].Expiration != "" || ds[0].Headers[moveplan.HeaderOriginalExpiration] != "100000" {
		t.Fatalf("%+v", ds)
	}
}

// The plan is made from the topology read at the start; when the broker
// disagrees (a binding went away since), the mandatory publish comes back
// and the message stays: returns are still watched.
func TestMoveReturnedByTheBrokerStaysInSource(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	ex := f.exchange("unbound", "direct", nil)
	f.publishN(src, 20, "r")
	l := f.live(false)
	l.AdaptTopology(func(v *topology.Vhost) {
		// A binding the broker no longer has.
		v.Bindings = append(v.Bindings, topology.Binding{Source: ex, Destination: dst, DestinationType: "queue", RoutingKey: "k"})
	})
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetExchange, Name: ex, RoutingKey: "k", HasKey: true}}, nil)
	if !errors.Is(err, broker.ErrPartial) || rep.Returned != 20 || rep.Moved != 0 {
		t.Fatalf("%+v %v", rep, err)
	}
	if d := f.depth(src); d != 20 {
		t.Fatalf("source holds %d, want all 20", d)
	}
}

// --where on the live broker: only the chosen messages move, -n counts
// chosen ones, the rest stay in order; the dry run chooses the same.
func TestMoveWhereChoosesOnTheLiveBroker(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	var msgs []amqp.Publishing
	for i := 0; i < 10; i++ {
		tenant := "b"
		if i%3 == 0 {
			tenant = "a" // 0, 3, 6, 9
		}
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprint("w-", i), Headers: amqp.Table{"tenant": tenant}, Body: []byte(fmt.Sprintf(`{"i":%d}`, i))})
	}
	f.publish("", src, msgs...)
	where, err := moveplan.ParseWhere([]string{"header:tenant=a", "body~\"i\":[0-6]"})
	if err != nil {
		t.Fatal(err)
	}
	req := broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Where: where, Limit: 2}
	l := f.live(false)
	dry := req
	dry.DryRun = true
	plan, err := l.Move(context.Background(), dry, nil)
	if err != nil || plan.Requested != 2 || plan.Planned[0].MessageID != "w-0" || plan.Planned[1].MessageID != "w-3" {
		t.Fatalf("dry run %+v %v", plan, err)
	}
	req.Expect = plan.Planned
	rep, err := l.Move(context.Background(), req, nil)
	if err != nil || rep.Moved != 2 || rep.Requested != 2 {
		t.Fatalf("move %+v %v", rep, err)
	}
	got := f.drain(dst, 300*time.Millisecond)
	if len(got) != 2 || got[0].MessageId != "w-0" || got[1].MessageId != "w-3" {
		t.Fatalf("moved %v", got)
	}
	left := f.drain(src, 300*time.Millisecond)
	if len(left) != 8 || left[0].MessageId != "w-1" || left[2].MessageId != "w-4" {
		t.Fatalf("left %d, first %v", len(left), left)
	}
}
