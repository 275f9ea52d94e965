package rabbit

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeBroker answers the management API and Prometheus for one vhost "v"
// whose queues grow by 10 messages (published) per tick.
type fakeBroker struct {
	mu       sync.Mutex
	queues   []string
	tick     int64
	promDown bool
	version  string // "" is 4.3.6
	// noConsumers: Prometheus lists no consumer counts (3.10 lists only
	// queues that have consumers).
	noConsumers bool
	hits        map[string]int
}

func (f *fakeBroker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/api/queues/"):
		f.hits["queues"]++
		var rows []string
		for _, q := range f.queues {
			rows = append(rows, fmt.Sprintf(`{"name":%q,"type":"classic","arguments":{"x-message-ttl":1000},"messages":%d,"messages_ready":%d,"messages_unacknowledged":0,"consumers":1,"head_message_timestamp":1700000000,"durable":true,"message_stats":{"publish":%d,"publish_details":{"rate":99}}}`, q, 10*f.tick, 10*f.tick, 1000+10*f.tick))
		}
		fmt.Fprint(w, "["+strings.Join(rows, ",")+"]")
	case strings.HasPrefix(p, "/api/exchanges/"):
		f.hits["exchanges"]++
		fmt.Fprint(w, `[{"name":"dlx","type":"direct","arguments":{}}]`)
	case strings.HasPrefix(p, "/api/bindings/"):
		f.hits["bindings"]++
		fmt.Fprint(w, `[]`)
	case p == "/api/overview":
		v := f.version
		if v == "" {
			v = "4.3.6"
		}
		fmt.Fprintf(w, `{"rabbitmq_version":%q,"cluster_name":"c1","disable_stats":false}`, v)
	case p == "/metrics/detailed":
		f.hits["metrics"]++
		if f.promDown {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, `rabbitmq_identity_info{rabbitmq_node="n",rabbitmq_cluster="c1"} 1`)
		for _, q := range f.queues {
			n := 10 * f.tick
			fmt.Fprintf(w, "rabbitmq_detailed_queue_messages{vhost=\"v\",queue=%q} %d\n", q, n)
			fmt.Fprintf(w, "rabbitmq_detailed_queue_messages_ready{vhost=\"v\",queue=%q} %d\n", q, n)
			fmt.Fprintf(w, "rabbitmq_detailed_queue_messages_unacked{vhost=\"v\",queue=%q} 0\n", q)
			if !f.noConsumers {
				fmt.Fprintf(w, "rabbitmq_detailed_queue_consumers{vhost=\"v\",queue=%q} 1\n", q)
			}
			fmt.Fprintf(w, "rabbitmq_detailed_queue_exchange_messages_published_total{vhost=\"v\",queue=%q,exchange=\"\"} %d\n", q, 500+n)
		}
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeBroker) take() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hits
	f.hits = map[string]int{}
	return h
}

func (f *fakeBroker) set(fn func()) { f.mu.Lock(); fn(); f.mu.Unlock() }

