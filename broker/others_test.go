package broker

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

// What left a DLQ (no TTL, no dead-letter exchange) while another consumer
// read it is never "dropped": it is what the other reader took, and the
// view says it is partial and why. Without another reader, on a queue
// whose messages expire, it is released to the dead-letter route.
func TestNoteLeftNamesTheOtherReaderNotALoss(t *testing.T) {
	dlq := topology.Queue{Name: "orders.dlq", Type: topology.QueueClassic}
	res := &PeekResult{Queue: dlq.Name, Ready: 3000, read: 1000, wanted: 1000, browsed: true}
	NoteLeft(res, dlq, OthersSeen{ConsumersAfter: 1}, 1000, time.Now())
	NotePartial(res)
	if res.Released != 0 || strings.Contains(strings.Join(res.SideEffects, " "), "dropped") {
		t.Errorf("a loss claimed: released %d, %q", res.Released, res.SideEffects)
	}
	if res.Others == nil || res.Others.Left != 1000 || res.Others.Consumers != 1 {
		t.Errorf("others %+v, want 1 consumer, 1000 left", res.Others)
	}
	if len(res.Partial) == 0 || !strings.Contains(res.Partial[0], "held by another reader") || !strings.Contains(res.Partial[0], "not from the queue's head") {
		t.Errorf("partial %q", res.Partial)
	}

	// A read that found nothing more ready before it had what was ready,
	// the messages back by its end: another reader held them.
	res = &PeekResult{Queue: dlq.Name, Ready: 3000, read: 1799, wanted: 3000, browsed: true}
	NoteLeft(res, dlq, OthersSeen{}, 0, time.Now())
	if res.Others == nil {
		t.Error("a read cut short by another reader names none")
	}
	// The other reader held every message: this read got none at all, yet
	// it was a read that found nothing ready, not an unread queue.
	res = &PeekResult{Queue: dlq.Name, Ready: 2000}
	run := NewBrowseRun(res, PeekOptions{Limit: 2000}, 2000)
	run.Finish()
	NoteLeft(res, dlq, OthersSeen{}, 0, time.Now())
	NotePartial(res)
	if res.Others == nil || !strings.Contains(strings.Join(res.Partial, " "), "another reader") {
		t.Errorf("a read that got nothing of 2,000 ready: others %+v, partial %q", res.Others, res.Partial)
	}

	wait := topology.Queue{Name: "jobs.wait", Type: topology.QueueClassic, Arguments: map[string]any{
		"x-message-ttl": int64(5000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs"}}
	res = &PeekResult{Queue: wait.Name, Ready: 10, read: 5, wanted: 5, browsed: true}
	NoteLeft(res, wait, OthersSeen{}, 3, time.Now())
	if res.Released != 3 || res.ReleasedTo != "queue jobs" || res.Others != nil {
		t.Errorf("released %d to %q, others %+v; want 3 to queue jobs", res.Released, res.ReleasedTo, res.Others)
	}
}
