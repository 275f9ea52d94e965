package rabbit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ladder-tui/ladder/broker"
)

// Prometheus families ladder reads from /metrics/detailed when the
// management API has no message stats. queue_delivery_metrics exists from
// RabbitMQ 4.0; on 3.x the outflow is estimated from depth and inflow.
var promFamilies = []string{
	"queue_coarse_metrics",   // depths
	"queue_consumer_count",   // consumers (absent from the API without stats)
	"queue_exchange_metrics", // published into each queue, per exchange
	"queue_delivery_metrics", // delivered, acked, redelivered (4.0+)
}

// promQueue is one queue's counters and gauges as Prometheus reports them.
type promQueue struct {
	messages, ready, unacked  int64
	hasDepth                  bool
	consumers                 int
	hasConsumers              bool
	published                 int64
	delivered, acked, redeliv int64
	// noAck: delivered or fetched without acknowledgement, gone for good.
	noAck       int64
	hasDelivery bool
}

// promSample is one line of the text exposition format.
type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

// parsePromLine parses `name{k="v",…} value [timestamp]`; comments, blank
// and malformed lines give ok=false (an exporter's odd line never stops a
// refresh).
func parsePromLine(line string) (s promSample, ok bool) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return s, false
	}
	i := strings.IndexAny(line, "{ \t")
	if i <= 0 {
		return s, false
	}
	s.name = line[:i]
	rest := line[i:]
	if rest[0] == '{' {
		labels, n, ok := parsePromLabels(rest[1:])
		if !ok {
			return s, false
		}
		s.labels = labels
		rest = rest[1+n:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || len(fields) > 2 {
		return s, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, false
	}
	s.value = v
	return s, true
}

// parsePromLabels reads `k="v",…}` and returns how many bytes it used,
// the closing brace included. Values unescape \\, \" and \n.
func parsePromLabels(s string) (map[string]string, int, bool) {
	labels := map[string]string{}
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == ',') {
			i++
		}
		if i < len(s) && s[i] == '}' {
			return labels, i + 1, true
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq <= 0 || i+eq+1 >= len(s) || s[i+eq+1] != '"' {
			return nil, 0, false
		}
		key := strings.TrimSpace(s[i : i+eq])
		i += eq + 2
		var b strings.Builder
		for {
			if i >= len(s) {
				return nil, 0, false
			}
			c := s[i]
			if c == '"' {
				i++
				break
			}
			if c == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(s[i])
				}
				i++
				continue
			}
			b.WriteByte(c)
			i++
		}
		labels[key] = b.String()
	}
}

// readPromQueues folds the samples of one vhost into per-queue values.
func readPromQueues(r io.Reader, vhost string) (map[string]*promQueue, error) {
	out, _, err := readPromScrape(r, vhost)
	return out, err
}

// readPromScrape is readPromQueues that also returns the cluster name of
// rabbitmq_identity_info ("" when absent).
func readPromScrape(r io.Reader, vhost string) (map[string]*promQueue, string, error) {
	out := map[string]*promQueue{}
	var cluster string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		s, ok := parsePromLine(sc.Text())
		if ok && s.name == "rabbitmq_identity_info" {
			cluster = s.labels["rabbitmq_cluster"]
			continue
		}
		if !ok || !strings.HasPrefix(s.name, "rabbitmq_detailed_queue_") {
			continue
		}
		name, ok := s.labels["queue"]
		if !ok || s.labels["vhost"] != vhost {
			continue
		}
		q := out[name]
		if q == nil {
			q = &promQueue{}
			out[name] = q
		}
		v := int64(s.value)
		switch strings.TrimPrefix(s.name, "rabbitmq_detailed_queue_") {
		case "messages":
			q.messages, q.hasDepth = v, true
		case "messages_ready":
			q.ready = v
		case "messages_unacked":
			q.unacked = v
		case "consumers":
			q.consumers, q.hasConsumers = int(v), true
		case "exchange_messages_published_total":
			q.published += v // one sample per exchange that routed here
		case "messages_delivered_total", "get_total": // automatic acknowledgement
			q.delivered += v
			q.noAck += v
			q.hasDelivery = true
		case "messages_delivered_ack_total", "get_ack_total":
			q.delivered += v
			q.hasDelivery = true
		case "messages_acked_total":
			q.acked += v
			q.hasDelivery = true
		case "messages_redelivered_total":
			q.redeliv += v
			q.hasDelivery = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, "", err
	}
	return out, cluster, nil
}

// prometheusQueues reads one vhost's queues from the Prometheus endpoint.
func (m *Management) prometheusQueues(ctx context.Context, vhost string) (map[string]*promQueue, error) {
	out, _, err := m.prometheusScrape(ctx, vhost)
	return out, err
}

// prometheusScrape is prometheusQueues that also returns the cluster name
// the endpoint reports.
func (m *Management) prometheusScrape(ctx context.Context, vhost string) (map[string]*promQueue, string, error) {
	pu := m.r.PrometheusURL
	if pu == nil {
		return nil, "", fmt.Errorf("no Prometheus URL")
	}
	q := url.Values{"vhost": {vhost}, "family": promFamilies}
	u := strings.TrimSuffix(pu.String(), "/") + "/metrics/detailed?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", fmt.Errorf("prometheus %s: %w", m.r.RedactedPrometheus(), err)
	}
	if m.r.PrometheusLogin != nil {
		user, pass, err := m.r.PrometheusLogin.Credentials(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("prometheus %s: %w", m.r.RedactedPrometheus(), err)
		}
		req.SetBasicAuth(user, pass)
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return nil, "", m.r.prometheusError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", connErr(nil, nil, "prometheus at %s answered %d %s (--prometheus-url)", pu.Host, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	out, cluster, err := readPromScrape(io.LimitReader(resp.Body, 256<<20), vhost)
	if err != nil {
		return nil, "", fmt.Errorf("prometheus %s: %w", m.r.RedactedPrometheus(), err)
	}
	return out, cluster, nil
}

// prometheusError words a failed scrape the way APIError words the
// management API's: the host:port and the cause, never Go's "Get
// \"…/metrics/detailed?vhost=…&family=…\": dial tcp …" text.
func (r *Resolved) prometheusError(err error) error {
	err = r.redact(err)
	host := r.PrometheusURL.Host
	if cause, ok := r.tlsCause(err); ok {
		return connErr(broker.ErrTLS, err, "TLS to Prometheus at %s failed: %s", host, cause)
	}
	if strings.Contains(err.Error(), "malformed HTTP response") {
		return connErr(nil, err, "prometheus at %s does not speak HTTP (--prometheus-url)", host)
	}
	if cause, ok := netCause(err, r.PrometheusURL.Hostname()); ok {
		return connErr(nil, err, "prometheus at %s unreachable: %s (--prometheus-url)", host, cause)
	}
	cause := err
	var ue *url.Error
	if errors.As(err, &ue) {
		cause = r.redact(ue.Err) // its text repeats the URL with the query
	}
	return connErr(nil, err, "prometheus at %s: %s (--prometheus-url)", host, cause)
}
