package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/sshserve"
	"github.com/ladder-tui/ladder/retry/topology"
)

// fakeShare returns one snapshot or error, and stats.
type fakeShare struct {
	snap  *broker.Snapshot
	err   error
	stats sshserve.ShareStats
}

func (f *fakeShare) Snapshot(context.Context) (*broker.Snapshot, error) { return f.snap, f.err }
func (f *fakeShare) Stats() sshserve.ShareStats                         { return f.stats }

// gather collects c through a pedantic registry (which fails on a
// duplicate series or an inconsistent description).
func gather(t *testing.T, c prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// A read that fails says the broker is down and reports no ladder's
// figures (stale ones would keep alerts as they were), but still ladder's
// reads, its errors and the age of the last good read.
func TestCollectorBrokerDown(t *testing.T) {
	good := time.Now().Add(-time.Minute)
	c := NewCollector(&fakeShare{err: errors.New("connection refused"), stats: sshserve.ShareStats{Reads: 3, Done: 3, Errors: 2, Seconds: 0.5, LastGood: good}}, "/", time.Second)
	fams := gather(t, c)
	if v := fams["ladder_broker_up"].GetMetric()[0].GetGauge().GetValue(); v != 0 {
		t.Errorf("ladder_broker_up %v", v)
	}
	if v := fams["ladder_read_errors_total"].GetMetric()[0].GetCounter().GetValue(); v != 2 {
		t.Errorf("ladder_read_errors_total %v", v)
	}
	if v := fams["ladder_last_good_read_age_seconds"].GetMetric()[0].GetGauge().GetValue(); v < 60 {
		t.Errorf("ladder_last_good_read_age_seconds %v, want a minute or more", v)
	}
	for _, name := range []string{"ladder_ladders", "ladder_dlq_messages", "ladder_tier_messages", "ladder_finding"} {
		if fams[name] != nil {
			t.Errorf("%s reported from a failed read", name)
		}
	}
	// Before any good read there is no age to say.
	fams = gather(t, NewCollector(&fakeShare{err: errors.New("refused"), stats: sshserve.ShareStats{Reads: 1, Done: 1, Errors: 1}}, "/", time.Second))
	if fams["ladder_last_good_read_age_seconds"] != nil {
		t.Error("an age of a good read that never was")
	}
}

// The simulation's ladders are reported as topology reports them: each
// DLQ's depth and each tier's, one series each.
func TestCollectorReportsTheSimulation(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := sim.New(sim.Options{Seed: 3, Now: func() time.Time { return now }, WarmUp: 10 * time.Minute})
	t.Cleanup(func() { s.Close() })
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fams := gather(t, NewCollector(&fakeShare{snap: snap, stats: sshserve.ShareStats{Reads: 1, Done: 1, LastGood: now}}, snap.Vhost, time.Second))
	rep := present.Topology(snap)
	dlqs, tiers := map[string]float64{}, map[string]float64{}
	for _, l := range rep.Ladders {
		if l.DLQ != nil {
			dlqs[l.Main.Name+" "+l.DLQ.Name] = float64(l.DLQ.Messages)
		}
		for _, tr := range l.Tiers {
			tiers[l.Main.Name+" "+tr.Name] = float64(tr.Messages)
		}
	}
	if len(dlqs) == 0 || len(tiers) == 0 {
		t.Fatalf("the simulation has no DLQ or tier: %+v", rep.Ladders)
	}
	for name, want := range map[string]map[string]float64{"ladder_dlq_messages": dlqs, "ladder_tier_messages": tiers} {
		got := map[string]float64{}
		for _, m := range fams[name].GetMetric() {
			l := labelsOf(m)
			got[l["main"]+" "+l["queue"]] = m.GetGauge().GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s{%s} = %v, topology says %v", name, k, got[k], v)
			}
		}
	}
	if n := fams["ladder_ladders"].GetMetric()[0].GetGauge().GetValue(); int(n) != len(rep.Ladders) {
		t.Errorf("ladder_ladders %v, topology %d", n, len(rep.Ladders))
	}
	total := 0.0
	for _, m := range fams["ladder_finding"].GetMetric() {
		total += m.GetGauge().GetValue()
	}
	if int(total) != len(snap.Findings) {
		t.Errorf("ladder_finding sums to %v, the snapshot has %d findings", total, len(snap.Findings))
	}
}

// Findings make at most MaxFindingSeries series by queue, errors first;
// the rest are counted by code and severity under OtherQueue; two
// findings of one code on one queue are one series of 2.
func TestCollectorBoundsFindings(t *testing.T) {
	var fs []topology.Finding
	for i := 0; i < MaxFindingSeries+50; i++ {
		fs = append(fs, topology.Finding{Code: topology.CodeNoDLQ, Severity: topology.SeverityWarning, Queue: fmt.Sprintf("q%04d", i)})
	}
	fs = append(fs,
		topology.Finding{Code: topology.CodeUnroutableDeadLetter, Severity: topology.SeverityError, Queue: "last", Exchange: "a"},
		topology.Finding{Code: topology.CodeUnroutableDeadLetter, Severity: topology.SeverityError, Queue: "last", Exchange: "b"})
	snap := &broker.Snapshot{Vhost: "/", Findings: fs, TakenAt: time.Now()}
	fams := gather(t, NewCollector(&fakeShare{snap: snap}, "/", time.Second))
	ms := fams["ladder_finding"].GetMetric()
	if len(ms) != MaxFindingSeries+1 {
		t.Fatalf("%d series, want %d", len(ms), MaxFindingSeries+1)
	}
	total, other, last := 0.0, 0.0, 0.0
	for _, m := range ms {
		l, v := labelsOf(m), m.GetGauge().GetValue()
		total += v
		switch l["queue"] {
		case OtherQueue:
			other = v
		case "last":
			last = v
		}
	}
	if int(total) != len(fs) || last != 2 || int(other) != 51 {
		t.Errorf("total %v (want %d), the error on last %v (want 2, kept first), other %v (want 51)", total, len(fs), last, other)
	}
}

