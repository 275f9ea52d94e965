package rabbit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry"
)

// The seeds' topologies, declared for real under a per-test prefix, then
// read back through the management API and the engine.

func snapshotOf(t *testing.T, f *fixture) *broker.Snapshot {
	t.Helper()
	s, err := f.live(true).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ladderNamed(t *testing.T, s *broker.Snapshot, main string) retry.Ladder {
	t.Helper()
	for _, l := range s.Ladders {
		if l.Main == main {
			return l
		}
	}
	t.Fatalf("no ladder with main %s among %d", main, len(s.Ladders))
	return retry.Ladder{}
}

// findingsFor keeps the findings about names with the test's prefix (other
// packages' tests share the vhost).
func findingsFor(s *broker.Snapshot, prefix string) []string {
	var out []string
	for _, f := range s.Findings {
		if strings.HasPrefix(f.Queue, prefix) || (f.Exchange != "" && strings.HasPrefix(f.Exchange, prefix)) {
			out = append(out, f.Code+"@"+strings.TrimPrefix(f.Queue+f.Exchange, prefix))
		}
	}
	return out
}

func TestSeedGoLadderDiscoveredWithoutFindings(t *testing.T) {
	f := newVhostFixture(t)
	p := brokertest.Name(t, "")
	topic := f.exchange("orders.topic", "topic", nil)
	retryX := f.exchange("orders.retry", "direct", nil)
	dlx := f.exchange("orders.dlx", "fanout", nil)
	main := p + ".orders.process"
	f.declareQueue(main, amqp.Table{"x-dead-letter-exchange": dlx})
	dlq := p + ".orders.dlq"
	f.declareQueue(dlq, nil)
	f.bind(main, "orders.#", topic)
	f.bind(dlq, "", dlx)
	var tiers []string
	for _, ttl := range []int32{5000, 30000, 300000} {
		name := fmt.Sprintf("%s.orders.wait.%d", p, ttl)
		f.declareQueue(name, amqp.Table{"x-message-ttl": ttl, "x-dead-letter-exchange": topic})
		f.bind(name, name, retryX)
		tiers = append(tiers, name)
	}
	s := snapshotOf(t, f)
	l := ladderNamed(t, s, main)
	if len(l.Tiers) != 3 || l.Tiers[0].Queue != tiers[0] || l.Tiers[2].Queue != tiers[2] || l.Tiers[1].TTL.Milliseconds() != 30000 {
		t.Errorf("tiers %+v", l.Tiers)
	}
	if l.DLQ != dlq {
		t.Errorf("dlq %q, want %q", l.DLQ, dlq)
	}
	if fs := findingsFor(s, p); len(fs) != 0 {
		t.Errorf("a sound ladder got findings: %v", fs)
	}
	if s.BrokerVersion == "" {
		t.Error("no broker version")
	}
	// The JSON contract's shape for this ladder.
	var lr *present.LadderReport
	rep := present.Topology(s)
	for i := range rep.Ladders {
		if rep.Ladders[i].Main.Name == main {
			lr = &rep.Ladders[i]
		}
	}
	if lr == nil || lr.DLQ == nil || lr.DLQ.Name != dlq || len(lr.Tiers) != 3 || lr.Tiers[0].TTLMS != 5000 || lr.Main.Type != "classic" {
		t.Errorf("report %+v", lr)
	}
}

func TestSeedPHPLadderReportsSprawlAndNoDLQ(t *testing.T) {
	f := newVhostFixture(t)
	p := brokertest.Name(t, "")
	main := p + ".queue"
	f.declareQueue(main, nil)
	for _, ms := range []int32{60000, 61234, 118007, 120000, 240000} {
		f.declareQueue(fmt.Sprintf("%s.enqueue.queue.%d.delayed", p, ms),
			amqp.Table{"x-message-ttl": ms, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": main})
	}
	s := snapshotOf(t, f)
	l := ladderNamed(t, s, main)
	if len(l.Tiers) != 5 || l.DLQ != "" {
		t.Errorf("tiers %d dlq %q", len(l.Tiers), l.DLQ)
	}
	got := strings.Join(findingsFor(s, p), " ")
	for _, want := range []string{"no-dlq@.queue", "delay-queue-sprawl@.queue"} {
		if !strings.Contains(got, want) {
			t.Errorf("findings %q lack %s", got, want)
		}
	}
}

func TestSeedPythonLadderReportsUnroutableReturn(t *testing.T) {
	f := newVhostFixture(t)
	p := brokertest.Name(t, "")
	mainX := f.exchange("main_exchange", "direct", nil)
	retryX := f.exchange("retry_exchange", "direct", nil)
	main := p + ".main_queue"
	f.declareQueue(main, amqp.Table{"x-dead-letter-exchange": retryX, "x-dead-letter-routing-key": "retry"})
	rq := p + ".retry_queue"
	// Returns through "" with routing key "main": no queue has that name.
	f.declareQueue(rq, amqp.Table{"x-message-ttl": int32(60000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "main"})
	f.bind(main, "main", mainX)
	f.bind(rq, "retry", retryX)
	s := snapshotOf(t, f)
	l := ladderNamed(t, s, main)
	if len(l.Tiers) != 1 || l.Tiers[0].Queue != rq {
		t.Errorf("tiers %+v", l.Tiers)
	}
	got := strings.Join(findingsFor(s, p), " ")
	for _, want := range []string{"unroutable-dead-letter@.retry_queue", "no-dlq@.main_queue"} {
		if !strings.Contains(got, want) {
			t.Errorf("findings %q lack %s", got, want)
		}
	}
}

// Bindings are cached between snapshots, but a new queue (and so its
// bindings) shows in the very next one.
func TestSnapshotSeesNewQueuesAndTheirBindings(t *testing.T) {
	f := newVhostFixture(t)
	l := f.live(true)
	p := brokertest.Name(t, "")
	x := f.exchange("x", "direct", nil)
	if _, err := l.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	q := p + ".q"
	f.declareQueue(q, nil)
	f.bind(q, "k", x)
	s, err := l.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, b := range s.Topology.Bindings {
		found = found || (b.Source == x && b.Destination == q && b.RoutingKey == "k")
	}
	if !found {
		t.Fatal("the new binding is missing from the next snapshot")
	}
}
