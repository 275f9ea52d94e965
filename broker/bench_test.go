package broker_test

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
)

// benchMessages is the move benchmarks' batch: persistent 1 KiB messages,
// the size the facts file's shovel figure (~3,100 msg/s) was measured with.
const benchMessages = 20000

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
func BenchmarkMove100k(b *testing.B) { benchMove(b, 5*benchMessages) }

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
		rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: broker.Target{Kind: broker.TargetQueue, Name: dst}}, nil)
		if err != nil || rep.Moved != n {
			b.Fatalf("%+v %v", rep, err)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "msg/s")
		cpu.report(b, n)
	}
}

// BenchmarkShovel20k moves the same messages with a dynamic shovel
// (src-delete-after queue-length, ack-mode on-confirm): what the management
// UI's "Move messages" does.
func BenchmarkShovel20k(b *testing.B) { benchShovel(b, benchMessages) }

// BenchmarkShovel100k is BenchmarkShovel20k with 100,000 messages.
func BenchmarkShovel100k(b *testing.B) { benchShovel(b, 5*benchMessages) }

func benchShovel(b *testing.B, n int) {
	f := newFixture(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		src, dst := f.queue(fmt.Sprintf("src%d", i), nil), f.queue(fmt.Sprintf("dst%d", i), nil)
		benchFill(f, src, n)
		name := "bench-shovel-" + src
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
		deleteShovel(f, name)
	}
}

// BenchmarkOneByOne20k moves the same messages the way a hand-written
// script does: get one, publish it (mandatory) and wait for its confirm,
// then ack it.
func BenchmarkOneByOne20k(b *testing.B) {
	f := newFixture(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		src, dst := f.queue(fmt.Sprintf("src%d", i), nil), f.queue(fmt.Sprintf("dst%d", i), nil)
		benchFill(f, src, benchMessages)
		ch := f.channel()
		if err := ch.Confirm(false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		for n := 0; n < benchMessages; n++ {
			d, ok, err := ch.Get(src, false)
			if err != nil || !ok {
				b.Fatalf("get %d: %v %v", n, ok, err)
			}
			dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", dst, true, false, amqp.Publishing{
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
		b.ReportMetric(float64(benchMessages)/time.Since(start).Seconds(), "msg/s")
		b.StopTimer()
		ch.Close()
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
	req.SetBasicAuth(f.r.APIUser, f.r.APIPassword)
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
	for i := 0; i < 400; i++ {
		p := fmt.Sprintf("svc%03d", i)
		must := func(err error) {
			if err != nil {
				b.Fatal(err)
			}
		}
		must(ch.ExchangeDeclare(p+".topic", "topic", false, true, false, false, nil))
		must(ch.ExchangeDeclare(p+".retry", "direct", false, true, false, false, nil))
		_, err := ch.QueueDeclare(p+".process", false, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": p + ".dlq"})
		must(err)
		_, err = ch.QueueDeclare(p+".dlq", false, false, false, false, nil)
		must(err)
		must(ch.QueueBind(p+".process", p+".#", p+".topic", false, nil))
		for _, ttl := range []int32{5000, 30000, 300000} {
			name := fmt.Sprintf("%s.wait.%d", p, ttl)
			_, err = ch.QueueDeclare(name, false, false, false, false, amqp.Table{"x-message-ttl": ttl, "x-dead-letter-exchange": p + ".topic"})
			must(err)
			must(ch.QueueBind(name, name, p+".retry", false, nil))
		}
	}
	l, err := broker.NewLive(&r, "bench")
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
