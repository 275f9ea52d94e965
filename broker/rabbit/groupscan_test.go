package rabbit_test

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// simWithCauses is a quiet simulation whose DLQ holds n dead letters of
// brokertest's 3 causes.
func simWithCauses(t *testing.T, n int) *sim.Sim {
	t.Helper()
	s := sim.New(sim.Options{Quiet: true})
	t.Cleanup(func() { s.Close() })
	if err := brokertest.PublishCauses(context.Background(), s, sim.OrdersDLQ, brokertest.CauseMessages(n, 2, s.Now())); err != nil {
		t.Fatal(err)
	}
	return s
}

// The whole queue is grouped, not the first -n: 5,000 of 5,000 in 3 groups,
// with the first Keep messages kept whole.
func TestScanGroupsCoversTheQueue(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	s := simWithCauses(t, 5000)
	var progress []broker.PeekProgress
	scan, err := usecase.ScanGroups(context.Background(), s, usecase.GroupScanOptions{Queue: sim.OrdersDLQ, By: usecase.GroupError, Keep: 20,
		Progress: func(p broker.PeekProgress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	c := scan.Coverage
	if len(scan.Groups) != brokertest.CauseKinds || c.Grouped != 5000 || c.LookedAt != 5000 || c.Of != 5000 || c.Capped || !c.Covers() {
		t.Fatalf("%d groups, coverage %+v", len(scan.Groups), c)
	}
	if len(scan.Messages) != 20 || scan.Messages[19].Position != 19 || len(scan.SideEffects) == 0 {
		t.Fatalf("kept %d messages, side effects %v", len(scan.Messages), scan.SideEffects)
	}
	// The browse's progress: how far it read of what it reads at most.
	if len(progress) < 2 || progress[0].Read != 0 || progress[0].Want != 5000 {
		t.Fatalf("progress %+v", progress)
	}
	if last := progress[len(progress)-1]; !last.Done || last.Read != 5000 || last.Want != 5000 {
		t.Fatalf("last progress %+v", last)
	}
	res := scan.PeekResult()
	if res.Grouping == nil || res.Grouping.Grouped != 5000 || res.Ready != 5000 || len(res.Groups) != 3 || len(res.Messages) != 20 {
		t.Fatalf("as a peek: %+v", res.Grouping)
	}
}

// A bound smaller than the queue says so: grouped 1,000 of 5,000, capped.
func TestScanGroupsSaysWhenCapped(t *testing.T) {
	s := simWithCauses(t, 5000)
	scan, err := usecase.ScanGroups(context.Background(), s, usecase.GroupScanOptions{Queue: sim.OrdersDLQ, By: usecase.GroupError, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if c := scan.Coverage; c.Grouped != 1000 || c.Of != 5000 || !c.Capped || c.Covers() || c.Bound != 1000 {
		t.Fatalf("coverage %+v", c)
	}
}

// --where chooses what is grouped; the rest is looked at and counted.
func TestScanGroupsWhere(t *testing.T) {
	s := simWithCauses(t, 600)
	w, err := moveplan.ParseWhere([]string{"error~Connect timed out"})
	if err != nil {
		t.Fatal(err)
	}
	scan, err := usecase.ScanGroups(context.Background(), s, usecase.GroupScanOptions{Queue: sim.OrdersDLQ, By: usecase.GroupError, Where: w})
	if err != nil {
		t.Fatal(err)
	}
	c := scan.Coverage
	if len(scan.Groups) != 1 || scan.Groups[0].Type != brokertest.CauseTypes[0] || c.Grouped == 0 || c.Grouped >= 600 || c.LookedAt != 600 || c.Capped {
		t.Fatalf("%d groups, coverage %+v", len(scan.Groups), c)
	}
}

func TestScanGroupsUnknownQueue(t *testing.T) {
	s := sim.New(sim.Options{Quiet: true})
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := usecase.ScanGroups(ctx, s, usecase.GroupScanOptions{Queue: "nope", By: usecase.GroupError}); err == nil {
		t.Fatal("no error for a queue that does not exist")
	}
}

// BenchmarkScanGroups100k groups a queue of 100,000 dead letters of 3
// causes on the simulation: the whole path (the browse, Dump's records,
// the grouping writer). retained-KB is what the result keeps (the groups
// with every position and id), measured after a collection.
func BenchmarkScanGroups100k(b *testing.B) {
	s := sim.New(sim.Options{Quiet: true})
	defer s.Close()
	if err := brokertest.PublishCauses(context.Background(), s, sim.OrdersDLQ, brokertest.CauseMessages(100_000, 3, s.Now())); err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	var scan *usecase.GroupScan
	for b.Loop() {
		scan = nil
		runtime.GC()
		runtime.ReadMemStats(&before)
		var err error
		if scan, err = usecase.ScanGroups(context.Background(), s, usecase.GroupScanOptions{Queue: sim.OrdersDLQ, By: usecase.GroupError, Limit: -1}); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
	}
	if len(scan.Groups) != brokertest.CauseKinds || scan.Coverage.Grouped != 100_000 {
		b.Fatalf("%d groups of %d", len(scan.Groups), scan.Coverage.Grouped)
	}
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/1024, "retained-KB")
}

// A message whose header name is not UTF-8 (which a dump line cannot carry)
// is grouped like any other: grouping takes the message itself, not its
// line, so nothing is "unreadable" and the scan is complete.
func TestScanGroupsTakesNamesThatAreNotUTF8(t *testing.T) {
	s := simWithCauses(t, 10)
	bad := broker.Outgoing{RoutingKey: sim.OrdersDLQ, Mandatory: true, Body: []byte("{}"),
		Headers:    retry.Headers{"x-bad\xff\xfe": "value", "x-last-error": "java.lang.IllegalStateException: order A-77 rejected"},
		Properties: broker.Properties{MessageID: "bad-name"}}
	if out, err := s.Publish(context.Background(), []broker.Outgoing{bad}); err != nil || !out[0].Confirmed {
		t.Fatalf("publish: %v %+v", err, out)
	}
	scan, err := usecase.ScanGroups(context.Background(), s, usecase.GroupScanOptions{Queue: sim.OrdersDLQ, By: usecase.GroupError, Keep: 20})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	c := scan.Coverage
	if c.Grouped != 11 || c.LookedAt != 11 || c.Unreadable != 0 || !c.Covers() {
		t.Fatalf("coverage %+v", c)
	}
	found := false
	for _, g := range scan.Groups {
		if slices.Contains(g.SampleIDs, "bad-name") {
			found = g.Type == "java.lang.IllegalStateException" && g.Count == 1
		}
	}
	if !found {
		t.Fatalf("the message is not in a group of its own cause: %+v", scan.Groups)
	}
	if res := scan.PeekResult(); res.Incomplete != "" || len(res.Messages) != 11 || res.Messages[10].Properties.MessageID != "bad-name" {
		t.Fatalf("as a peek: incomplete %q, %d messages", res.Incomplete, len(res.Messages))
	}
}
