package rabbit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// benchMessages is the move benchmarks' batch: persistent 1 KiB messages,
// the size the facts file's shovel figure (~3,100 msg/s) was measured with.
// The 100k benchmarks move five times as many (bench.sh runs them once).
const (
	benchMessages     = 20000
	benchMessages100k = 100000
)

func benchFill(f *fixture, q string, n int) {
	body := []byte(strings.Repeat("x", 1024))
	const batch = 2000
	for i := 0; i < n; i += batch {
		msgs := make([]amqp.Publishing, 0, batch)
		for j := i; j < min(n, i+batch); j++ {
			msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprint(j), DeliveryMode: amqp.Persistent, Body: body})
		}
		f.publish("", q, msgs...)
	}
}

// benchDone checks, by exact depth (a passive declare), that the move of n
// messages is complete: all in dst, none left in src.
func benchDone(b *testing.B, f *fixture, src, dst string, n int) {
	b.Helper()
	if s, d := f.depth(src), f.depth(dst); s != 0 || d != n {
		b.Fatalf("after the move: %d left in %s, %d in %s (want 0 and %d)", s, src, d, dst, n)
	}
}

// cpuMeter reports the CPU time a move costs per message: the broker's
// (the beam process LADDER_BENCH_BROKER_PID names, from /proc/PID/stat)
// and this process's; and what the rest of the machine spent meanwhile
// (others-µs/msg, from /proc/stat: a run others disturbed shows there).
// Without the variable only this process's.
type cpuMeter struct {
	broker, self, machine time.Duration
	brokerOK, machineOK   bool
}

// machineBusy is the CPU time all cores spent busy since boot.
func machineBusy() (time.Duration, bool) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal …
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, v := range f[1:9] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		if i != 3 && i != 4 { // not idle, iowait
			busy += n
		}
	}
	return time.Duration(busy) * 10 * time.Millisecond, true
}

func readCPU() (m cpuMeter) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		m.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	m.machine, m.machineOK = machineBusy()
	pid := os.Getenv("LADDER_BENCH_BROKER_PID")
	if pid == "" {
		return m
	}
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return m
	}
	// Fields after the command's closing parenthesis: utime and stime are
	// the 14th and 15th of the line, in clock ticks (USER_HZ, 100 on Linux).
	rest := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(rest) < 13 {
		return m
	}
	ut, err1 := strconv.ParseInt(rest[11], 10, 64)
	st, err2 := strconv.ParseInt(rest[12], 10, 64)
	if err1 == nil && err2 == nil {
		m.broker, m.brokerOK = time.Duration(ut+st)*10*time.Millisecond, true
	}
	return m
}

func (m cpuMeter) report(b *testing.B, n int) {
	now := readCPU()
	b.ReportMetric(float64((now.self-m.self).Microseconds())/float64(n), "self-µs/msg")
	if m.brokerOK && now.brokerOK {
		b.ReportMetric(float64((now.broker-m.broker).Microseconds())/float64(n), "broker-µs/msg")
		if m.machineOK && now.machineOK {
			others := (now.machine - m.machine) - (now.broker - m.broker) - (now.self - m.self)
			b.ReportMetric(float64(max(0, others).Microseconds())/float64(n), "others-µs/msg")
		}
	}
}

// BenchmarkMove20k moves 20,000 persistent 1 KiB messages between two
// queues with ladder's pipelined, confirmed move. Compare msg/s with
// BenchmarkShovel20k, run in the same invocation on the same broker.
func BenchmarkMove20k(b *testing.B) { benchMove(b, benchMessages) }

// BenchmarkMove100k is BenchmarkMove20k with 100,000 messages.
func BenchmarkMove100k(b *testing.B) { benchMove(b, benchMessages100k) }

