package sim

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

func TestPeekDoesNotRemoveAndSetsRedelivered(t *testing.T) {
	s := quiet(t)
	for _, id := range []string{"a", "b", "c"} {
		s.testPublish(t, OrdersExchange, "orders.created", id, "", nil)
	}
	ctx := context.Background()
	r1, err := s.Peek(ctx, OrdersMain, broker.PeekOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(r1.Messages); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("peek = %v, want [a b]", got)
	}
	if r1.Total != 3 || r1.Ready != 3 || r1.Type != topology.QueueClassic {
		t.Errorf("result = total %d ready %d type %q", r1.Total, r1.Ready, r1.Type)
	}
	if len(r1.SideEffects) == 0 || !strings.Contains(r1.SideEffects[0], "redelivered") {
		t.Errorf("side effects = %v", r1.SideEffects)
	}
	if r1.Messages[0].Redelivered {
		t.Error("first peek: redelivered already set")
	}
	r2, _ := s.Peek(ctx, OrdersMain, broker.PeekOptions{})
	if got := ids(r2.Messages); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("second peek = %v, want all three still there in order", got)
	}
	if !r2.Messages[0].Redelivered || !r2.Messages[1].Redelivered || r2.Messages[2].Redelivered {
		t.Errorf("redelivered flags = %v %v %v, want true true false", r2.Messages[0].Redelivered, r2.Messages[1].Redelivered, r2.Messages[2].Redelivered)
	}
	m := r2.Messages[0]
	if m.Exchange != OrdersExchange || m.RoutingKey != "orders.created" || m.Position != 0 || m.BodyPreview != `{"id":"a"}` {
		t.Errorf("message = %+v", m)
	}
	if m.Retry.Source != retry.SourceNone || m.Origin != nil || m.HoL != nil || r2.HoLBasis != "" {
		t.Errorf("fresh message decoded as retry %+v origin %v hol %v basis %q", m.Retry, m.Origin, m.HoL, r2.HoLBasis)
	}
}

// What Peek hands out is a copy: changing it changes nothing in the queue.
func TestPeekReturnsCopies(t *testing.T) {
	s := quiet(t)
	s.testPublish(t, "", OrdersDLQ, "a", "", retry.Headers{"x-death": []any{map[string]any{"queue": "q", "count": int64(1)}}})
	m := peek(t, s, OrdersDLQ)[0]
	m.Headers["x-death"].([]any)[0].(map[string]any)["queue"] = "changed"
	m.Body[0] = 'X'
	again := peek(t, s, OrdersDLQ)[0]
	if again.Headers["x-death"].([]any)[0].(map[string]any)["queue"] != "q" || again.Body[0] != '{' {
		t.Error("peek result shares state with the queue")
	}
}

func TestPeekBodyPreview(t *testing.T) {
	s := quiet(t)
	s.mu.Lock()
	_, err := s.publish("", OrdersDLQ, broker.Properties{}, nil, []byte{0xff, 0xfe, 0x00, 0x41})
	_, err2 := s.publish("", OrdersDLQ, broker.Properties{}, nil, []byte(strings.Repeat("x", 100)))
	s.mu.Unlock()
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	r, err := s.Peek(context.Background(), OrdersDLQ, broker.PeekOptions{BodyPreview: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Messages[0].BodyPreview; got != "hex:fffe0041" {
		t.Errorf("binary preview = %q", got)
	}
	if m := r.Messages[1]; !m.BodyTruncated || len(m.Body) != 10 || m.BodySize != 100 {
		t.Errorf("truncation: truncated %v, kept %d of %d", m.BodyTruncated, len(m.Body), m.BodySize)
	}
}

func TestPeekUnknownQueue(t *testing.T) {
	s := quiet(t)
	if _, err := s.Peek(context.Background(), "nope", broker.PeekOptions{}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("err = %v, want one naming the queue", err)
	}
}

// Messages in a tier count their retries from the ladder's tiers' x-death
// when no explicit counter is present (retry.DeathQueues of the ladder).
func TestPeekReadsRetryStateWithTheLaddersDeathQueues(t *testing.T) {
	s := quiet(t)
	s.testPublish(t, OrdersExchange, "orders.created", "m", "", retry.Headers{TierHeader: OrdersWait5s})
	s.testReject(t, OrdersMain) // orders.process → orders.dlq: not a retry
	m := peek(t, s, OrdersDLQ)[0]
	if m.Retry.Count != 0 {
		t.Errorf("a rejection from the main queue counted as retry: %+v", m.Retry)
	}
	s.mu.Lock()
	_, err := s.publish(OrdersRetry, "orders.created", broker.Properties{}, retry.Headers{TierHeader: OrdersWait5s}, nil)
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	s.Advance(5 * time.Second)
	got := peek(t, s, OrdersMain)
	if len(got) != 1 || got[0].Retry.Count != 1 || got[0].Retry.Source != retry.SourceXDeath {
		t.Fatalf("back from the tier: %+v, want count 1 from x-death", got)
	}
}
