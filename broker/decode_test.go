package broker

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// A message dead-lettered with its TTL unspent: in a wait queue that
// forwards, its due time comes from original-expiration; in a DLQ it has none.
func TestAnnotateHoLUsesOriginalExpirationOnlyInForwardingQueues(t *testing.T) {
	ts := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	msg := func() Message {
		return Message{Properties: Properties{Timestamp: &ts}, Deaths: []retry.Death{{Queue: "main", Reason: retry.ReasonRejected, Count: 1, Time: ts,
			OriginalExpiration: 60 * time.Second, HasOriginalExpiration: true}}}
	}
	wait := &PeekResult{Messages: []Message{msg()}}
	AnnotateHoL(wait, retry.QueueSettings{HasDeadLetterExchange: true}, ts.Add(90*time.Second))
	if h := wait.Messages[0].HoL; h == nil || h.Overdue != 30*time.Second {
		t.Fatalf("wait queue: %+v", h)
	}
	dlq := &PeekResult{Messages: []Message{msg()}}
	AnnotateHoL(dlq, retry.QueueSettings{}, ts.Add(90*time.Second))
	if dlq.Messages[0].HoL != nil {
		t.Fatalf("a DLQ message got a due time: %+v", dlq.Messages[0].HoL)
	}
}

func TestDecodeMessageBoundsTheBody(t *testing.T) {
	m := Message{}
	DecodeMessage(&m, []byte("0123456789"), 4, nil, nil)
	if m.BodySize != 10 || string(m.Body) != "0123" || !m.BodyTruncated || m.Headers == nil || m.Deaths == nil {
		t.Fatalf("%+v", m)
	}
}
