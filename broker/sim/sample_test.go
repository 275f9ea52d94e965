package sim

import (
	"context"
	"reflect"
	"testing"

	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Watermill's poison queue (ThreeDotsLabs/watermill: message/router/
// middleware/poison.go) is tied to the queue its messages failed in only by
// their topic_poisoned header: sampling reads it, and from then on every
// discovery of the client (the snapshot, the topology plans read) shows
// the ladder orders → poison_queue.
func TestSampleLinksASharedErrorQueueToItsEndpoints(t *testing.T) {
	s := New(Options{Seed: 1, Now: fixedClock, Quiet: true})
	t.Cleanup(func() { s.Close() })
	s.mu.Lock()
	s.queues, s.byName, s.exchanges, s.bindings, s.topo = nil, map[string]*queue{}, nil, nil, nil
	for _, q := range []string{"orders", "payments", "poison_queue", "audit"} {
		if err := s.declareQueue(q, nil); err != nil {
			t.Fatal(err)
		}
	}
	s.byName["orders"].consumers = 1
	s.byName["payments"].consumers = 1
	s.byName["audit"].consumers = 1 // consumed: never sampled
	s.mu.Unlock()
	for i, from := range []string{"orders", "payments", "orders"} {
		s.testPublishBody(t, "", "poison_queue", "p"+string(rune('0'+i)), retry.Headers{
			"_watermill_message_uuid": "u", "topic_poisoned": from, "reason_poisoned": "boom"}, "")
	}
	s.testPublishBody(t, "", "audit", "a", retry.Headers{"topic_poisoned": "orders", "_watermill_message_uuid": "u"}, "")
	ctx := context.Background()
	snap, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Ladders) != 0 {
		t.Fatalf("before sampling: ladders %+v, want none (nothing ties poison_queue to a queue)", snap.Ladders)
	}
	rep, err := usecase.Sample(ctx, s, snap, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Queues) != 1 || rep.Queues[0].Queue != "poison_queue" || rep.Queues[0].Read != 3 ||
		!reflect.DeepEqual(rep.Queues[0].FailedIn, []string{"orders", "payments"}) {
		t.Fatalf("sample = %+v, want poison_queue read 3, failed in orders and payments", rep.Queues)
	}
	seen := func(q string) string { return "messages seen: they failed in " + q }
	want := []retry.Ladder{
		{Main: "orders", DLQ: "poison_queue", DLQFrom: seen("orders"), RetriesInConsumer: true},
		{Main: "payments", DLQ: "poison_queue", DLQFrom: seen("payments"), RetriesInConsumer: true},
	}
	if snap, err = s.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(snap.Ladders, want) {
		t.Errorf("after sampling: ladders\n%+v\nwant\n%+v", snap.Ladders, want)
	}
	for _, f := range snap.Findings {
		t.Errorf("finding %s on %s: %s", f.Code, f.Queue, f.Message)
	}
	// What plans read (Topology: dump, replay) weighs the same evidence.
	v, err := s.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := topology.Discover(&v); !reflect.DeepEqual(got, want) {
		t.Errorf("Topology's discovery %+v, want the snapshot's %+v", got, want)
	}
}
