package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// Messages with every AMQP field type, published by two client libraries
// (amqp091-go and Python's pika), survive dump → purge → replay → dump:
// bytes and types identical, bar ladder's own x-ladder-* marks.
const pikaAllTypes = `
import sys, pika, decimal, datetime
conn = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
ch = conn.channel()
ch.confirm_delivery()
ch.basic_publish('', sys.argv[2], b'\x00\x01binary\xff', pika.BasicProperties(
    message_id='py-all', content_type='application/octet-stream', delivery_mode=2, priority=3,
    correlation_id='c-1', reply_to='r', type='t', app_id='pika', timestamp=1764500000,
    headers={'int': 7, 'big': 2**40, 'neg': -5, 'dec': decimal.Decimal('-4.25'),
             'str': 'text', 'bytes': b'\x00\xff', 'bool': True, 'none': None,
             'when': datetime.datetime(2026, 3, 1, 12, 0, 0),
             'table': {'k': [1, 'two', {'deep': decimal.Decimal('0.5')}]}, 'list': [True, 'x']}))
conn.close()
`

func TestDumpReplayRoundTripKeepsEveryTypeOnTheBroker(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is missing: scripts/clients.sh installs python3-pika")
	}
	r := brokerEnv(t)
	q := testQueue(t, r, "rt", 0, nil)
	conn, err := r.DialAMQP(context.Background(), "test round trip")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	ts := time.Unix(1764500000, 0)
	if err := ch.PublishWithContext(context.Background(), "", q, false, false, amqp.Publishing{
		MessageId: "go-all", ContentType: "application/json", ContentEncoding: "identity", DeliveryMode: 2, Priority: 1,
		CorrelationId: "c", ReplyTo: "r", Expiration: "600000", Timestamp: ts, Type: "t", AppId: "amqp091", Body: []byte(`{"ok":true}`),
		Headers: amqp.Table{
			"b": true, "i8": int8(-3), "u8": uint8(3), "i16": int16(-300), "u16": uint16(300), "i32": int32(-70000), "u32": uint32(70000),
			"i64": int64(1) << 40, "f32": float32(1.5), "f64": 2.25, "dec": amqp.Decimal{Scale: 2, Value: -425}, "s": "text",
			"x": []byte{0, 1, 0xff}, "t": ts, "v": nil,
			"arr": []interface{}{int32(1), "two", amqp.Table{"deep": amqp.Decimal{Scale: 0, Value: 4}}}, "nested": amqp.Table{"k": []interface{}{int16(1)}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", pikaAllTypes, r.AMQPURL, q).CombinedOutput(); err != nil {
		t.Fatalf("pika: %v\n%s", err, out)
	}
	for depthOf(t, r, q) < 2 {
		time.Sleep(20 * time.Millisecond)
	}
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.jsonl"), filepath.Join(dir, "second.jsonl")
	if code, _, errOut := runLadder(t, "dump", q, "--out", first); code != exitOK {
		t.Fatalf("dump: %d %s", code, errOut)
	}
	if _, err := ch.QueuePurge(q, false); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runLadder(t, "replay", first, "--to", "original", "--yes"); code != exitOK {
		t.Fatalf("replay: %d %s %s", code, errOut, out)
	}
	// The first dump taught ladder (remembered between runs) that these
	// messages carry their own TTLs: reading past the head now asks.
	if code, _, errOut := runLadder(t, "dump", q, "--out", second, "--force-peek"); code != exitOK {
		t.Fatalf("dump again: %d %s", code, errOut)
	}
	a, b := dumpLines(t, first), dumpLines(t, second)
	if len(a) != 2 || len(b) != 2 {
		t.Fatalf("%d and %d records", len(a), len(b))
	}
	for i := range a {
		for _, k := range []string{moveplan.HeaderMovedFrom, moveplan.HeaderMoves, broker.HeaderMoveID} {
			delete(b[i].Headers, k)
		}
		a[i].Redelivered, b[i].Redelivered = false, false
		la, _ := dumpfile.MarshalRecord(a[i], false)
		lb, _ := dumpfile.MarshalRecord(b[i], false)
		if !bytes.Equal(la, lb) {
			t.Errorf("record %d changed:\n%s\n%s", i, la, lb)
		}
	}
	if !strings.Contains(readFile(t, first), `"dec":{"decimal":{"scale":2,"value":-425}}`) {
		t.Errorf("the decimal was not dumped as a decimal:\n%s", readFile(t, first))
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Replay to origin sends DLQ messages back to the queues they died in.
func TestReplayToOriginReturnsMessagesToWhereTheyDied(t *testing.T) {
	r := brokerEnv(t)
	dlq := testQueue(t, r, "dlq", 0, nil)
	main := testQueue(t, r, "main", 0, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
	conn, err := r.DialAMQP(context.Background(), "test origin")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	for i := 0; i < 3; i++ {
		if err := ch.PublishWithContext(context.Background(), "", main, false, false, amqp.Publishing{MessageId: fmt.Sprint("o-", i), Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	for rejected := 0; rejected < 3; {
		d, ok, err := ch.Get(main, false)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			_ = d.Nack(false, false)
			rejected++
		}
	}
	for depthOf(t, r, dlq) < 3 {
		time.Sleep(20 * time.Millisecond)
	}
	file := filepath.Join(t.TempDir(), "dlq.jsonl")
	if code, _, errOut := runLadder(t, "dump", dlq, "--out", file, "--consume", "--yes"); code != exitOK {
		t.Fatalf("dump --consume: %d %s", code, errOut)
	}
	if depthOf(t, r, dlq) != 0 {
		t.Fatal("the drain left messages")
	}
	if code, out, errOut := runLadder(t, "replay", file, "--to", "origin", "--yes"); code != exitOK {
		t.Fatalf("replay: %d %s %s", code, errOut, out)
	}
	if d := depthOf(t, r, main); d != 3 {
		t.Errorf("main holds %d, want the 3 that died there", d)
	}
}

// kill -9 midway, then --resume: every line published once, except those
// reported in flight (counted on the broker by id).
func TestReplayKilledAndResumedPublishesEachLineOnce(t *testing.T) {
	r := brokerEnv(t)
	const n = 3000
	src := testQueue(t, r, "src", n, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	file := filepath.Join(t.TempDir(), "big.jsonl")
	if code, _, errOut := runLadder(t, "dump", src, "--out", file); code != exitOK {
		t.Fatalf("dump: %d %s", code, errOut)
	}
	// A short dump is the dump's fault, not the replay's: said as such (a
	// starved browse once ended early without a word, and this test then
	// reported the first line it never had as lost by the replay).
	if got := len(dumpLines(t, file)); got != n {
		t.Fatalf("the dump wrote %d of %d messages", got, n)
	}
	bin := ladderBinary(t)
	// 500/s: 3,000 lines take 6 s, so a test process starved of CPU for
	// a second or two still kills it midway.
	cmd := exec.Command(bin, "replay", file, "--to", "queue:"+dst, "--rate", "500/s", "--yes")
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for depthOf(t, r, dst) < 500 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the replay never got going")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	before := depthOf(t, r, dst)
	if before >= n {
		t.Fatalf("the replay finished before the kill (%d)", before)
	}
	code, out, errOut := runLadder(t, "replay", file, "--to", "queue:"+dst, "--resume", "--yes", "-o", "json")
	if code != exitOK {
		t.Fatalf("resume: %d %s %s", code, errOut, out)
	}
	var rep broker.MoveReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	inflight := 0
	for _, note := range rep.Notes {
		// "1 line was in flight…", "256 lines were in flight…"
		if strings.Contains(note, "in flight when an earlier run stopped") {
			fmt.Sscanf(note, "%d ", &inflight)
		}
	}
	// Every id on the broker, none missing, duplicates only of the in-flight.
	conn, _ := r.DialAMQP(context.Background(), "test count")
	defer conn.Close()
	ch, _ := conn.Channel()
	seen := map[string]int{}
	for {
		d, ok, err := ch.Get(dst, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		seen[d.MessageId]++
	}
	dups := 0
	for i := 0; i < n; i++ {
		c := seen[fmt.Sprintf("src-%d", i)]
		if c == 0 {
			t.Fatalf("src-%d is missing after the resume", i)
		}
		dups += c - 1
	}
	if dups > inflight || dups > rep.DuplicatesAtMost || (dups > 0 && !rep.DuplicatesPossible) {
		t.Errorf("%d duplicates, %d reported in flight, at most %d (duplicates_possible %v)", dups, inflight, rep.DuplicatesAtMost, rep.DuplicatesPossible)
	}
	t.Logf("killed after %d of %d; resume published %d; %d in flight, %d duplicates", before, n, rep.Moved, inflight, dups)
}

// --rate 50/s of 200 messages takes about 4 s (a generous bound: the
// pacer guarantees the lower one, a loaded machine may stretch the upper).
func TestReplayRateIsPaced(t *testing.T) {
	r := brokerEnv(t)
	src := testQueue(t, r, "src", 200, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	file := filepath.Join(t.TempDir(), "r.jsonl")
	if code, _, errOut := runLadder(t, "dump", src, "--out", file); code != exitOK {
		t.Fatalf("dump: %d %s", code, errOut)
	}
	start := time.Now()
	if code, _, errOut := runLadder(t, "replay", file, "--to", "queue:"+dst, "--rate", "50/s", "--yes"); code != exitOK {
		t.Fatalf("replay: %d %s", code, errOut)
	}
	took := time.Since(start)
	t.Logf("200 messages at 50/s took %v", took)
	if took < 3*time.Second || took > 15*time.Second || depthOf(t, r, dst) != 200 {
		t.Errorf("took %v (want about 4s), %d arrived", took, depthOf(t, r, dst))
	}
}

// Every mutating action leaves start and done lines with counts in the
// audit log, and the password is nowhere in it.
func TestAuditLogCoversDumpConsumeAndReplay(t *testing.T) {
	r := brokerEnv(t)
	src := testQueue(t, r, "src", 4, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	file := filepath.Join(t.TempDir(), "a.jsonl")
	if code, _, errOut := runLadder(t, "--audit-log", log, "dump", src, "--out", file, "--consume", "--yes"); code != exitOK {
		t.Fatalf("dump: %d %s", code, errOut)
	}
	if code, _, errOut := runLadder(t, "--audit-log", log, "replay", file, "--to", "queue:"+dst, "--where", "retries>=2", "--yes"); code != exitOK {
		t.Fatalf("replay: %d %s", code, errOut)
	}
	text := readFile(t, log)
	if strings.Contains(text, "guest:guest") || strings.Contains(text, `:guest@`) {
		t.Fatalf("a password in the audit log:\n%s", text)
	}
	var events []broker.AuditEvent
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		var ev broker.AuditEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	if len(events) != 4 || events[0].Action != "dump --consume" || events[1].Counts["written"] != 4 || len(events[1].Messages) != 4 ||
		events[2].Action != "replay" || events[3].Report == nil || events[3].Report.Moved != 4 || len(events[3].Lines) != 4 ||
		events[3].File != file || len(events[3].Where) != 1 {
		b, _ := json.MarshalIndent(events, "", " ")
		t.Errorf("events:\n%s", b)
	}
}

// dump --consume --where: messages not chosen stay, in order, however many
// come first; nothing else is delivered (so nothing else is counted).
func TestDumpConsumeWhereTakesOnlyTheChosen(t *testing.T) {
	r := brokerEnv(t)
	q := testQueue(t, r, "q", 0, nil)
	conn, err := r.DialAMQP(context.Background(), "test drain where")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	for i := 0; i < 1200; i++ {
		tenant := "a"
		if i >= 1190 {
			tenant = "b"
		}
		if err := ch.PublishWithContext(context.Background(), "", q, false, false, amqp.Publishing{MessageId: fmt.Sprint("d-", i), Headers: amqp.Table{"tenant": tenant}}); err != nil {
			t.Fatal(err)
		}
	}
	for depthOf(t, r, q) < 1200 {
		time.Sleep(20 * time.Millisecond)
	}
	file := filepath.Join(t.TempDir(), "b.jsonl")
	code, _, errOut := runLadder(t, "dump", q, "--out", file, "--consume", "--where", "header:tenant=b", "--yes")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	if n := len(dumpLines(t, file)); n != 10 {
		t.Errorf("wrote %d, want the 10 chosen", n)
	}
	if d := depthOf(t, r, q); d != 1190 {
		t.Errorf("the queue holds %d, want the 1190 not chosen", d)
	}
}

// dump --consume never walks a quorum queue's messages into their delivery
// limit: held ones near it stop the drain (exit 3), and none is lost.
func TestDumpConsumeStopsBeforeTheDeliveryLimit(t *testing.T) {
	r := brokerEnv(t)
	q := testQueue(t, r, "qq", 0, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(4)})
	conn, err := r.DialAMQP(context.Background(), "test drain limit")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	for i := 0; i < 4; i++ {
		if err := ch.PublishWithContext(context.Background(), "", q, false, false, amqp.Publishing{MessageId: fmt.Sprint("q-", i), Headers: amqp.Table{"k": "a"}}); err != nil {
			t.Fatal(err)
		}
	}
	for depthOf(t, r, q) < 4 {
		time.Sleep(20 * time.Millisecond)
	}
	stopped := false
	for run := 0; run < 6; run++ {
		file := filepath.Join(t.TempDir(), "x.jsonl")
		code, _, errOut := runLadder(t, "dump", q, "--out", file, "--consume", "--where", "header:k=zzz", "--yes")
		if code == exitPartial && strings.Contains(errOut, "delivery limit") {
			stopped = true
			break
		}
		if code != exitOK {
			t.Fatalf("run %d: exit %d %s", run, code, errOut)
		}
	}
	if !stopped {
		t.Error("never stopped before the delivery limit")
	}
	time.Sleep(200 * time.Millisecond) // quorum queues apply returns asynchronously
	if d := depthOf(t, r, q); d != 4 {
		t.Errorf("the queue holds %d of 4: the drain dropped some", d)
	}
}

// Strings that are not UTF-8: a header value round-trips byte for byte; a
// message id the format cannot keep stops a drain with the message still
// queued.
func TestDumpKeepsOrRefusesNonUTF8Exactly(t *testing.T) {
	r := brokerEnv(t)
	q := testQueue(t, r, "u", 0, nil)
	conn, err := r.DialAMQP(context.Background(), "test utf8")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	publish := func(id string) {
		if err := ch.PublishWithContext(context.Background(), "", q, false, false, amqp.Publishing{MessageId: id, Headers: amqp.Table{"s": "caf\xe9"}}); err != nil {
			t.Fatal(err)
		}
	}
	publish("ok-1")
	for depthOf(t, r, q) < 1 {
		time.Sleep(20 * time.Millisecond)
	}
	file := filepath.Join(t.TempDir(), "u.jsonl")
	if code, _, errOut := runLadder(t, "dump", q, "--out", file, "--consume", "--yes"); code != exitOK {
		t.Fatalf("dump: %d %s", code, errOut)
	}
	if code, _, errOut := runLadder(t, "replay", file, "--to", "original", "--yes"); code != exitOK {
		t.Fatalf("replay: %d %s", code, errOut)
	}
	d, ok, err := ch.Get(q, true)
	if err != nil || !ok || d.Headers["s"] != "caf\xe9" {
		t.Fatalf("back: %v %v %q", ok, err, d.Headers["s"])
	}
	publish("id-\xe9")
	for depthOf(t, r, q) < 1 {
		time.Sleep(20 * time.Millisecond)
	}
	code, _, errOut := runLadder(t, "dump", q, "--out", filepath.Join(t.TempDir(), "v.jsonl"), "--consume", "--yes")
	if code == exitOK || !strings.Contains(errOut, "not valid UTF-8") {
		t.Errorf("exit %d %q", code, errOut)
	}
	if depthOf(t, r, q) != 1 {
		t.Error("the message the dump could not keep left the queue")
	}
	// A browsing dump writes the others and says how many it skipped, once.
	code, _, errOut = runLadder(t, "dump", q, "--out", filepath.Join(t.TempDir(), "w.jsonl"))
	if code != exitPartial || !strings.Contains(errOut, ": 1 message skipped (they stay queued)") {
		t.Errorf("browsing dump: exit %d %q", code, errOut)
	}
}
