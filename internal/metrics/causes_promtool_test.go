package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/metrics"
	"github.com/ladder-tui/ladder/internal/sshserve"
	"github.com/ladder-tui/ladder/retry/topology"
)

// oneSnapshot is a share of one snapshot.
type oneSnapshot struct{ snap *broker.Snapshot }

func (o oneSnapshot) Snapshot(context.Context) (*broker.Snapshot, error) { return o.snap, nil }
func (o oneSnapshot) Stats() sshserve.ShareStats {
	return sshserve.ShareStats{Reads: 1, Done: 1, LastGood: o.snap.TakenAt}
}

// The cause series, served as a scrape is (a recorded scan of more causes
// than are reported, with hostile text), pass promtool check metrics.
func TestCauseMetricsPassPromtool(t *testing.T) {
	scan := &usecase.GroupScan{Queue: topology.Queue{Name: "orders.dlq"}, ScannedAt: time.Now().Add(-time.Minute),
		Coverage: usecase.GroupCoverage{By: usecase.GroupError, Whole: true}}
	for i := range 3 * metrics.MaxCauseSeries {
		scan.Groups = append(scan.Groups, usecase.Group{Key: fmt.Sprintf("Boom%d: \"quoted\" \\ \n\x1b[31m \xff", i), Count: 100 - i})
	}
	var scans sshserve.CauseScans
	scans.Record("/", scan, nil)
	snap := &broker.Snapshot{Vhost: "/", TakenAt: time.Now(), Topology: topology.Vhost{Queues: []topology.Queue{{Name: "orders.dlq"}}}}
	h, err := metrics.Handler(metrics.NewCollector(oneSnapshot{snap}, "/", time.Second).WithScans(&scans))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + metrics.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(body), "\nladder_cause_messages{"); n != metrics.MaxCauseSeries+1 {
		t.Errorf("%d cause series, want %d:\n%s", n, metrics.MaxCauseSeries+1, body)
	}
	promtoolCheck(t, body)
}
