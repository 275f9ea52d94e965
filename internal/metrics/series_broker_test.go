package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/metrics"
	"github.com/ladder-tui/ladder/internal/sshserve"
)

// The bench vhost (400 ladders of a main queue, three TTL tiers and a
// DLQ: 2,000 queues) scrapes within docs/serve.md's series bound, and three
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
	// 7 + 3 × ladders with a DLQ + tiers + finding series (docs/serve.md).
	bound := 7 + 3*ladders + 3*ladders + findings
	t.Logf("series on %d ladders (2,000 queues): %d (%d finding series), bound %d", ladders, s.series(), findings, bound)
	if s.series() > bound || findings > metrics.MaxFindingSeries+50 {
		t.Errorf("%d series, %d of findings: over the bound %d", s.series(), findings, bound)
	}
	// The broker's CPU (its runtime counter, every scheduler's) over 20 s
	// each: nothing scraping, one scraper, three. Recorded in BENCH.md:
	// the share reads once a refresh however many scrape.
	idle := brokerCPU(t, r, func() { time.Sleep(20 * time.Second) })
	one, _, _ := scrapeFor(t, srv.URL, share, r, 1, 20*time.Second)
	three, scrapes, reads := scrapeFor(t, srv.URL, share, r, 3, 20*time.Second)
	t.Logf("broker CPU in 20 s: %v idle, %v with 1 scraper, %v with 3; 3 scrapers: %d scrapes, %d broker reads", idle, one, three, scrapes, reads)
	if reads >= scrapes {
		t.Errorf("%d reads for %d scrapes", reads, scrapes)
	}
}

// scrapeFor has n scrapers scrape url a second apart for d, and returns
// the broker's CPU meanwhile, the scrapes and the share's reads.
func scrapeFor(t *testing.T, url string, share *sshserve.SnapshotShare, r *rabbit.Resolved, n int, d time.Duration) (cpu time.Duration, scrapes, reads int) {
	t.Helper()
	before := share.Stats()
	cpu = brokerCPU(t, r, func() { scrapes = scrapeConcurrently(t, url, n, d, time.Second) })
	return cpu, scrapes, share.Stats().Reads - before.Reads
}

// scrapeConcurrently has n scrapers scrape url every `every` for d and
// returns how many scrapes they made.
func scrapeConcurrently(t *testing.T, url string, n int, d, every time.Duration) int {
	t.Helper()
	began := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	scrapes := 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(began) < d {
				resp, err := http.Get(url + metrics.Path)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				scrapes++
				mu.Unlock()
				time.Sleep(every)
			}
		}()
	}
	wg.Wait()
	return scrapes
}

// brokerCPU is the CPU the broker r reaches spent while f ran: its
// Prometheus counter erlang_vm_statistics_runtime_milliseconds.
func brokerCPU(t *testing.T, r *rabbit.Resolved, f func()) time.Duration {
	t.Helper()
	before := runtimeMS(t, r)
	f()
	return time.Duration(runtimeMS(t, r)-before) * time.Millisecond
}

func runtimeMS(t *testing.T, r *rabbit.Resolved) int64 {
	t.Helper()
	if r.PrometheusURL == nil {
		t.Fatal("no Prometheus URL for the broker's CPU")
	}
	u := *r.PrometheusURL
	u.Path = "/metrics"
	resp, err := http.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "erlang_vm_statistics_runtime_milliseconds "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("runtime %q: %v", v, err)
			}
			return int64(n)
		}
	}
	t.Fatalf("%s has no erlang_vm_statistics_runtime_milliseconds", u.Redacted())
	return 0
}