func benchMove(b *testing.B, n int) {
	f := newFixture(b)
	l := f.live(false)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		src, dst := f.queue(fmt.Sprintf("src%d", i), nil), f.queue(fmt.Sprintf("dst%d", i), nil)
		benchFill(f, src, n)
		b.StartTimer()
		cpu := readCPU()
		start := time.Now()
		rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}, nil)
		if err != nil || rep.Moved != n {
			b.Fatalf("%+v %v", rep, err)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "msg/s")
		cpu.report(b, n)
		b.StopTimer()
		benchDone(b, f, src, dst, n)
	}
}

// BenchmarkShovel20k moves the same messages with a dynamic shovel
// (src-delete-after queue-length, ack-mode on-confirm): what the management
// UI's "Move messages" does. Done when the target's exact depth is all.
func BenchmarkShovel20k(b *testing.B) { benchShovel(b, benchMessages) }

// BenchmarkShovel100k is BenchmarkShovel20k with 100,000 messages.
func BenchmarkShovel100k(b *testing.B) { benchShovel(b, benchMessages100k) }

func benchShovel(b *testing.B, n int) {
	f := newFixture(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		src, dst := f.queue(fmt.Sprintf("src%d", i), nil), f.queue(fmt.Sprintf("dst%d", i), nil)
		benchFill(f, src, n)
		name := "bench-shovel-" + src
		b.Cleanup(func() { deleteShovel(f, name) })
		b.StartTimer()
		cpu := readCPU()
		start := time.Now()
		shovel(b, f, name, src, dst)
		for f.depth(dst) < n {
			time.Sleep(5 * time.Millisecond)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "msg/s")
		cpu.report(b, n)
		b.StopTimer()
		benchDone(b, f, src, dst, n)
		deleteShovel(f, name)
	}
}

// BenchmarkOneByOne20k moves the same messages the way a hand-written
// script does: get one, publish it (mandatory) and wait for its confirm,
// then ack it.
func BenchmarkOneByOne20k(b *testing.B) { benchOneByOne(b, benchMessages) }

// BenchmarkOneByOne100k is BenchmarkOneByOne20k with 100,000 messages
// (about a minute at 1,500 msg/s).
func BenchmarkOneByOne100k(b *testing.B) { benchOneByOne(b, benchMessages100k) }

func benchOneByOne(b *testing.B, n int) {
	f := newFixture(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		src, dst := f.queue(fmt.Sprintf("src%d", i), nil), f.queue(fmt.Sprintf("dst%d", i), nil)
		benchFill(f, src, n)
		ch := f.channel()
		if err := ch.Confirm(false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		for k := 0; k < n; k++ {
			d, ok, err := ch.Get(src, false)
			if err != nil || !ok {
				b.Fatalf("get %d: %v %v", k, ok, err)
			}
			dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", dst, true, false, amqp.Publishing{
				MessageId: d.MessageId, Headers: d.Headers, DeliveryMode: d.DeliveryMode, Body: d.Body})
			if err != nil {
				b.Fatal(err)
			}
			if ok, err := dc.WaitContext(context.Background()); !ok || err != nil {
				b.Fatalf("confirm %d: %v %v", k, ok, err)
			}
			if err := d.Ack(false); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "msg/s")
		b.StopTimer()
		ch.Close()
		benchDone(b, f, src, dst, n)
	}
}

func shovel(b *testing.B, f *fixture, name, src, dst string) {
	body, _ := json.Marshal(map[string]any{"value": map[string]any{
		"src-protocol": "amqp091", "src-uri": "amqp:///%2F", "src-queue": src, "src-delete-after": "queue-length",
		"dest-protocol": "amqp091", "dest-uri": "amqp:///%2F", "dest-queue": dst, "ack-mode": "on-confirm",
	}})
	if err := apiDo(f, http.MethodPut, "parameters/shovel/%2F/"+url.PathEscape(name), body); err != nil {
		b.Fatal(err)
	}
}

