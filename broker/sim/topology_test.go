package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

func TestDemoTopologyDiscovered(t *testing.T) {
	s := busy(t, Options{Seed: 1})
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var orders *retry.Ladder
	for i := range snap.Ladders {
		if snap.Ladders[i].Main == OrdersMain {
			orders = &snap.Ladders[i]
		}
	}
	if orders == nil {
		t.Fatalf("no orders ladder in %+v", snap.Ladders)
	}
	if orders.DLQ != OrdersDLQ {
		t.Errorf("orders DLQ = %q, want %q", orders.DLQ, OrdersDLQ)
	}
	wantTTL := []time.Duration{5 * time.Second, 30 * time.Second, 5 * time.Minute}
	if len(orders.Tiers) != 3 {
		t.Fatalf("orders tiers = %+v, want 3", orders.Tiers)
	}
	for i, tr := range orders.Tiers {
		if tr.Queue != OrdersTiers[i] || tr.TTL != wantTTL[i] || tr.ReturnExchange != OrdersExchange || !tr.KeepsRoutingKey {
			t.Errorf("tier %d = %+v, want %s TTL %v back to %s keeping the key", i, tr, OrdersTiers[i], wantTTL[i], OrdersExchange)
		}
	}

	codes := map[string]string{} // code → queue
	for _, f := range snap.Findings {
		if strings.HasPrefix(f.Queue, "orders.") && f.Severity != topology.SeverityInfo {
			t.Errorf("finding about the orders ladder: %+v", f)
		}
		codes[f.Code] = f.Queue
	}
	for code, queue := range map[string]string{
		topology.CodeHoLRisk:              PaymentsWait,
		topology.CodeStuck:                InvoicesRetry,
		topology.CodeUnroutableDeadLetter: NotifyRetryQ,
	} {
		if codes[code] != queue {
			t.Errorf("finding %s on %q, want on %s (findings %+v)", code, codes[code], queue, snap.Findings)
		}
	}
	if _, ok := codes[topology.CodeNoDLQ]; !ok {
		t.Errorf("no %s finding in %+v", topology.CodeNoDLQ, snap.Findings)
	}
	if q, _ := snap.Queue(OrdersMain); q.Consumers != 1 {
		t.Errorf("orders.process consumers = %d, want the simulated worker", q.Consumers)
	}
}

// The orders ladder must also survive the workload's own traffic: no
// runtime finding (requeue storm, stuck…) after it has run a while.
func TestOrdersLadderStaysQuietUnderLoad(t *testing.T) {
	s := busy(t, Options{Seed: 3})
	s.Advance(10 * time.Minute)
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range snap.Findings {
		if strings.HasPrefix(f.Queue, "orders.") {
			t.Errorf("finding about the orders ladder: %+v", f)
		}
	}
	q, _ := snap.Queue(OrdersMain)
	if !q.Rates.Known || q.Rates.Publish < 2 || q.Rates.Ack <= 0 {
		t.Errorf("orders.process rates = %+v, want known, ≥ 2.5/s published and acks", q.Rates)
	}
}
