package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/metrics"
	"github.com/ladder-tui/ladder/internal/sshserve"
)

// The bench vhost (400 ladders of a main queue, three TTL tiers and a
// DLQ: 2,000 queues) scrapes within the README's series bound, and three
// scrapers for 30 s cost the broker the share's reads, not one a scrape.
// Opt-in (LADDER_TEST_METRICS_BENCH=1): it declares 2,000 queues.
func TestMetricsSeriesOnTheBenchVhost(t *testing.T) {
	if os.Getenv("LADDER_TEST_METRICS_BENCH") != "1" {
		t.Skip("LADDER_TEST_METRICS_BENCH=1 declares the 2,000-queue bench vhost")
	}
	r := brokertest.OwnVhost(t)
	ch := brokertest.Channel(t, r, "test metrics bench")
	const ladders = 400
	if err := brokertest.DeclareLadders(ch, ladders); err != nil {
		t.Fatal(err)
	}
	ro := *r
	ro.ReadOnly = true
	live, err := rabbit.NewLive(&ro, "test metrics bench")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	share := sshserve.NewSnapshotShare(context.Background(), live, r.Vhost, 0)
	h, err := metrics.Handler(metrics.NewCollector(share, r.Vhost, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := get(t, srv.URL)
	findings := 0
	if f := s.fams["ladder_finding"]; f != nil {
		findings = len(f.GetMetric())
	}
	// 7 + 3 × ladders with a DLQ + tiers + finding series (README).
	bound := 7 + 3*ladders + 3*ladders + findings
	t.Logf("series on %d ladders (2,000 queues): %d (%d finding series), bound %d", ladders, s.series(), findings, bound)
	if s.series() > bound || findings > metrics.MaxFindingSeries+50 {
		t.Errorf("%d series, %d of findings: over the bound %d", s.series(), findings, bound)
	}
	before := share.Stats()
	began := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	scrapes := 0
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(began) < 30*time.Second {
				resp, err := http.Get(srv.URL + metrics.Path)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				scrapes++
				mu.Unlock()
				time.Sleep(time.Second)
			}
		}()
	}
	wg.Wait()
	after := share.Stats()
	reads := after.Reads - before.Reads
	t.Logf("3 scrapers, 1 s apart, 30 s: %d scrapes, %d broker reads (%.2f s of reading)", scrapes, reads, after.Seconds-before.Seconds)
	if reads >= scrapes {
		t.Errorf("%d reads for %d scrapes", reads, scrapes)
	}
}