func deleteShovel(f *fixture, name string) {
	_ = apiDo(f, http.MethodDelete, "parameters/shovel/%2F/"+url.PathEscape(name), nil)
}

func apiDo(f *fixture, method, path string, body []byte) error {
	req, err := http.NewRequest(method, f.r.APIURL.String()+"/api/"+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if err := f.r.SetAPIAuth(req); err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return nil
}

// BenchmarkSnapshot2000 reads a vhost of 2,000 queues (400 ladders of main,
// three tiers and a DLQ) and runs discovery and findings on it: one refresh.
func BenchmarkSnapshot2000(b *testing.B) {
	r := *brokertest.OwnVhost(b)
	conn, err := r.DialAMQP(context.Background(), "bench declare")
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		b.Fatal(err)
	}
	if err := brokertest.DeclareLadders(ch, 400); err != nil {
		b.Fatal(err)
	}
	l, err := rabbit.NewLive(&r, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := l.Snapshot(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Topology.Queues) != 2000 || len(s.Ladders) != 400 {
			b.Fatalf("%d queues, %d ladders", len(s.Topology.Queues), len(s.Ladders))
		}
	}
}

// peekBenchMessages: 1,000 × 1 KiB messages browsed per op.
const peekBenchMessages = 1000

func peekBenchQueue(b *testing.B, f *fixture) string {
	q := f.queue("peek", nil)
	body := []byte(strings.Repeat("x", 1024))
	msgs := make([]amqp.Publishing, 0, peekBenchMessages)
	for j := 0; j < peekBenchMessages; j++ {
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprint(j), DeliveryMode: amqp.Persistent, Body: body})
	}
	f.publish("", q, msgs...)
	return q
}

// BenchmarkPeek1000 browses 1,000 messages with ladder's peek (decoded).
// Compare with BenchmarkManagementGet1000, the management API's
// "Get messages" (ackmode ack_requeue_true) on the same queue.
func BenchmarkPeek1000(b *testing.B) {
	f := newFixture(b)
	q := peekBenchQueue(b, f)
	l := f.live(true)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: peekBenchMessages})
		if err != nil || len(res.Messages) != peekBenchMessages {
			b.Fatalf("%v", err)
		}
	}
}

func BenchmarkManagementGet1000(b *testing.B) {
	f := newFixture(b)
	q := peekBenchQueue(b, f)
	body, _ := json.Marshal(map[string]any{"count": peekBenchMessages, "ackmode": "ack_requeue_true", "encoding": "auto"})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := apiDo(f, http.MethodPost, "queues/%2F/"+url.PathEscape(q)+"/get", body); err != nil {
			b.Fatal(err)
		}
	}
}

// The origin redrive: a DLQ whose 20,000 messages were dead-lettered from
// 10 main queues (2,000 each, published through a topic exchange and
// rejected, so each carries x-death), sent back where each came from.
const (
	redriveMains   = 10
	redrivePerMain = 2000
)

