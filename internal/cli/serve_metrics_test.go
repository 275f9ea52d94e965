package cli

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/sshserve"
	"github.com/ladder-tui/ladder/retry/topology"
)

// metricValue is the value of the sample of name (with labels, "" for
// none) in a scrape, and whether it is there.
func metricValue(body, name, labels string) (float64, bool) {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(\{[^}]*\})? (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		if labels != "" && !strings.Contains(m[1], labels) {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		return v, err == nil
	}
	return 0, false
}

func scrapeURL(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// ladder serve --metrics alone needs no keys and serves the served
// vhost's ladders from the one snapshot reader; beside --ssh, scrapes and
// sessions read the same share (one client reads, "serve snapshots").
func TestServeMetricsOnTheSimulation(t *testing.T) {
	s := newSim(t)
	sv := startServe(t, s, "serve", "--metrics", "127.0.0.1:0")
	body := scrapeURL(t, sv.metrics)
	if up, ok := metricValue(body, "ladder_broker_up", ""); !ok || up != 1 {
		t.Fatalf("ladder_broker_up %v %v\n%s", up, ok, body)
	}
	if n, ok := metricValue(body, "ladder_ladders", ""); !ok || n < 1 {
		t.Errorf("ladder_ladders %v %v", n, ok)
	}
	if _, ok := metricValue(body, "ladder_dlq_messages", `queue="`); !ok {
		t.Errorf("no ladder_dlq_messages:\n%s", body)
	}
	if err := sv.stop(); err != nil {
		t.Fatalf("serve --metrics: %v", err)
	}

	keys := writeKeys(t, keyLine("", serveSigner(t), "bob@laptop"))
	both := startServe(t, s, "serve", "--ssh", "127.0.0.1:0", "--authorized-keys", keys, "--host-key", t.TempDir()+"/host_key",
		"--files", t.TempDir(), "--read-only", "--metrics", "127.0.0.1:0")
	for range 3 {
		scrapeURL(t, both.metrics)
	}
	if n, c := both.snapshotsBy("serve snapshots"); n == 0 || c != 1 {
		t.Errorf("scrapes beside --ssh: %d snapshots by %d readers, want one reader", n, c)
	}
	if err := both.stop(); err != nil {
		t.Fatalf("serve --ssh --metrics: %v", err)
	}
}

// A session's scan by cause (g in the queue browser) is what ladder serve
// --metrics then reports of the queue: its causes, summing to the messages
// the scan grouped, and that it read every ready one.
func TestServeMetricsReportASessionsScan(t *testing.T) {
	s := sim.New(sim.Options{Quiet: true})
	t.Cleanup(func() { s.Close() })
	if err := brokertest.PublishCauses(context.Background(), s, sim.OrdersDLQ, brokertest.CauseMessages(50, 9, s.Now())); err != nil {
		t.Fatal(err)
	}
	viewer := serveSigner(t)
	keys := writeKeys(t, keyLine("", viewer, "bob@laptop"))
	dir := t.TempDir()
	sv := startServe(t, s, "serve", "--ssh", "127.0.0.1:0", "--authorized-keys", keys, "--host-key", filepath.Join(dir, "host_key"),
		"--files", filepath.Join(dir, "files"), "--read-only", "--no-color", "--peek-limit", "10", "--metrics", "127.0.0.1:0")
	if body := scrapeURL(t, sv.metrics); strings.Contains(body, "ladder_cause_messages") {
		t.Fatalf("causes before any scan:\n%s", body)
	}
	// The peek reads 10 of 50: g groups the whole queue.
	sv.screen(t, "bob", viewer, [2]string{"", "LADDERS"}, [2]string{"/" + sim.OrdersDLQ + "\r\r", "peeked "},
		[2]string{"g", "grouped 50 of 50 ready messages by error"}, [2]string{"q", ""})
	body := scrapeURL(t, sv.metrics)
	re := regexp.MustCompile(`(?m)^ladder_cause_messages\{([^}]*)\} (\S+)$`)
	sum, series := 0.0, 0
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		if !strings.Contains(m[1], `queue="`+sim.OrdersDLQ+`"`) || !strings.Contains(m[1], `by="error"`) {
			t.Errorf("a cause series of another queue or grouping: %s", m[0])
		}
		v, _ := strconv.ParseFloat(m[2], 64)
		sum += v
		series++
	}
	if sum != 50 || series != 3 { // brokertest's 3 causes
		t.Errorf("%d cause series summing to %v, want 3 summing to 50:\n%s", series, sum, body)
	}
	if v, ok := metricValue(body, "ladder_cause_scan_complete", `queue="`+sim.OrdersDLQ+`"`); !ok || v != 1 {
		t.Errorf("ladder_cause_scan_complete %v %v", v, ok)
	}
	if _, ok := metricValue(body, "ladder_cause_scan_age_seconds", `queue="`+sim.OrdersDLQ+`"`); !ok {
		t.Error("no ladder_cause_scan_age_seconds")
	}
	if err := sv.stop(); err != nil {
		t.Fatal(err)
	}
}

// Only the served context's scans are kept: another context is another
// broker, whose vhost of the same name is another.
func TestServedScansKeepTheServedContexts(t *testing.T) {
	store := &sshserve.CauseScans{}
	rec := servedScans{served: "prod", store: store}
	scan := func(q string) *usecase.GroupScan {
		return &usecase.GroupScan{Queue: topology.Queue{Name: q}, Coverage: usecase.GroupCoverage{By: usecase.GroupError}}
	}
	rec.RecordScan("prod", "/", scan("a"), nil)
	rec.RecordScan("", "/", scan("b"), nil) // a session without a switcher: the served context
	rec.RecordScan("staging", "/", scan("c"), nil)
	var got []string
	for _, c := range store.Latest("/") {
		got = append(got, c.Queue)
	}
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("kept %q, want a and b", got)
	}
}
