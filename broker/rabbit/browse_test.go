package rabbit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry"
)

// seedSmall publishes n small persistent messages with ids prefix-00000…,
// confirmed in batches.
func (f *fixture) seedSmall(queue string, n int, prefix string) {
	f.t.Helper()
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("%s-%05d", prefix, i), DeliveryMode: amqp.Persistent, Body: []byte("x")}
	}
	if err := brokertest.PublishConfirmed(context.Background(), f.ch, "", queue, msgs); err != nil {
		f.t.Fatal(err)
	}
}

// inOrder checks that ids are prefix-00000… prefix-(n-1), in that order.
func inOrder(t *testing.T, ids []string, prefix string, n int) {
	t.Helper()
	if len(ids) != n {
		t.Fatalf("read %d messages, want %d", len(ids), n)
	}
	for i, id := range ids {
		if want := fmt.Sprintf("%s-%05d", prefix, i); id != want {
			t.Fatalf("message %d is %s, want %s (out of order, lost or repeated)", i, id, want)
		}
	}
}

// Past the prefetch ceiling: 70,000 messages (one consumer could hold
// 65,535) are read in queue order, none lost or repeated, and the queue is
// as it was after: all ready again, in the same order.
func TestBrowseReadsPast65535InOrder(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newFixture(t)
	q := f.queue("big", nil)
	const n = 70_000
	start := time.Now()
	f.seedSmall(q, n, "m")
	t.Logf("seeded %d in %s", n, time.Since(start).Round(time.Millisecond))
	l := f.live(true)
	for round := 0; round < 2; round++ {
		var ids []string
		start = time.Now()
		res, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: n, BodyPreview: 1, Each: func(m *broker.Message) error {
			ids = append(ids, m.Properties.MessageID)
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("read %d in %s", len(ids), time.Since(start).Round(time.Millisecond))
		if res.Incomplete != "" || len(res.Messages) != 0 {
			t.Errorf("incomplete %q, %d messages kept (Each keeps none)", res.Incomplete, len(res.Messages))
		}
		inOrder(t, ids, "m", n)
		f.waitDepth(q, n) // every message back, ready: none held
	}
}

// memWriter is a dump file in memory.
type memWriter struct{ bytes.Buffer }

func (*memWriter) Sync() error { return nil }

// dumpIDs are the message ids of a dump's lines, the header skipped.
func dumpIDs(t *testing.T, b []byte) []string {
	t.Helper()
	_, lines, bad, err := dumpfile.Read(bytes.NewReader(b))
	if err != nil || len(bad) > 0 {
		t.Fatalf("dump unreadable: %v %v", err, bad)
	}
	var ids []string
	for _, l := range lines {
		ids = append(ids, l.Record.Properties.MessageID)
	}
	return ids
}

// slowWriter is a dump file in memory that takes its time with each line,
// so that a dump's read lasts.
type slowWriter struct {
	memWriter
	lines int
}

func (w *slowWriter) Write(b []byte) (int, error) {
	w.lines++
	if w.lines%100 == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	return w.memWriter.Write(b)
}

// A dump reads the messages ready when it starts, not those published
// while it reads: 2,000 seeded (several consumers, each sized to its
// predecessor's bytes), a publisher adding more from the moment the read
// begins (its first progress report) to its end, and the file holds
// exactly the 2,000, in order.
func TestDumpOfAQueueWithArrivalsStopsAtItsStartingDepth(t *testing.T) {
	f := newFixture(t)
	q := f.queue("arrivals", nil)
	const n = 2000
	f.seedSmall(q, n, "seed")
	began, stop, done := make(chan struct{}), make(chan struct{}), make(chan int)
	pub := f.channel()
	go func() {
		i := 0
		defer func() { done <- i }()
		select {
		case <-began:
		case <-stop:
			return
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			if pub.PublishWithContext(context.Background(), "", q, false, false, amqp.Publishing{MessageId: fmt.Sprintf("late-%05d", i), Body: []byte("y")}) != nil {
				return
			}
			i++
			time.Sleep(time.Millisecond)
		}
	}()
	var w slowWriter
	var first, last broker.PeekProgress
	progress := func(p broker.PeekProgress) {
		if p.Read == 0 && !p.Done {
			first = p
			close(began)
		}
		last = p
	}
	rep, err := usecase.Dump(context.Background(), f.live(true), usecase.DumpOptions{Queue: q, Progress: progress}, &w)
	close(stop)
	late := <-done
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d published while the dump ran", late)
	if late == 0 {
		t.Fatal("nothing was published during the dump: the test proves nothing")
	}
	inOrder(t, dumpIDs(t, w.Bytes()), "seed", n)
	if rep.Written != n || rep.Incomplete != "" {
		t.Errorf("written %d, incomplete %q", rep.Written, rep.Incomplete)
	}
	if first.Want != n || !last.Done || last.Read != n || last.Want != n {
		t.Errorf("progress: first %+v, last %+v", first, last)
	}
	f.waitDepth(q, n+late)
}

// A bound is not an end: a browsing dump without -n of a queue with more
// ready than it may read writes what it read and says the rest is not in
// the file (ErrPartial); with -n it reads exactly that many.
func TestDumpSaysWhenItStopsAtItsBound(t *testing.T) {
	f := newFixture(t)
	q := f.queue("bound", nil)
	f.seedSmall(q, 30, "b")
	l := f.live(true)
	var w memWriter
	rep, err := usecase.Dump(context.Background(), l, usecase.DumpOptions{Queue: q, Limit: 10}, &w)
	if err != nil || rep.Incomplete != "" {
		t.Fatalf("-n 10: %v, incomplete %q", err, rep.Incomplete)
	}
	inOrder(t, dumpIDs(t, w.Bytes()), "b", 10)
	f.waitDepth(q, 30)
	// The default bound, made small: the same path as 100,000 of more.
	restore := rabbit.SetDefaultDumpLimitForTest(20)
	defer restore()
	w.Reset()
	rep, err = usecase.Dump(context.Background(), l, usecase.DumpOptions{Queue: q}, &w)
	if !errors.Is(err, broker.ErrPartial) || !strings.Contains(rep.Incomplete, "the first 20 of 30") {
		t.Fatalf("err %v, incomplete %q", err, rep.Incomplete)
	}
	inOrder(t, dumpIDs(t, w.Bytes()), "b", 20)

	// The simulation, the same.
	s := sim.New(sim.Options{Quiet: true})
	defer s.Close()
	var out []broker.Outgoing
	for i := 0; i < 30; i++ {
		out = append(out, broker.Outgoing{RoutingKey: sim.OrdersDLQ, Headers: retry.Headers{broker.HeaderMoveID: fmt.Sprint(i)},
			Properties: broker.Properties{MessageID: fmt.Sprintf("b-%05d", i)}, Body: []byte("x")})
	}
	if _, err := s.Publish(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	w.Reset()
	rep, err = usecase.Dump(context.Background(), s, usecase.DumpOptions{Queue: sim.OrdersDLQ}, &w)
	if !errors.Is(err, broker.ErrPartial) || !strings.Contains(rep.Incomplete, "the first 20 of 30") {
		t.Fatalf("simulation: err %v, incomplete %q", err, rep.Incomplete)
	}
	inOrder(t, dumpIDs(t, w.Bytes()), "b", 20)
}

// A live wait queue, as the issue found it: per-message TTLs, every tenth
// message long-lived and the nine behind it overdue (head-of-line blocked),
// a service that takes what expires into its work queue and sends it back
// to wait, marked. A peek takes the long ones; the overdue ones behind each
// leave at once (released), and come back while it reads. The peek must
// stop when the messages that were there have been read or have left, not
// read the returning ones until it has as many as the depth it began with
// (the old peek, held there for minutes), and leave nothing held.
func TestPeekOfABusyWaitQueueStopsAtItsStartingDepth(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newFixture(t)
	work := f.queue("work", nil)
	wait := f.queue("wait", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": work})
	const n = 300
	var msgs []amqp.Publishing
	for i := 0; i < n; i++ {
		exp := "100"
		if i%10 == 0 {
			exp = "600000"
		}
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprintf("w-%05d", i), Expiration: exp, Body: []byte("x")})
	}
	f.publish("", wait, msgs...)
	time.Sleep(300 * time.Millisecond) // the short ones are overdue, held behind the long
	// The service: takes each expired message from work and sends it back
	// to wait, marked, as a retry.
	// On a connection of its own: closing a channel while its goroutine
	// still publishes can draw a connection-level CHANNEL_ERROR from the
	// broker, which must not take the fixture's connection with it.
	svcConn, err := f.r.DialAMQP(context.Background(), "test service")
	if err != nil {
		t.Fatal(err)
	}
	defer svcConn.Close()
	svc, err := svcConn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := svc.Consume(work, "svc", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for d := range ds {
			time.Sleep(20 * time.Millisecond) // it works on it, and fails
			_ = svc.PublishWithContext(context.Background(), "", wait, false, false, amqp.Publishing{MessageId: d.MessageId + "+back", Expiration: "100", Body: d.Body})
			_ = d.Ack(false)
		}
	}()
	l := f.live(false)
	res, err := l.Peek(context.Background(), wait, broker.PeekOptions{Limit: 1000, Deadline: 30 * time.Second, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	back, first := 0, 0
	for _, m := range res.Messages {
		if strings.HasSuffix(m.Properties.MessageID, "+back") {
			back++
		} else {
			first++
		}
	}
	t.Logf("ready at the start %d; read %d that were there and %d that came back during the peek", res.Ready, first, back)
	if res.Incomplete != "" {
		t.Errorf("stopped short: %s (it should end on catching up, well before its 30 s bound)", res.Incomplete)
	}
	if int64(len(res.Messages)) > res.Ready {
		t.Errorf("read %d, more than the %d ready at the start", len(res.Messages), res.Ready)
	}
	// The overdue ones left as the peek uncovered them, and come back one
	// every 20 ms: a peek that waited for them would read them all.
	if left := n - first; back*10 > left {
		t.Errorf("read %d of the %d that left and came back: it kept reading what arrived", back, left)
	}
	// Nothing stays held: the management API's unacked count of the wait
	// queue returns to 0 (its figures lag by seconds).
	mgmt, err := rabbit.NewManagement(f.r)
	if err != nil {
		t.Fatal(err)
	}
	ok := brokertest.WaitFor(60*time.Second, func() bool {
		mq, err := mgmt.Queue(context.Background(), f.r.Vhost, wait)
		return err == nil && mq.Unacked == 0 && mq.Consumers == 0
	})
	if !ok {
		t.Error("the wait queue still has unacked messages or a consumer a minute after the peek")
	}
	// Stop the service as a service stops: cancel, let it finish the one in
	// hand, then close.
	if err := svc.Cancel("svc", false); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	svc.Close()
	// And nothing lost: every message is in one queue or the other (one the
	// service had in hand may be in both).
	ids := map[string]bool{}
	for _, q := range []string{wait, work} {
		for _, d := range f.drain(q, time.Second) {
			ids[strings.TrimSuffix(d.MessageId, strings.Repeat("+back", strings.Count(d.MessageId, "+back")))] = true
		}
	}
	if len(ids) != n {
		t.Errorf("wait and work hold %d distinct messages, want %d", len(ids), n)
	}
}
