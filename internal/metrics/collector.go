// Package metrics is ladder serve --metrics: a Prometheus collector that
// reports the ladders of a vhost and their findings from the snapshot share
// every face of ladder serve reads (sshserve.SnapshotShare), so a scrape
// costs the broker nothing beyond the share's one read a refresh, however
// many scrape.
package metrics

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/sshserve"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Share is where snapshots come from: a sshserve.SnapshotShare.
type Share interface {
	Snapshot(ctx context.Context) (*broker.Snapshot, error)
	Stats() sshserve.ShareStats
}

// Scans are the latest scans by cause the sessions ran
// (sshserve.CauseScans).
type Scans interface {
	Latest(vhost string) []sshserve.CauseScan
}

// MaxCauseSeries bounds ladder_cause_messages per scanned queue: its
// largest MaxCauseSeries causes, the rest summed under cause="(other)".
// With sshserve.MaxCauseScans queues kept, scans add at most
// 50 × (10 + 1 + 2) = 650 series, however many queues the vhost has.
const MaxCauseSeries = 10

// OtherCause is the cause label of the messages past MaxCauseSeries.
const OtherCause = "(other)"

// maxCauseLabel bounds a cause label, in runes: a masked error text can
// be a stack trace.
const maxCauseLabel = 160

// MaxFindingSeries bounds ladder_finding's series: past it, the rest of
// the findings are counted under queue="(other)" by code and severity (of
// which there are few), so a vhost with a finding on each of thousands of
// queues stays a bounded scrape.
const MaxFindingSeries = 200

// OtherQueue is the queue label of the findings past MaxFindingSeries.
const OtherQueue = "(other)"

var (
	ladderLabels = []string{"vhost", "main", "queue"}

	descUp = prometheus.NewDesc("ladder_broker_up",
		"1 when ladder's last read of the vhost worked, 0 when it failed.", []string{"vhost"}, nil)
	descGoodAge = prometheus.NewDesc("ladder_last_good_read_age_seconds",
		"Seconds since ladder's last read of the vhost that worked (absent before the first).", []string{"vhost"}, nil)
	descReads = prometheus.NewDesc("ladder_reads_total",
		"Reads of the vhost ladder began (one a refresh, however many scrape).", []string{"vhost"}, nil)
	descReadErrors = prometheus.NewDesc("ladder_read_errors_total",
		"Reads of the vhost that failed.", []string{"vhost"}, nil)
	descReadDuration = prometheus.NewDesc("ladder_read_duration_seconds",
		"How long ladder's reads of the vhost took (count: reads ended).", []string{"vhost"}, nil)
	descLadders = prometheus.NewDesc("ladder_ladders",
		"Retry ladders discovered in the vhost.", []string{"vhost"}, nil)
	descDLQ = prometheus.NewDesc("ladder_dlq_messages",
		"Messages in a ladder's dead-letter queue.", ladderLabels, nil)
	descDLQIn = prometheus.NewDesc("ladder_dlq_inflow_messages_per_second",
		"Messages a second arriving in a ladder's dead-letter queue, dead-lettered ones included (absent when nothing tells).", ladderLabels, nil)
	descDLQAge = prometheus.NewDesc("ladder_dlq_oldest_message_age_seconds",
		"Age of the message at the head of a ladder's dead-letter queue, from its timestamp property (absent when unknown).", ladderLabels, nil)
	descTier = prometheus.NewDesc("ladder_tier_messages",
		"Messages waiting in a tier or wait queue of a ladder.", ladderLabels, nil)
	descFinding = prometheus.NewDesc("ladder_finding",
		"Findings of the vhost (as ladder topology shows them) by code, severity and queue: how many.", []string{"vhost", "code", "severity", "queue"}, nil)
	descCause = prometheus.NewDesc("ladder_cause_messages",
		"Messages of a queue by cause, as the latest scan a session of ladder serve ran counted them (g in the queue browser): the 10 largest causes, the rest under cause=\"(other)\"; at most 50 queues.", []string{"vhost", "queue", "by", "cause"}, nil)
	descScanAge = prometheus.NewDesc("ladder_cause_scan_age_seconds",
		"Seconds since the latest scan by cause of a queue began.", []string{"vhost", "queue"}, nil)
	descScanWhole = prometheus.NewDesc("ladder_cause_scan_complete",
		"1 when the latest scan by cause of a queue read every ready message, 0 when it stopped short (its bound, its deadline).", []string{"vhost", "queue"}, nil)
)