// redriveFixture declares the mains and the DLQ, fills the DLQ by really
// dead-lettering, and returns the DLQ and the mains in order.
func redriveFixture(b *testing.B, f *fixture, i int) (string, []string) {
	b.Helper()
	ex := f.exchange(fmt.Sprintf("events%d", i), "topic", nil)
	dlq := f.queue(fmt.Sprintf("dlq%d", i), nil)
	mains := make([]string, redriveMains)
	for k := range mains {
		svc := fmt.Sprintf("svc%02d", k)
		mains[k] = f.queue(fmt.Sprintf("%s%d.work", svc, i), amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
		f.bind(mains[k], svc+".#", ex)
		if err := brokertest.PublishConfirmed(context.Background(), f.ch, ex, svc+".created", brokertest.BenchMessages(redrivePerMain, svc)); err != nil {
			b.Fatal(err)
		}
	}
	// Reject every message (requeue=false): the broker dead-letters it to
	// the DLQ with an x-death entry naming its main queue, the exchange
	// and the routing key it was published with.
	ch := f.channel()
	defer ch.Close()
	if err := ch.Qos(1000, 0, false); err != nil {
		b.Fatal(err)
	}
	for k, q := range mains {
		tag := fmt.Sprintf("bench-reject-%d", k)
		ds, err := ch.Consume(q, tag, false, false, false, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		for n := 1; n <= redrivePerMain; n++ {
			d := <-ds
			if n%500 == 0 {
				if err := d.Nack(true, false); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := ch.Cancel(tag, false); err != nil {
			b.Fatal(err)
		}
	}
	total := redriveMains * redrivePerMain
	deadline := time.Now().Add(time.Minute)
	for f.depth(dlq) != total {
		if time.Now().After(deadline) {
			b.Fatalf("%s: %d dead-lettered messages, want %d", dlq, f.depth(dlq), total)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return dlq, mains
}

// redriveDone checks by exact depth that every main got its own 2,000
// back and the DLQ is empty.
func redriveDone(b *testing.B, f *fixture, dlq string, mains []string) {
	b.Helper()
	if d := f.depth(dlq); d != 0 {
		b.Errorf("%d messages left in %s", d, dlq)
	}
	for _, q := range mains {
		if d := f.depth(q); d != redrivePerMain {
			b.Errorf("%s: %d messages back, want %d", q, d, redrivePerMain)
		}
	}
	if b.Failed() {
		b.FailNow()
	}
}

// BenchmarkRedriveOrigin20k sends the DLQ's 20,000 messages back to their
// origins with ladder's move --to origin.
func BenchmarkRedriveOrigin20k(b *testing.B) {
	f := newFixture(b)
	l := f.live(false)
	total := redriveMains * redrivePerMain
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dlq, mains := redriveFixture(b, f, i)
		b.StartTimer()
		start := time.Now()
		rep, err := l.Move(context.Background(), broker.MoveRequest{From: dlq, To: moveplan.Target{Kind: moveplan.TargetOrigin}}, nil)
		if err != nil || rep.Moved != total {
			b.Fatalf("%+v %v", rep, err)
		}
		b.ReportMetric(float64(total)/time.Since(start).Seconds(), "msg/s")
		b.StopTimer()
		redriveDone(b, f, dlq, mains)
	}
}

// BenchmarkRedriveOneByOne20k does the same as a hand-written script does:
// get one, read the queue it died in from its x-death, publish it there
// (default exchange, mandatory), wait for the confirm, ack.
func BenchmarkRedriveOneByOne20k(b *testing.B) {
	f := newFixture(b)
	total := redriveMains * redrivePerMain
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dlq, mains := redriveFixture(b, f, i)
		ch := f.channel()
		if err := ch.Confirm(false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		for n := 0; n < total; n++ {
			d, ok, err := ch.Get(dlq, false)
			if err != nil || !ok {
				b.Fatalf("get %d: %v %v", n, ok, err)
			}
			deaths, _ := d.Headers["x-death"].([]any)
			var origin string
			if len(deaths) > 0 {
				if t, ok := deaths[0].(amqp.Table); ok {
					origin, _ = t["queue"].(string)
				}
			}
			if origin == "" {
				b.Fatalf("message %d has no x-death queue: %v", n, d.Headers)
			}
			dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", origin, true, false, amqp.Publishing{
				MessageId: d.MessageId, Headers: d.Headers, DeliveryMode: d.DeliveryMode, Body: d.Body})
			if err != nil {
				b.Fatal(err)
			}
			if ok, err := dc.WaitContext(context.Background()); !ok || err != nil {
				b.Fatalf("confirm %d: %v %v", n, ok, err)
			}
			if err := d.Ack(false); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(total)/time.Since(start).Seconds(), "msg/s")
		b.StopTimer()
		ch.Close()
		redriveDone(b, f, dlq, mains)
	}
}
