package rabbit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// heapAfterGC is the live heap once garbage is collected.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A peek of a 16 MiB body keeps its preview only: what the result holds
// on to is a few KiB, however much the AMQP client had to read.
func TestPeekOfAHugeBodyKeepsOnlyThePreview(t *testing.T) {
	r := brokertest.Require(t)
	q := brokertest.Name(t, "huge")
	msgs := brokertest.HostileMessages(brokertest.HugeBody)
	huge := msgs[len(msgs)-1]
	want := huge.Msg.Body
	brokertest.PublishHostile(t, r, q, []brokertest.Hostile{huge})
	l, err := rabbit.NewLive(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	huge.Msg.Body, msgs = nil, nil // only want still holds the body
	before := heapAfterGC()
	// A broker whose send to a starved client times out (tcp send_timeout
	// on a machine with both cores busy) resets the connection mid-body:
	// nothing is lost (the messages return), so the read is tried again.
	res, err := l.Peek(context.Background(), q, broker.PeekOptions{})
	for try := 1; try < 3 && errors.Is(err, broker.ErrConnLost); try++ {
		t.Logf("peek %d: %v; again", try, err)
		res, err = l.Peek(context.Background(), q, broker.PeekOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	retained := int64(heapAfterGC()) - int64(before)
	t.Logf("peek of a %d-byte body retains %d bytes", len(want), retained)
	if len(res.Messages) != 1 {
		t.Fatalf("%d messages", len(res.Messages))
	}
	m := res.Messages[0]
	if m.BodySize != len(want) || !m.BodyTruncated || len(m.Body) != broker.DefaultBodyPreview || !bytes.Equal(m.Body, want[:len(m.Body)]) {
		t.Fatalf("size %d truncated %v preview %d bytes", m.BodySize, m.BodyTruncated, len(m.Body))
	}
	if m.BodyDigest != moveplan.BodyDigest(want) {
		t.Error("the digest is not the whole body's")
	}
	if retained > 4<<20 {
		t.Errorf("the peek retains %d bytes of a %d-byte body", retained, len(want))
	}
	runtime.KeepAlive(res)
}

// hostileHeaders is ManyHeaders headers, every tenth hostile, with a table
// and an array nested NestDepth deep, and an x-death of hostile entries.
func hostileHeaders() retry.Headers {
	h := retry.Headers{}
	for i := range brokertest.ManyHeaders {
		h[fmt.Sprintf("h%04x%s", i, brokertest.Evil)] = brokertest.Evil + brokertest.BadUTF8
	}
	var t any = map[string]any{"leaf": brokertest.Evil}
	var a any = []any{brokertest.BadUTF8}
	for range brokertest.NestDepth - 1 {
		t = map[string]any{"queue": t, "count": t}
		a = []any{a, a}
	}
	h["x-nested"], h["x-array"] = t, a
	h["x-death"] = []any{t, map[string]any{"queue": "q" + brokertest.Evil, "reason": "rejected", "count": int64(1 << 62), "routing-keys": a}}
	h["x-retry-count"] = brokertest.BadUTF8
	h["x-last-error"] = t
	return h
}

// The engine's decoders read 10,000 headers and 100-deep nesting without
// panicking, in bounded allocations (the nested values share subtrees, so
// a decoder that walked them whole would take 2^100 steps).
func TestDecodeHostileHeadersIsBounded(t *testing.T) {
	h := hostileHeaders()
	body := []byte(strings.Repeat(brokertest.Evil, 1000))
	var m broker.Message
	allocs := testing.AllocsPerRun(5, func() {
		m = broker.Message{Headers: h}
		decode.DecodeMessage(&m, body, broker.DefaultBodyPreview, map[string]bool{"q": true}, nil)
	})
	t.Logf("DecodeMessage of %d headers: %.0f allocations", len(h), allocs)
	if allocs > 1000 {
		t.Errorf("DecodeMessage allocates %.0f times", allocs)
	}
	if len(m.Body) != broker.DefaultBodyPreview || !m.BodyTruncated {
		t.Errorf("preview %d bytes", len(m.Body))
	}
}

// A dump keeps what it can read back: 100-deep headers are refused with a
// reason (the message stays queued), 32-deep ones (all the AMQP client
// reads) round-trip exactly.
func TestDumpRecordNesting(t *testing.T) {
	var chain any = "leaf"
	for range brokertest.NestDepth {
		chain = map[string]any{"next": chain}
	}
	deep := retry.Headers{"x-nested": chain}
	if _, err := dumpfile.MarshalRecord(dumpfile.Record{Headers: deep, Body: []byte("x")}, false); err == nil || !strings.Contains(err.Error(), "deep") {
		t.Fatalf("100-deep headers: %v", err)
	}
	var v any = map[string]any{"leaf": brokertest.Evil + brokertest.BadUTF8}
	for range brokertest.ClientMaxDepth - 1 {
		v = map[string]any{"next": v}
	}
	rec := dumpfile.Record{Headers: retry.Headers{"x-nested": v, "x-bad": brokertest.BadUTF8}, Body: []byte(brokertest.BadUTF8)}
	line, err := dumpfile.MarshalRecord(rec, true)
	if err != nil {
		t.Fatal(err)
	}
	back, err := dumpfile.UnmarshalRecord(line)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back.Headers) != fmt.Sprint(rec.Headers) || !bytes.Equal(back.Body, rec.Body) {
		t.Fatalf("round trip changed the record:\n%v\n%v", back.Headers, rec.Headers)
	}
	if bytes.ContainsAny(line, "\x1b\x07\x7f") || bytes.Contains(line, []byte("\u009b")) {
		t.Fatalf("the dump line holds a raw control: %q", line)
	}
}
