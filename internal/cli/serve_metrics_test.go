package cli

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
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
