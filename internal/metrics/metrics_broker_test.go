package metrics_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/metrics"
	"github.com/ladder-tui/ladder/internal/sshserve"
	"github.com/ladder-tui/ladder/retry/topology"
)

// scrape is one GET of /metrics: its body and what it parses to.
type scrape struct {
	body []byte
	fams map[string]*dto.MetricFamily
}

func get(t *testing.T, url string) scrape {
	t.Helper()
	resp, err := http.Get(url + metrics.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v\n%s", resp.StatusCode, err, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	return scrape{body: body, fams: fams}
}

// value is the sample of name whose labels include want.
func (s scrape) value(name string, want map[string]string) (float64, bool) {
	f := s.fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		ok := true
		for k, v := range want {
			ok = ok && got[k] == v
		}
		if !ok {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Summary != nil:
			return float64(m.GetSummary().GetSampleCount()), true
		}
	}
	return 0, false
}

// series counts the samples of the scrape (a summary's _sum and _count
// are two).
func (s scrape) series() int {
	n := 0
	for _, f := range s.fams {
		for _, m := range f.GetMetric() {
			if m.Summary != nil {
				n += 2 + len(m.GetSummary().GetQuantile())
			} else {
				n++
			}
		}
	}
	return n
}

// On the broker (3.10 and 4.3): ladder serve's metrics, scraped over HTTP
// from the collector on a snapshot share, report a DLQ's depth and its
// oldest message's age as the broker counts them, a wait queue's depth,
// its head-of-line blocking as ladder_finding{code="hol-blocked"}, the
// DLQ's inflow once messages arrive, and ladder's reads; three scrapers
// at once cost the broker one read a refresh, not one a scrape; promtool
// finds the scrape clean.
func TestMetricsOnTheBroker(t *testing.T) {
	r := brokertest.OwnVhost(t)
	ch := brokertest.Channel(t, r, "test metrics")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	declare := func(name string, args amqp.Table) {
		t.Helper()
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
	}
	publish := func(c *amqp.Channel, key string, ms ...amqp.Publishing) {
		t.Helper()
		if err := brokertest.PublishConfirmed(ctx, c, "", key, ms); err != nil {
			t.Error(err)
		}
	}
	// jobs retries through jobs.wait, whose head is due in an hour and was
	// published 3 minutes ago: what arrives behind it waits (see
	// broker/rabbit's holWait).
	const main, wait, dlqMain, dlq = "jobs", "jobs.wait", "orders", "orders.dlq"
	declare(main, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": wait})
	declare(wait, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": main})
	// orders fails into orders.dlq, which holds n messages published 5
	// minutes ago.
	declare(dlqMain, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
	declare(dlq, nil)
	now := time.Now()
	publish(ch, wait, amqp.Publishing{MessageId: "head", Expiration: "3600000", Timestamp: now.Add(-3 * time.Minute), Body: []byte("later")})
	for i := 0; i < 5; i++ {
		publish(ch, wait, amqp.Publishing{Expiration: "5000", Timestamp: now, Body: []byte("soon")})
	}
	const n = 7
	for i := 0; i < n; i++ {
		publish(ch, dlq, amqp.Publishing{Timestamp: now.Add(-5 * time.Minute), Body: []byte("failed")})
	}

	ro := *r
	ro.ReadOnly = true
	live, err := rabbit.NewLive(&ro, "test metrics")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	const refresh = 2 * time.Second
	share := sshserve.NewSnapshotShare(ctx, live, r.Vhost, refresh)
	h, err := metrics.Handler(metrics.NewCollector(share, r.Vhost, 8*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	vh := map[string]string{"vhost": r.Vhost}
	first := get(t, srv.URL)
	if up, ok := first.value("ladder_broker_up", vh); !ok || up != 1 {
		t.Fatalf("ladder_broker_up %v %v\n%s", up, ok, first.body)
	}

	// Messages keep arriving in the wait queue (a retrying service) and
	// in the DLQ.
	pub := brokertest.Channel(t, r, "test metrics publisher")
	if err := pub.Confirm(false); err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				publish(pub, wait, amqp.Publishing{Expiration: "5000", Timestamp: time.Now(), Body: []byte("again")})
				publish(pub, dlq, amqp.Publishing{Timestamp: now.Add(-time.Minute), Body: []byte("failed again")})
			}
		}
	}()
	stopped := false
	stopPublishing := func() {
		if !stopped {
			stopped = true
			close(stop)
			<-done
		}
	}
	defer stopPublishing()

	// Three scrapers at once, each every 100 ms for 10 s: the broker is
	// read at most once per fresh share window (0.9 of a refresh), however
	// many scrape.
	before := share.Stats().Reads
	began := time.Now()
	scrapes := scrapeConcurrently(t, srv.URL, 3, 10*time.Second, 100*time.Millisecond)
	elapsed := time.Since(began)
	reads := share.Stats().Reads - before
	most := int(elapsed/(refresh*9/10)) + 1
	t.Logf("3 scrapers: %d scrapes in %v, %d broker reads (at most %d allowed)", scrapes, elapsed.Round(time.Millisecond), reads, most)
	if reads > most || reads >= scrapes {
		t.Errorf("%d reads for %d scrapes in %v: want at most %d", reads, scrapes, elapsed, most)
	}
	after := get(t, srv.URL)
	if got, _ := after.value("ladder_reads_total", vh); int(got) != share.Stats().Reads {
		t.Errorf("ladder_reads_total %v, the share read %d times", got, share.Stats().Reads)
	}

	// The wait queue is found head-of-line blocked once a minute of
	// arrivals left nothing out; the DLQ's inflow shows.
	holLabels := map[string]string{"vhost": r.Vhost, "code": topology.CodeHoLBlocked, "severity": string(topology.SeverityError), "queue": wait}
	dlqLabels := map[string]string{"vhost": r.Vhost, "main": dlqMain, "queue": dlq}
	var s scrape
	sawInflow := false
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(time.Second) {
		s = get(t, srv.URL)
		if in, ok := s.value("ladder_dlq_inflow_messages_per_second", dlqLabels); ok && in > 0 {
			sawInflow = true
		}
		if v, ok := s.value("ladder_finding", holLabels); ok && v == 1 && sawInflow {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no hol-blocked finding on %s or no DLQ inflow (%v) within 3 minutes:\n%s", wait, sawInflow, s.body)
		}
	}
	stopPublishing()

	// Depths as the broker counts them, once its statistics caught up.
	depth := func(q string) int {
		st, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st.Messages
	}
	waitLabels := map[string]string{"vhost": r.Vhost, "main": main, "queue": wait}
	var inDLQ, inWait int
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		inDLQ, inWait = depth(dlq), depth(wait)
		s = get(t, srv.URL)
		d, ok1 := s.value("ladder_dlq_messages", dlqLabels)
		w, ok2 := s.value("ladder_tier_messages", waitLabels)
		if ok1 && ok2 && int(d) == inDLQ && int(w) == inWait {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("broker: %s %d, %s %d; scrape:\n%s", dlq, inDLQ, wait, inWait, s.body)
		}
	}
	if inDLQ <= n || inWait <= 6 {
		t.Errorf("the broker holds %d in %s and %d in %s: the publisher added nothing", inDLQ, dlq, inWait, wait)
	}
	if age, ok := s.value("ladder_dlq_oldest_message_age_seconds", dlqLabels); !ok || age < (5*time.Minute).Seconds()-30 || age > time.Since(now).Seconds()+5*60+30 {
		t.Errorf("oldest DLQ message age %v %v: want about 5 minutes and more", age, ok)
	}
	if age, ok := s.value("ladder_last_good_read_age_seconds", vh); !ok || age < 0 || age > 60 {
		t.Errorf("ladder_last_good_read_age_seconds %v %v", age, ok)
	}
	if errs, ok := s.value("ladder_read_errors_total", vh); !ok || errs != 0 {
		t.Errorf("ladder_read_errors_total %v %v", errs, ok)
	}
	if done, ok := s.value("ladder_read_duration_seconds", vh); !ok || done < 1 {
		t.Errorf("ladder_read_duration_seconds_count %v %v", done, ok)
	}
	t.Logf("series in the scrape of a vhost of 2 ladders, 4 queues: %d", s.series())
	promtoolCheck(t, s.body)
}

// promtoolCheck runs promtool check metrics on a scrape: Prometheus'
// own lint of names, units and help. Skipped without promtool unless
// LADDER_REQUIRE_BROKER=1 (make test installs it: scripts/clients.sh).
func promtoolCheck(t *testing.T, body []byte) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("LADDER_REQUIRE_BROKER") == "1" {
			t.Fatalf("promtool not on PATH (scripts/clients.sh installs Debian's prometheus): %v", err)
		}
		t.Skipf("promtool not on PATH: %v", err)
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
