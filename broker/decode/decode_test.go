package decode

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// A message dead-lettered with its TTL unspent lost its expiration: in a
// wait queue that forwards and has no TTL it is never due (stuck), not
// "overdue"; with a queue TTL it is due by that; in a DLQ it has none.
func TestAnnotateHoLUsesOriginalExpirationOnlyInForwardingQueues(t *testing.T) {
	ts := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	msg := func() broker.Message {
		return broker.Message{Properties: broker.Properties{Timestamp: &ts}, Deaths: []retry.Death{{Queue: "main", Reason: retry.ReasonRejected, Count: 1, Time: ts,
			OriginalExpiration: 60 * time.Second, HasOriginalExpiration: true}}}
	}
	wait := &broker.PeekResult{Messages: []broker.Message{msg()}}
	AnnotateHoL(wait, topology.QueueSettings{HasDeadLetterExchange: true}, ts.Add(90*time.Second))
	if h := wait.Messages[0].HoL; h == nil || !h.NeverDue || !h.Stuck || h.Overdue != 0 || h.NeverDueReason != topology.NeverDueStuck {
		t.Fatalf("wait queue: %+v", h)
	}
	withTTL := &broker.PeekResult{Messages: []broker.Message{msg()}}
	AnnotateHoL(withTTL, topology.QueueSettings{HasDeadLetterExchange: true, HasMessageTTL: true, MessageTTL: 120 * time.Second}, ts.Add(90*time.Second))
	if h := withTTL.Messages[0].HoL; h == nil || h.NeverDue || h.TTL != 120*time.Second || !h.DueAt.Equal(ts.Add(120*time.Second)) {
		t.Fatalf("wait queue with a TTL: %+v", h)
	}
	dlq := &broker.PeekResult{Messages: []broker.Message{msg()}}
	AnnotateHoL(dlq, topology.QueueSettings{}, ts.Add(90*time.Second))
	if dlq.Messages[0].HoL != nil {
		t.Fatalf("a DLQ message got a due time: %+v", dlq.Messages[0].HoL)
	}
}

func TestDecodeMessageBoundsTheBody(t *testing.T) {
	m := broker.Message{}
	DecodeMessage(&m, []byte("0123456789"), 4, nil, nil)
	if m.BodySize != 10 || string(m.Body) != "0123" || !m.BodyTruncated || m.Headers == nil || m.Deaths == nil {
		t.Fatalf("%+v", m)
	}
}
