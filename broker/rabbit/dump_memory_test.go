package rabbit_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/usecase"
)

// heapWriter is a dump writer that discards the lines and samples the heap
// in use as each is written: the most a dump held while it ran (garbage
// not yet collected included).
type heapWriter struct {
	lines, bytes int
	peak         uint64
}

func (w *heapWriter) Write(p []byte) (int, error) {
	w.lines++
	w.bytes += len(p)
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	w.peak = max(w.peak, m.HeapInuse)
	return len(p), nil
}

func (w *heapWriter) Sync() error { return nil }

// A browsing dump writes each message as it reads it and keeps none: 1,600
// messages of 64 KiB (100 MiB) dumped to a writer that discards them, the
// heap in use stays under half of that. What a dump holds is what the browse
// lets the broker send ahead (browseBudget, 16 MiB, whatever the queue's
// length), and the collector lets the heap grow to about twice what is live
// before it runs, plus what the rest of the process holds: 40 MiB was seen
// on a busy machine, so the bound is 50 MiB. A dump that kept its messages
// would pass 100 MiB.
// (BENCH.md has the figures at 100,000 messages.)
func TestDumpMemoryStaysFlat(t *testing.T) {
	f := newFixture(t)
	q := f.queue("dump-memory", nil)
	const n, size = 1600, 64 << 10
	for i := 0; i < n; i += 100 {
		msgs := make([]amqp.Publishing, 100)
		for j := range msgs {
			// A body of its own each: one shared would not show a dump
			// that keeps them.
			body := bytes.Repeat([]byte{byte('a' + (i+j)%26)}, size)
			msgs[j] = amqp.Publishing{MessageId: fmt.Sprintf("big-%05d", i+j), Body: body}
		}
		f.publish("", q, msgs...)
	}
	f.waitDepth(q, n)
	l := f.live(true)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var w heapWriter
	rep, err := usecase.Dump(context.Background(), l, usecase.DumpOptions{Queue: q}, &w)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != n || w.lines != n+1 || w.bytes < n*size {
		t.Fatalf("wrote %d messages, %d lines, %d bytes", rep.Written, w.lines, w.bytes)
	}
	const total, limit = n * size, 50 << 20
	t.Logf("dumped %d MiB: heap in use %.1f MiB before, at most %.1f MiB while dumping", total>>20,
		float64(before.HeapInuse)/(1<<20), float64(w.peak)/(1<<20))
	if w.peak >= limit {
		t.Errorf("heap in use reached %.1f MiB dumping %d MiB (want < %d MiB): the dump holds messages", float64(w.peak)/(1<<20), total>>20, limit>>20)
	}
	f.waitDepth(q, n) // and the messages are all back
}
