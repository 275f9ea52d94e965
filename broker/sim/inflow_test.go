package sim

import (
	"context"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

// As on the live broker, dead letters are not publishes in the simulation:
// a DLQ fed by rejections shows no publish rate, and its inflow comes from
// its depth.
func TestSimDeadLettersAreNotPublishes(t *testing.T) {
	s := quiet(t)
	s.testDeclare(t, "jobs.dlq", nil)
	s.testDeclare(t, "jobs", map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs.dlq"})
	for i := 0; i < 20; i++ {
		s.testPublish(t, "", "jobs", "m", "", nil)
		s.testReject(t, "jobs")
		s.Advance(500 * time.Millisecond)
	}
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dlq, _ := snap.Queue("jobs.dlq")
	jobs, _ := snap.Queue("jobs")
	if jobs.Rates.Publish <= 0 || jobs.Rates.InSource != topology.InFromPublish {
		t.Fatalf("jobs: %+v, want its publishes", jobs.Rates)
	}
	if dlq.Messages != 20 || dlq.Rates.Publish != 0 || !dlq.Rates.InKnown || dlq.Rates.In <= 0 || dlq.Rates.InSource != topology.InFromDepth {
		t.Fatalf("jobs.dlq: depth %d, %+v: want no publishes and an inflow from the depth", dlq.Messages, dlq.Rates)
	}
}
