package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/topology"
)

var t0 = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

// dl is a dead-letter route through the default exchange to queue.
func dl(queue string) map[string]any {
	return map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": queue}
}

// ordersVhost: orders dead-letters into orders.dlq, holding dlq messages.
func ordersVhost(dlq int64) topology.Vhost {
	return topology.Vhost{Name: "/", Queues: []topology.Queue{
		{Name: "orders", Consumers: 1, Arguments: dl("orders.dlq")},
		{Name: "orders.dlq", Messages: dlq, Ready: dlq},
	}}
}

func findings(s *broker.Snapshot, code string) []topology.Finding {
	var out []topology.Finding
	for _, f := range s.Findings {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

// A DLQ that grows gets a dlq-growing finding from the second read on,
// with how much, how fast and how many wait; it goes once the DLQ has not
// grown for topology.DLQGrowingWindow. One read: none.
func TestDLQGrowingFromReads(t *testing.T) {
	m := NewMemory(nil)
	read := func(i int, depth int64) *broker.Snapshot {
		return m.Snapshot(Reading{Vhost: "/", TakenAt: t0.Add(time.Duration(i) * 2 * time.Second), Topology: ordersVhost(depth)})
	}
	if fs := findings(read(0, 5000), topology.CodeDLQGrowing); len(fs) > 0 {
		t.Fatalf("a finding from one read: %+v", fs)
	}
	fs := findings(read(1, 5010), topology.CodeDLQGrowing)
	if len(fs) != 1 || fs[0].Queue != "orders.dlq" || fs[0].Severity != topology.SeverityWarning {
		t.Fatalf("after the second read: %+v, want a warning on orders.dlq", fs)
	}
	if want := "grew by 10 in 2s (5/s), 5,010 waiting"; !strings.HasPrefix(fs[0].Message, want) {
		t.Fatalf("message %q, want it to start %q", fs[0].Message, want)
	}
	var s *broker.Snapshot
	for i := 2; i <= 150; i++ { // five minutes of reads, 4/s
		s = read(i, 5000+int64(8*i))
	}
	if fs := findings(s, topology.CodeDLQGrowing); len(fs) != 1 || !strings.HasPrefix(fs[0].Message, "grew by 1,200 in 5m (4/s), 6,200 waiting") {
		t.Fatalf("after five minutes: %+v", fs)
	}
	if tr := s.Trends["orders.dlq"]; !tr.GrowthKnown || tr.Growth != 1200 || tr.Depths[len(tr.Depths)-1] != 6200 || len(tr.Depths) != broker.TrendLen {
		t.Fatalf("trend %+v", tr)
	}
	for i := 151; i <= 299; i++ {
		s = read(i, 6200)
	}
	if fs := findings(s, topology.CodeDLQGrowing); len(fs) != 1 || !strings.HasPrefix(fs[0].Message, "grew by 8 in 5m") {
		t.Fatalf("five minutes after the last growth: %+v", fs)
	}
	if fs := findings(read(300, 6200), topology.CodeDLQGrowing); len(fs) != 0 {
		t.Fatalf("a DLQ that has not grown for five minutes: %+v", fs)
	}
}

// jobs.delay relies on per-message expiration (no TTL, dead-letters back
// to jobs, an old head) and takes messages while letting none out: over
// reads of more than a minute it is hol-blocked, with the evidence.
// invoices.retry grows the same way but only dead-lettering feeds it (no
// publishes) and no peek said its messages carry an expiration: the stuck
// finding speaks for it, never hol-blocked. jobs.delay is reachable by a
// dead-letter route too, but publishers feed it: nothing leaving it while
// they do is the long head's doing.
func TestHoLBlockedFromReads(t *testing.T) {
	m := NewMemory(nil)
	vhostAt := func(i int) topology.Vhost {
		delay := topology.Queue{Name: "jobs.delay", Messages: 61 + int64(i/2), Ready: 61 + int64(i/2), Arguments: dl("jobs"),
			HeadMessageTimestamp: t0.Add(-3 * time.Minute), Rates: topology.Rates{Known: true, Publish: 0.29}}
		// Dead-lettering feeds it: the broker counts no publishes.
		stuck := topology.Queue{Name: "invoices.retry", Messages: 80 + int64(i/2), Ready: 80 + int64(i/2), Arguments: dl("invoices"),
			HeadMessageTimestamp: t0.Add(-time.Hour), Rates: topology.Rates{Known: true}}
		return topology.Vhost{Name: "/", Queues: []topology.Queue{
			{Name: "jobs", Consumers: 1, Arguments: dl("jobs.delay")}, delay, {Name: "invoices", Consumers: 1, Arguments: dl("invoices.retry")}, stuck,
		}}
	}
	var s *broker.Snapshot
	read := func(i int) {
		s = m.Snapshot(Reading{Vhost: "/", TakenAt: t0.Add(time.Duration(i) * 2 * time.Second), Topology: vhostAt(i)})
	}
	for i := 0; i <= 20; i++ { // 40 s: not yet a minute
		read(i)
	}
	if fs := findings(s, topology.CodeHoLBlocked); len(fs) > 0 {
		t.Fatalf("hol-blocked after 40 s of watching: %+v", fs)
	}
	for i := 21; i <= 40; i++ {
		read(i)
	}
	fs := findings(s, topology.CodeHoLBlocked)
	if len(fs) != 1 || fs[0].Queue != "jobs.delay" {
		t.Fatalf("hol-blocked findings %+v, want one on jobs.delay (none on invoices.retry)", fs)
	}
	if want := "head published 4m20s ago, nothing left for 1m20s, 81 waiting"; !strings.HasPrefix(fs[0].Message, want) {
		t.Errorf("message %q, want it to start %q", fs[0].Message, want)
	}
	if !slices.ContainsFunc(s.Findings, func(f topology.Finding) bool { return f.Code == topology.CodeStuck && f.Queue == "invoices.retry" }) {
		t.Errorf("no stuck finding on invoices.retry: %+v", s.Findings)
	}
}

// A peek's look at a blocked queue is a hol-blocked finding from the next
// read on, without waiting for a history, and only one on the queue even
// once the history shows it too.
func TestHoLBlockedFromAPeeksLook(t *testing.T) {
	ev := &broker.Evidence{}
	m := NewMemory(ev)
	in := []topology.HoLInput{{Expiration: time.Hour, HasExpiration: true, Timestamp: t0.Add(-time.Minute)}}
	for range 500 {
		in = append(in, topology.HoLInput{Expiration: 5 * time.Second, HasExpiration: true, Timestamp: t0.Add(-time.Minute)})
	}
	look := topology.LookOf(t0, 501, in, topology.HoL(in, 0, t0).Marks)
	v := topology.Vhost{Name: "/", Queues: []topology.Queue{
		{Name: "jobs", Consumers: 1},
		{Name: "jobs.delay", Messages: 501, Ready: 501, Arguments: dl("jobs")},
	}}
	v.Apply(topology.Evidence{"jobs.delay": {Expiration: true, Look: look}})
	s := m.Snapshot(Reading{Vhost: "/", TakenAt: t0.Add(time.Second), Topology: v})
	fs := findings(s, topology.CodeHoLBlocked)
	if len(fs) != 1 || !strings.HasPrefix(fs[0].Message, "500 messages wait behind a longer expiration at position 0") {
		t.Fatalf("from the look: %+v", fs)
	}
}

// The net rate over a window sees a drain whose depth moves in steps (the
// broker's stats interval), which the last two reads do not; the drain
// follows from it.
func TestNetRateOverAWindow(t *testing.T) {
	h := NewHistory()
	for i, d := range []int64{100, 100, 100, 100, 100, 90, 90, 90, 90, 90, 80, 80} {
		h.Record(t0.Add(time.Duration(i)*time.Second), map[string]int64{"q": d})
	}
	if last, ok := h.NetRate("q"); !ok || last != 0 {
		t.Fatalf("precondition: last-two rate %v %v", last, ok)
	}
	v := topology.Vhost{Queues: []topology.Queue{{Name: "q", Messages: 80, Ready: 80}}}
	tr := Trends(&v, h)["q"]
	if !tr.NetKnown || tr.Net >= 0 || tr.Drain.Kind != broker.DrainETA {
		t.Fatalf("trend %+v: want a negative windowed rate and a time to drain", tr)
	}
	short := NewHistory()
	short.Record(t0, map[string]int64{"q": 5})
	short.Record(t0.Add(time.Second), map[string]int64{"q": 4})
	if _, ok := short.NetRateOver("q"); ok {
		t.Fatal("a 1 s history claims a windowed rate")
	}
}

func TestDrainOf(t *testing.T) {
	ttl := func(ms int32) map[string]any { return map[string]any{"x-message-ttl": ms} }
	for _, tc := range []struct {
		q     topology.Queue
		net   float64
		netOK bool
		want  broker.Drain
	}{
		{topology.Queue{}, -5, true, broker.Drain{Kind: broker.DrainEmpty}},
		{topology.Queue{Messages: 600}, -5, true, broker.Drain{Kind: broker.DrainETA, In: 2 * time.Minute}},
		{topology.Queue{Messages: 600}, 5, true, broker.Drain{Kind: broker.DrainGrowing}},
		{topology.Queue{Messages: 600}, 0, false, broker.Drain{Kind: broker.DrainUnknown}},
		// A 30 s tier: what is in it leaves within 30 s, whatever the net
		// rate says (issue 21: "~16m" on a 30 s tier).
		{topology.Queue{Messages: 1000, Arguments: ttl(30000)}, -1, true, broker.Drain{Kind: broker.DrainBound, In: 30 * time.Second}},
		{topology.Queue{Messages: 1000, Arguments: ttl(30000)}, 5, true, broker.Drain{Kind: broker.DrainBound, In: 30 * time.Second}},
		{topology.Queue{Messages: 100, Arguments: ttl(30000)}, -10, true, broker.Drain{Kind: broker.DrainETA, In: 10 * time.Second}},
		// Policy TTLs bound too; a message held unacked does not expire.
		{topology.Queue{Messages: 10, Type: topology.QueueQuorum, Policy: map[string]any{"message-ttl": float64(5000)}}, 0, false, broker.Drain{Kind: broker.DrainBound, In: 5 * time.Second}},
		{topology.Queue{Messages: 10, Unacked: 1, Arguments: ttl(30000)}, 0, false, broker.Drain{Kind: broker.DrainUnknown}},
	} {
		if got := drainOf(&tc.q, tc.net, tc.netOK); got != tc.want {
			t.Errorf("drainOf(%+v, %v, %v) = %+v, want %+v", tc.q, tc.net, tc.netOK, got, tc.want)
		}
	}
}

// The overview is each vhost's analysis: its worst finding, its DLQs, and
// their growth over the listings remembered (none from one listing).
func TestOverviewGrowthOverListings(t *testing.T) {
	m := NewMemory(nil)
	quiet := topology.Vhost{Name: "quiet"}
	first := m.Overview([]topology.Vhost{quiet, ordersVhost(5)}, "4.3.6", t0)
	if len(first) != 2 || first[0].Vhost != "/" || first[0].DLQMessages != 5 || first[0].DLQGrowth != nil {
		t.Fatalf("first listing %+v", first)
	}
	second := m.Overview([]topology.Vhost{quiet, ordersVhost(42)}, "4.3.6", t0.Add(10*time.Second))
	if second[0].DLQGrowth == nil || *second[0].DLQGrowth != 37 || second[0].Worst == nil || second[0].Worst.Code != topology.CodeDLQGrowing {
		t.Fatalf("second listing %+v", second[0])
	}
}