// Collector reports one vhost's share on each scrape.
type Collector struct {
	share Share
	scans Scans // nil: no scans reported
	vhost string
	// timeout bounds the read a scrape may have to wait for.
	timeout time.Duration
	now     func() time.Time
}

// NewCollector reports share's reads of vhost; a scrape waits at most
// timeout for a read under way.
func NewCollector(share Share, vhost string, timeout time.Duration) *Collector {
	return &Collector{share: share, vhost: vhost, timeout: timeout, now: time.Now}
}

// WithScans makes c report scans' latest counts by cause too.
func (c *Collector) WithScans(s Scans) *Collector {
	c.scans = s
	return c
}

// Describe sends every descriptor the collector may send.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descGoodAge, descReads, descReadErrors, descReadDuration, descLadders, descDLQ, descDLQIn, descDLQAge, descTier, descFinding, descCause, descScanAge, descScanWhole} {
		ch <- d
	}
}

// Collect reports the share's latest read: the one still fresh, the one
// under way, or a new one when the last is a refresh old.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	snap, err := c.share.Snapshot(ctx)
	st := c.share.Stats()
	vh := label(c.vhost)
	up := 0.0
	if err == nil && snap != nil {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up, vh)
	if !st.LastGood.IsZero() {
		ch <- prometheus.MustNewConstMetric(descGoodAge, prometheus.GaugeValue, c.now().Sub(st.LastGood).Seconds(), vh)
	}
	ch <- prometheus.MustNewConstMetric(descReads, prometheus.CounterValue, float64(st.Reads), vh)
	ch <- prometheus.MustNewConstMetric(descReadErrors, prometheus.CounterValue, float64(st.Errors), vh)
	ch <- prometheus.MustNewConstSummary(descReadDuration, uint64(st.Done), st.Seconds, nil, vh)
	if up == 0 {
		// No figures from a read that failed: stale depths would keep
		// alerts firing, or quiet, on what is no longer known.
		return
	}
	ladders(ch, snap, vh)
	findings(ch, snap.Findings, vh)
	if c.scans != nil {
		c.causes(ch, snap, c.scans.Latest(c.vhost), vh)
	}
}

// causes reports each scan of a queue the snapshot still has (a deleted
// queue's scan says nothing of it any more): its largest MaxCauseSeries
// causes and the rest under OtherCause, its age and whether it was whole.
func (c *Collector) causes(ch chan<- prometheus.Metric, snap *broker.Snapshot, scans []sshserve.CauseScan, vh string) {
	for _, s := range scans {
		if _, ok := snap.Topology.Queue(s.Queue); !ok {
			continue
		}
		q, by := label(s.Queue), label(s.By)
		// Two causes cut to one label are one series.
		count := map[string]int{}
		var keys []string
		add := func(k string, n int) {
			if _, ok := count[k]; !ok {
				keys = append(keys, k)
			}
			count[k] += n
		}
		other, rest := s.Rest, s.Rest > 0
		for i, cs := range s.Causes {
			if i < MaxCauseSeries {
				add(causeLabel(cs.Key), cs.Count)
			} else {
				other += cs.Count
				rest = true
			}
		}
		if rest {
			add(OtherCause, other)
		}
		for _, k := range keys {
			ch <- prometheus.MustNewConstMetric(descCause, prometheus.GaugeValue, float64(count[k]), vh, q, by, k)
		}
		ch <- prometheus.MustNewConstMetric(descScanAge, prometheus.GaugeValue, max(0, c.now().Sub(s.At).Seconds()), vh, q)
		whole := 0.0
		if s.Whole {
			whole = 1
		}
		ch <- prometheus.MustNewConstMetric(descScanWhole, prometheus.GaugeValue, whole, vh, q)
	}
}