// fakeScans are scans by vhost.
type fakeScans map[string][]sshserve.CauseScan

func (f fakeScans) Latest(vhost string) []sshserve.CauseScan { return f[vhost] }

// A recorded scan is reported as its largest MaxCauseSeries causes, the
// rest (kept causes and those the store only counted) summed under
// OtherCause, with its age and whether it was whole: MaxCauseSeries+3
// series for the queue, however many causes. A scan of a queue the
// snapshot no longer has, or of another vhost, says nothing; two causes
// cut to one label are one series.
func TestCollectorReportsScansByCause(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var causes []sshserve.Cause
	total := 0
	for i := range 30 {
		causes = append(causes, sshserve.Cause{Key: fmt.Sprintf("cause %02d", i), Count: 100 - i})
		total += 100 - i
	}
	long := strings.Repeat("x", 2*maxCauseLabel)
	scans := fakeScans{
		"/": {
			{Vhost: "/", Queue: "orders.dlq", By: "error", Causes: causes, Rest: 40, Whole: true, At: now.Add(-90 * time.Second)},
			{Vhost: "/", Queue: "gone.dlq", By: "error", Causes: causes[:1], At: now},
			{Vhost: "/", Queue: "cut.dlq", By: "error", Causes: []sshserve.Cause{{Key: long + "a", Count: 2}, {Key: long + "b", Count: 3}}, At: now},
		},
		"other": {{Vhost: "other", Queue: "orders.dlq", By: "error", Causes: causes[:1], At: now}},
	}
	snap := &broker.Snapshot{Vhost: "/", TakenAt: now, Topology: topology.Vhost{Queues: []topology.Queue{{Name: "orders.dlq"}, {Name: "cut.dlq"}}}}
	c := NewCollector(&fakeShare{snap: snap}, "/", time.Second).WithScans(scans)
	c.now = func() time.Time { return now }
	fams := gather(t, c)
	got := map[string]float64{}
	sum := 0.0
	for _, m := range fams["ladder_cause_messages"].GetMetric() {
		l := labelsOf(m)
		if l["vhost"] != "/" || l["by"] != "error" {
			t.Errorf("labels %v", l)
		}
		if l["queue"] == "orders.dlq" {
			got[l["cause"]] = m.GetGauge().GetValue()
			sum += m.GetGauge().GetValue()
		} else if l["queue"] != "cut.dlq" {
			t.Errorf("a scan of %q reported", l["queue"])
		}
	}
	if len(got) != MaxCauseSeries+1 || got["cause 00"] != 100 || got["cause 09"] != 91 || got["cause 10"] != 0 {
		t.Errorf("%d series of orders.dlq (want %d): %v", len(got), MaxCauseSeries+1, got)
	}
	if int(sum) != total+40 || int(got[OtherCause]) != total+40-955 {
		t.Errorf("causes sum to %v, want %d; other %v", sum, total+40, got[OtherCause])
	}
	for _, name := range []string{"ladder_cause_scan_age_seconds", "ladder_cause_scan_complete"} {
		for _, m := range fams[name].GetMetric() {
			l, v := labelsOf(m), m.GetGauge().GetValue()
			switch {
			case l["queue"] == "orders.dlq" && name == "ladder_cause_scan_age_seconds" && v != 90,
				l["queue"] == "orders.dlq" && name == "ladder_cause_scan_complete" && v != 1,
				l["queue"] == "cut.dlq" && name == "ladder_cause_scan_complete" && v != 0,
				l["queue"] != "orders.dlq" && l["queue"] != "cut.dlq":
				t.Errorf("%s%v = %v", name, l, v)
			}
		}
	}
	var cut []*dto.Metric
	for _, m := range fams["ladder_cause_messages"].GetMetric() {
		if labelsOf(m)["queue"] == "cut.dlq" {
			cut = append(cut, m)
		}
	}
	if len(cut) != 1 || cut[0].GetGauge().GetValue() != 5 || len([]rune(labelsOf(cut[0])["cause"])) != maxCauseLabel {
		t.Errorf("two causes cut to one label: %d series", len(cut))
	}
	// No scans: no series, and a collector without a store is as before.
	for _, c := range []*Collector{NewCollector(&fakeShare{snap: snap}, "/", time.Second).WithScans(fakeScans{}), NewCollector(&fakeShare{snap: snap}, "/", time.Second)} {
		if fams := gather(t, c); fams["ladder_cause_messages"] != nil || fams["ladder_cause_scan_age_seconds"] != nil {
			t.Error("cause series without a scan")
		}
	}
}
