package rabbit_test

import (
	"context"
	"slices"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry/topology"
)

// What a client's peek showed (Watermill's topic_poisoned: where each
// poison message failed) is what every later discovery of that client
// weighs — its snapshot, the topology its moves, dumps and replays plan
// on, and its clients of other vhosts' (WithVhost) — so the ladder on the
// screen is the ladder an action plans on. Another client has not read it
// and does not see it.
func TestPeekEvidenceReachesEveryDiscoveryOfTheClient(t *testing.T) {
	t.Parallel()
	r := brokertest.OwnVhost(t)
	ch := brokertest.Channel(t, r, "test evidence")
	for _, q := range []string{"orders", "poison_queue"} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ch.Consume("orders", "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	// Confirmed: the peek, on a connection of its own, finds it there.
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "poison_queue", false, false, amqp.Publishing{
		Headers: amqp.Table{"_watermill_message_uuid": "u1", "topic_poisoned": "orders", "reason_poisoned": "boom"}, Body: []byte("{}")})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := dc.WaitContext(context.Background()); !ok || err != nil {
		t.Fatalf("publish not confirmed: %v", err)
	}
	live, err := rabbit.NewLive(r, "test evidence")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	ctx := context.Background()
	ladders := func(c interface {
		Topology(context.Context) (topology.Vhost, error)
	}) []string {
		t.Helper()
		v, err := c.Topology(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range topology.Discover(&v) {
			out = append(out, l.Main+" → "+l.DLQ)
		}
		return out
	}
	if got := ladders(live); len(got) != 0 {
		t.Fatalf("before any peek: ladders %q, want none", got)
	}
	res, err := live.Peek(ctx, "poison_queue", broker.PeekOptions{Limit: 10, Each: func(*broker.Message) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Read() != 1 {
		t.Fatalf("peek read %d, want 1 (the API lags, the peek does not)", res.Read())
	}
	want := []string{"orders → poison_queue"}
	if got := ladders(live); !slices.Equal(got, want) {
		t.Errorf("the client's topology after its peek: %q, want %q", got, want)
	}
	snap, err := live.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Ladders) != 1 || snap.Ladders[0].Main != "orders" || snap.Ladders[0].DLQ != "poison_queue" {
		t.Errorf("the client's snapshot after its peek: %+v, want %q", snap.Ladders, want)
	}
	same, err := live.WithVhost(r.Vhost)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { same.Close() })
	if got := ladders(same); !slices.Equal(got, want) {
		t.Errorf("WithVhost's client: %q, want %q", got, want)
	}
	other, err := rabbit.NewLive(r, "test evidence other")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if got := ladders(other); len(got) != 0 {
		t.Errorf("a client that read nothing: %q, want no ladder", got)
	}
	// ladder serve's snapshot reader and a session's client share their
	// memory: the reader, which read nothing, shows what the session's
	// peek showed.
	reader, err := rabbit.NewLive(r, "test evidence reader")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Close() })
	session, err := rabbit.NewLive(r, "test evidence session")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	session.ShareMemory(reader)
	if _, err := session.Peek(ctx, "poison_queue", broker.PeekOptions{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if got := ladders(reader); !slices.Equal(got, want) {
		t.Errorf("the reader a session shares memory with: %q, want %q", got, want)
	}
}