// causeLabel is a cause as a label value, cut to maxCauseLabel runes.
func causeLabel(k string) string {
	k = label(k)
	if r := []rune(k); len(r) > maxCauseLabel {
		k = string(r[:maxCauseLabel-1]) + "…"
	}
	return k
}

// ladders reports each ladder's DLQ and tiers, once per (main, queue).
func ladders(ch chan<- prometheus.Metric, snap *broker.Snapshot, vh string) {
	rep := present.Topology(snap)
	ch <- prometheus.MustNewConstMetric(descLadders, prometheus.GaugeValue, float64(len(rep.Ladders)), vh)
	seen := map[[3]string]bool{}
	once := func(d string, main, q string) bool {
		k := [3]string{d, main, q}
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}
	heads := map[string]time.Time{}
	for _, q := range snap.Topology.Queues {
		if !q.HeadMessageTimestamp.IsZero() {
			heads[q.Name] = q.HeadMessageTimestamp
		}
	}
	for _, l := range rep.Ladders {
		main := label(l.Main.Name)
		if d := l.DLQ; d != nil && once("dlq", main, d.Name) {
			q := label(d.Name)
			ch <- prometheus.MustNewConstMetric(descDLQ, prometheus.GaugeValue, float64(d.Messages), vh, main, q)
			if d.InRate != nil {
				ch <- prometheus.MustNewConstMetric(descDLQIn, prometheus.GaugeValue, *d.InRate, vh, main, q)
			}
			if h, ok := heads[d.Name]; ok && d.Messages > 0 && snap.TakenAt.After(h) {
				ch <- prometheus.MustNewConstMetric(descDLQAge, prometheus.GaugeValue, snap.TakenAt.Sub(h).Seconds(), vh, main, q)
			}
		}
		waits := make([]present.QueueReport, 0, len(l.Tiers)+len(l.WaitQueues))
		for _, t := range l.Tiers {
			waits = append(waits, t.QueueReport)
		}
		waits = append(waits, l.WaitQueues...)
		for _, w := range waits {
			if once("tier", main, w.Name) {
				ch <- prometheus.MustNewConstMetric(descTier, prometheus.GaugeValue, float64(w.Messages), vh, main, label(w.Name))
			}
		}
	}
}

// findings reports how many findings there are by code, severity and
// queue: the most severe MaxFindingSeries series, the rest by code and
// severity under OtherQueue.
func findings(ch chan<- prometheus.Metric, fs []topology.Finding, vh string) {
	type key struct{ code, severity, queue string }
	count := map[key]int{}
	var keys []key
	for _, f := range fs {
		k := key{f.Code, string(f.Severity), label(f.Queue)}
		if count[k] == 0 {
			keys = append(keys, k)
		}
		count[k]++
	}
	sort.SliceStable(keys, func(i, j int) bool {
		return topology.Severity(keys[i].severity).Rank() < topology.Severity(keys[j].severity).Rank()
	})
	other := map[key]int{}
	var otherKeys []key
	for i, k := range keys {
		if i < MaxFindingSeries {
			ch <- prometheus.MustNewConstMetric(descFinding, prometheus.GaugeValue, float64(count[k]), vh, k.code, k.severity, k.queue)
			continue
		}
		o := key{k.code, k.severity, OtherQueue}
		if other[o] == 0 {
			otherKeys = append(otherKeys, o)
		}
		other[o] += count[k]
	}
	for _, o := range otherKeys {
		ch <- prometheus.MustNewConstMetric(descFinding, prometheus.GaugeValue, float64(other[o]), vh, o.code, o.severity, o.queue)
	}
}

// label is s as a label value: Prometheus wants UTF-8 (the exposition
// format escapes the rest).
func label(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