func newFake(t *testing.T) (*fakeBroker, *Management) {
	f := &fakeBroker{queues: []string{"a", "b"}, hits: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	r, err := Config{AMQPURL: "amqp://guest:guest@127.0.0.1:1/", APIURL: srv.URL, PrometheusURL: srv.URL}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewManagement(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return f, m
}

func TestSteadyRefreshReadsOnlyPrometheus(t *testing.T) {
	f, m := newFake(t)
	ctx := context.Background()
	v, err := m.Vhost(ctx, "v")
	if err != nil || len(v.Queues) != 2 || v.RatesFrom != "management" {
		t.Fatalf("first read %+v %v", v, err)
	}
	if h := f.take(); h["queues"] != 1 || h["metrics"] != 0 {
		t.Fatalf("first read is a full read alone: %v", h)
	}
	f.set(func() { f.tick = 3 })
	v, err = m.Vhost(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	if h := f.take(); h["queues"] != 0 || h["exchanges"] != 0 || h["bindings"] != 0 || h["metrics"] != 1 {
		t.Fatalf("second read within the TTL: %v, want /metrics alone", h)
	}
	q := v.Queues[0]
	if q.Messages != 30 || q.Consumers != 1 || q.Arguments["x-message-ttl"] == nil || q.HeadMessageTimestamp.IsZero() || len(v.Exchanges) != 1 {
		t.Fatalf("overlay %+v", q)
	}
	// A new queue in Prometheus: a full read now.
	f.set(func() { f.queues = append(f.queues, "c") })
	if v, err = m.Vhost(ctx, "v"); err != nil || len(v.Queues) != 3 {
		t.Fatalf("after a new queue %d %v", len(v.Queues), err)
	}
	if h := f.take(); h["queues"] != 1 {
		t.Fatalf("a new queue name must make a full read: %v", h)
	}
	// VhostFresh always reads fully.
	if _, err := m.VhostFresh(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	if h := f.take(); h["queues"] != 1 || h["bindings"] != 1 {
		t.Fatalf("VhostFresh: %v", h)
	}
	// The TTL passed: a full read.
	m.mu.Lock()
	m.last.at = time.Now().Add(-topologyTTL)
	m.mu.Unlock()
	m.Vhost(ctx, "v")
	if h := f.take(); h["queues"] != 1 {
		t.Fatalf("after the TTL: %v", h)
	}
}

func TestSteadyRefreshFallsBackWhenPrometheusFails(t *testing.T) {
	f, m := newFake(t)
	ctx := context.Background()
	f.set(func() { f.promDown = true })
	for i := 0; i < 4; i++ {
		v, err := m.Vhost(ctx, "v")
		if err != nil || v.RatesFrom != "management" {
			t.Fatalf("read %d: %v %v", i, v.RatesFrom, err)
		}
	}
	h := f.take()
	if h["queues"] != 4 || h["metrics"] != 1 {
		t.Fatalf("Prometheus down: %v, want 4 full reads and one try of /metrics", h)
	}
	// A Prometheus of another cluster is no better.
	_, m2 := newFake(t)
	m2.Vhost(ctx, "v")
	m2.mu.Lock()
	m2.cluster = "other"
	m2.mu.Unlock()
	m2.Vhost(ctx, "v")
	m2.mu.Lock()
	down := !m2.promDownUntil.IsZero()
	m2.mu.Unlock()
	if !down {
		t.Fatal("another cluster's Prometheus must not be used")
	}
}

// Rates are Prometheus deltas from the third poll on, full read or not:
// 10 messages a tick, one tick a poll, no jump when a full read comes.
func TestSteadyRatesContinuousAcrossFullRead(t *testing.T) {
	f, m := newFake(t)
	ctx := context.Background()
	var froms []string
	for i := 0; i < 7; i++ {
		f.set(func() { f.tick = int64(i) })
		if i == 4 {
			m.mu.Lock()
			m.last.at = time.Now().Add(-topologyTTL) // full read now
			m.mu.Unlock()
		}
		m.mu.Lock()
		if !m.prevAt.IsZero() {
			// Each poll a second after the last, counted from now: the
			// test's own time between polls (slow on a busy machine) is
			// not part of the second.
			m.prevAt = time.Now().Add(-time.Second)
		}
		m.mu.Unlock()
		v, err := m.Vhost(ctx, "v")
		if err != nil {
			t.Fatal(err)
		}
		h := f.take()
		if (i == 0 || i == 4) != (h["queues"] == 1) {
			t.Fatalf("poll %d: %v", i, h)
		}
		froms = append(froms, v.RatesFrom)
		r := v.Queues[0].Rates
		switch {
		case i == 1:
			if !r.Known || r.Publish != 99 {
				t.Fatalf("poll 1: the full read's server rate, got %+v", r)
			}
		case i >= 2:
			// A jump would be the server's 99/s, 0 or a double count:
			// within 10% is continuous, whatever the read itself took.
			if !r.Known || math.Abs(r.Publish-10) > 1 || !r.NetKnown || math.Abs(r.Net-10) > 1 {
				t.Fatalf("poll %d: rates %+v, want 10/s", i, r)
			}
		}
	}
	want := "management management prometheus prometheus prometheus prometheus prometheus"
	if got := strings.Join(froms, " "); got != want {
		t.Fatalf("rates from %s\nwant %s", got, want)
	}
}

// On 3.x with stats on, Prometheus has no delivery counters: every poll
// stays a full read, so ack and redeliver rates stay the server's.
func TestSteadyRefreshNotOn3xWithStats(t *testing.T) {
	f, m := newFake(t)
	f.set(func() { f.version = "3.10.8" })
	ctx := context.Background()
	for i := range 3 {
		f.set(func() { f.tick = int64(i) })
		v, err := m.Vhost(ctx, "v")
		if err != nil || v.RatesFrom != "management" {
			t.Fatalf("poll %d: %v, rates from %q", i, err, v.RatesFrom)
		}
		if h := f.take(); h["queues"] != 1 || h["metrics"] != 0 {
			t.Fatalf("poll %d on 3.10: %v, want a full read and no /metrics", i, h)
		}
	}
}
