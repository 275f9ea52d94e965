package rabbit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/topology"
)

// queueColumns keeps each queue row small: only what ladder reads.
var queueColumns = strings.Join([]string{
	"name", "type", "arguments", "policy", "effective_policy_definition",
	"messages", "messages_ready", "messages_unacknowledged", "consumers",
	"head_message_timestamp", "messages_dlx", "durable", "exclusive", "message_bytes_ready",
	"message_stats.publish", "message_stats.publish_details.rate",
	"message_stats.deliver_get", "message_stats.deliver_get_details.rate",
	"message_stats.ack", "message_stats.ack_details.rate",
	"message_stats.redeliver", "message_stats.redeliver_details.rate",
	// What leaves for good without an ack (inflow from depth, see arrived).
	"message_stats.deliver_no_ack", "message_stats.get_no_ack",
	// Where it lives: a classic queue's node, a quorum queue's leader,
	// members and those online (in the listing: no request per queue).
	"node", "leader", "members", "online",
}, ",")

// Management reads a vhost through the management API and remembers the
// previous poll's counters, so rates exist even when the server has none.
type Management struct {
	r    *Resolved
	rh   *rabbithole.Client
	tr   *http.Transport
	http *http.Client

	mu      sync.Mutex
	prev    map[string]queueCounters
	prevAt  time.Time
	version string
	// noStats: the broker's management stats are off (overview's
	// disable_stats), so rates and consumers come from Prometheus;
	// statsKnown: noStats was found out (see statsOff).
	noStats, statsKnown bool

	// Bindings change rarely and cost the broker most after queues: they
	// are re-read when older than topologyTTL or when a queue or exchange
	// appeared or vanished.
	bindings   []topology.Binding
	bindingsAt time.Time
	bindingsOf string // vhost + names the cache was read for

	// Steady refresh (refresh.go): between full reads a poll reads only
	// Prometheus and lays its depths, consumers and counters over last.
	last *fullRead
	// prevProm: the previous poll's counters came from Prometheus (rates
	// are then Prometheus deltas on full reads too); promDownUntil: the
	// endpoint failed, full reads only until then; cluster: the
	// management API's cluster_name, which Prometheus must also report.
	prevProm      bool
	promDownUntil time.Time
	cluster       string

	// otherBroker, when set (a Live client sets it), says whether the
	// AMQP URL reaches another cluster than this API (ErrTwoBrokers).
	otherBroker func(context.Context) error
	// polls are the counters of the last polls, oldest first, the newest
	// being prev: what arrivals are derived over (see arrived).
	polls []pollCounters
}

// topologyTTL bounds how stale cached bindings may be (see
// TopologyTTL).
const topologyTTL = TopologyTTL

type queueCounters struct {
	publish, deliver, ack, redeliver, messages int64
	hasStats                                   bool
	outEstimated                               bool // deliver = publish − growth
	fromProm                                   bool // Prometheus' counters, not the API's
	// removed counts what consumers took for good: acknowledged, or
	// delivered or fetched without acknowledgement (removedKnown when the
	// broker said).
	removed      int64
	removedKnown bool
}

// NewManagement builds a management API reader for r.
func NewManagement(r *Resolved) (*Management, error) {
	rh, err := r.API()
	if err != nil {
		return nil, err
	}
	// One pool of connections for both, closed by Close.
	tr := r.transport()
	rh.SetTransport(r.apiAuth(tr))
	return &Management{r: r, rh: rh, tr: tr, http: &http.Client{Timeout: r.APITimeout, Transport: tr}}, nil
}

// Close closes the idle connections to the management API (the broker
// would close them after its keep-alive timeout).
func (m *Management) Close() { m.tr.CloseIdleConnections() }

// BrokerVersion returns the broker's version (cached after the first call).
// It asks the overview with disable_stats=true: the full overview sums the
// stats of every queue of every vhost (hundreds of ms on a busy broker),
// this one only reports the node. Whether stats are off is statsOff's.
func (m *Management) BrokerVersion(ctx context.Context) (string, error) {
	m.mu.Lock()
	v := m.version
	m.mu.Unlock()
	if v != "" {
		return v, nil
	}
	var ov struct {
		RabbitMQVersion string `json:"rabbitmq_version"`
		ClusterName     string `json:"cluster_name"`
	}
	q := url.Values{"disable_stats": {"true"}, "columns": {"rabbitmq_version,cluster_name"}}
	if err := m.getJSON(ctx, "overview", "overview", q, &ov); err != nil {
		return "", err
	}
	m.mu.Lock()
	if m.version == "" {
		m.version = ov.RabbitMQVersion
	}
	if m.cluster == "" {
		m.cluster = ov.ClusterName
	}
	m.mu.Unlock()
	return ov.RabbitMQVersion, nil
}

// statsOff tells whether the broker's management stats are off (the
// overview's disable_stats), so rates and consumers must come from
// Prometheus. A queue row with consumers proves them on without a request;
// only when none has them (stats off, or queues too new for their first
// stats) is the full overview asked, once per process.
func (m *Management) statsOff(ctx context.Context, queues []apiQueue) (bool, error) {
	m.mu.Lock()
	known, off := m.statsKnown, m.noStats
	m.mu.Unlock()
	if known {
		return off, nil
	}
	for _, q := range queues {
		if q.Consumers != nil {
			m.mu.Lock()
			m.statsKnown, m.noStats = true, false
			m.mu.Unlock()
			return false, nil
		}
	}
	if len(queues) == 0 {
		return false, nil // nothing to read stats of: ask when there is
	}
	var ov struct {
		RabbitMQVersion string `json:"rabbitmq_version"`
		DisableStats    bool   `json:"disable_stats"`
	}
	q := url.Values{"columns": {"rabbitmq_version,disable_stats"}}
	if err := m.getJSON(ctx, "overview", "overview", q, &ov); err != nil {
		return false, err
	}
	m.mu.Lock()
	m.statsKnown, m.noStats = true, ov.DisableStats
	if m.version == "" {
		m.version = ov.RabbitMQVersion
	}
	m.mu.Unlock()
	return ov.DisableStats, nil
}

// apiQueue is the subset of a queue row ladder asks for with columns=…,
// including the fields rabbit-hole's QueueInfo lacks.
type apiQueue struct {
	Name                      string         `json:"name"`
	Type                      string         `json:"type"`
	Arguments                 map[string]any `json:"arguments"`
	Policy                    string         `json:"policy"`
	EffectivePolicyDefinition map[string]any `json:"effective_policy_definition"`
	Messages                  int64          `json:"messages"`
	MessagesReady             int64          `json:"messages_ready"`
	MessagesUnacked           int64          `json:"messages_unacknowledged"`
	MessageBytesReady         int64          `json:"message_bytes_ready"`
	Consumers                 *int           `json:"consumers"` // absent when stats are off
	HeadMessageTimestamp      *float64       `json:"head_message_timestamp"`
	MessagesDLX               *int64         `json:"messages_dlx"`
	Durable                   *bool          `json:"durable"`
	Exclusive                 *bool          `json:"exclusive"`
	Node                      string         `json:"node"`
	Leader                    string         `json:"leader"`
	Members                   []string       `json:"members"`
	Online                    []string       `json:"online"`
	MessageStats              *struct {
		Publish          int64    `json:"publish"`
		PublishDetails   *apiRate `json:"publish_details"`
		DeliverGet       int64    `json:"deliver_get"`
		DeliverGetDetail *apiRate `json:"deliver_get_details"`
		DeliverNoAck     int64    `json:"deliver_no_ack"`
		GetNoAck         int64    `json:"get_no_ack"`
		Ack              int64    `json:"ack"`
		AckDetails       *apiRate `json:"ack_details"`
		Redeliver        int64    `json:"redeliver"`
		RedeliverDetails *apiRate `json:"redeliver_details"`
	} `json:"message_stats"`
}

type apiRate struct {
	Rate float64 `json:"rate"`
}

type apiExchange struct {
	Name            string         `json:"name"`
	Type            string         `json:"type"`
	Arguments       map[string]any `json:"arguments"`
	MessagesDelayed *int64         `json:"messages_delayed"`
}

// getJSON GETs an API path (already escaped) into out.
func (m *Management) getJSON(ctx context.Context, what, path string, q url.Values, out any) error {
	u := m.r.APIURL.String() + "/api/" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	user, pass, err := m.r.APILogin.Credentials(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	req.SetBasicAuth(user, pass)
	resp, err := m.http.Do(req)
	if err != nil {
		return m.r.APIError(what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		he := rabbithole.ErrorResponse{StatusCode: resp.StatusCode, Message: http.StatusText(resp.StatusCode), Reason: strings.TrimSpace(string(body))}
		if path == "overview" && resp.StatusCode == http.StatusNotFound {
			// Every management API has /api/overview.
			return m.r.notManagement(he, fmt.Sprintf("%d %s", he.StatusCode, he.Message))
		}
		return m.r.APIError(what, he)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if path == "overview" {
			return m.r.notManagement(err, "the answer is not JSON")
		}
		return fmt.Errorf("%s: decode %s: %w", what, m.r.RedactedAPI(), err)
	}
	return nil
}

// notManagement is the error for an API URL whose server is not a
// RabbitMQ management API (another web server, or a path prefix missing
// from --api-url): why is what GET /api/overview got.
func (r *Resolved) notManagement(cause error, why string) error {
	return connErr(broker.ErrNotAMQP, cause, "%s is not a RabbitMQ management API (GET /api/overview: %s)", r.RedactedAPI(), why)
}

// listQueues reads the vhost's queues with only ladder's columns, in one
// request: each page of a paged listing makes the broker list and sort the
// whole vhost again (four pages of 500 cost it more than one listing of
// 2,000, forty of 20,000 far more), and one big answer is fine here.
func (m *Management) listQueues(ctx context.Context, vhost string) ([]apiQueue, error) {
	var all []apiQueue
	q := url.Values{"columns": {queueColumns}}
	if err := m.getJSON(ctx, "list queues in vhost "+vhost, "queues/"+url.PathEscape(vhost), q, &all); err != nil {
		return nil, err
	}
	return all, nil
}

// listExchanges reads the vhost's exchanges with only ladder's columns.
func (m *Management) listExchanges(ctx context.Context, vhost string) ([]apiExchange, error) {
	var all []apiExchange
	q := url.Values{"columns": {"name,type,arguments,messages_delayed"}}
	if err := m.getJSON(ctx, "list exchanges in vhost "+vhost, "exchanges/"+url.PathEscape(vhost), q, &all); err != nil {
		return nil, err
	}
	return all, nil
}

// listBindings reads the vhost's bindings.
func (m *Management) listBindings(vhost string) ([]topology.Binding, error) {
	list, err := m.rh.ListBindingsIn(vhost)
	if err != nil {
		return nil, m.r.APIError("list bindings in vhost "+vhost, err)
	}
	out := make([]topology.Binding, 0, len(list))
	for _, b := range list {
		out = append(out, topology.Binding{
			Source: b.Source, Destination: b.Destination, DestinationType: b.DestinationType,
			RoutingKey: b.RoutingKey, Arguments: b.Arguments,
		})
	}
	return out, nil
}

// Vhost reads queues, exchanges and bindings of a vhost and adapts them to
// the retry engine's description. Each call is a poll for client-side
// rates; bindings may come from a cache (see topologyTTL).
func (m *Management) Vhost(ctx context.Context, vhost string) (topology.Vhost, error) {
	if v, ok, err := m.steady(ctx, vhost); ok || err != nil {
		return v, err
	}
	return m.read(ctx, vhost, false, true)
}

// VhostFresh is Vhost with bindings read now, for decisions that route
// messages (a move), and without touching the rate history.
func (m *Management) VhostFresh(ctx context.Context, vhost string) (topology.Vhost, error) {
	return m.read(ctx, vhost, true, false)
}

func (m *Management) read(ctx context.Context, vhost string, fresh, track bool) (topology.Vhost, error) {
	// Queues, exchanges and (when the cache cannot serve them) bindings are
	// independent requests: made at once, the wall time is the longest's.
	m.mu.Lock()
	readBindings := fresh || time.Since(m.bindingsAt) >= m.bindingsTTL()
	// After the first poll, a polled full read also reads Prometheus, so
	// rates stay Prometheus deltas across it (see refresh.go); not where
	// Prometheus has no counters (3.x), whose rates are the API's.
	promAlong := track && m.promUsable(time.Now()) && m.promCounters()
	m.mu.Unlock()
	var (
		wg               sync.WaitGroup
		queues           []apiQueue
		exchanges        []apiExchange
		bindings         []topology.Binding
		along            map[string]*promQueue
		qErr, eErr, bErr error
		alongErr         error
	)
	if promAlong {
		wg.Add(1)
		go func() { defer wg.Done(); along, alongErr = m.steadyProm(ctx, vhost) }()
	}
	wg.Add(2)
	go func() { defer wg.Done(); queues, qErr = m.listQueues(ctx, vhost) }()
	go func() { defer wg.Done(); exchanges, eErr = m.listExchanges(ctx, vhost) }()
	if readBindings {
		wg.Add(1)
		go func() { defer wg.Done(); bindings, bErr = m.listBindings(vhost) }()
	}
	wg.Wait()
	now := time.Now()
	// The first failure in the order they were once made in, told apart
	// from a missing vhost once.
	for _, err := range []error{qErr, eErr, bErr} {
		if err != nil {
			return topology.Vhost{}, m.vhostMissing(ctx, vhost, err)
		}
	}
	v := topology.Vhost{Name: vhost}
	var err error
	if v.Bindings, err = m.cachedBindings(ctx, vhost, queues, exchanges, bindings, readBindings, now); err != nil {
		return topology.Vhost{}, err
	}
	off, err := m.statsOff(ctx, queues)
	if err != nil {
		return topology.Vhost{}, err
	}
	var prom map[string]*promQueue
	var promErr error
	if promAlong {
		if alongErr != nil || (len(along) == 0 && len(queues) > 0) {
			m.promFailed(now)
		} else {
			prom = along
		}
	}
	if off && len(queues) > 0 && prom == nil {
		prom, promErr = m.prometheusQueues(ctx, vhost)
	}
	m.mu.Lock()
	promRates := prom != nil && (off || m.prevProm)
	m.mu.Unlock()
	switch {
	case promRates:
		v.RatesFrom = topology.RatesFromPrometheus
	case promErr != nil:
		v.RatesFrom = topology.RatesUnavailable
		v.RatesNote = promErr.Error()
	default:
		v.RatesFrom = topology.RatesFromManagement
	}

	m.mu.Lock()
	prev, prevAt := m.prev, m.prevAt
	next := make(map[string]queueCounters, len(queues))
	for _, aq := range queues {
		q, c := adaptQueue(aq)
		switch p := prom[aq.Name]; {
		case prom != nil && off:
			q, c = withPrometheus(q, c, p)
		case p != nil:
			// Stats on: depths and consumers stay the API's, the counters
			// are Prometheus', as on the steady refreshes around this read.
			_, c = withPrometheus(q, c, p)
			c.messages = q.Messages
		case promErr != nil && aq.Consumers == nil:
			q.ConsumersUnknown = true
		}
		if track {
			p, seen := prev[aq.Name] // a new queue has no history yet
			q.Rates = rates(serverRates(aq, c, p, seen), c, p, seen, now.Sub(prevAt))
			q.Rates.Arrived, q.Rates.ArrivedKnown = arrived(m.polls, aq.Name, c, now)
			next[aq.Name] = c
		} else {
			q.Rates = rates(aq, c, queueCounters{}, false, 0)
		}
		v.Queues = append(v.Queues, q)
	}
	if track {
		m.remember(next, now)
		m.prevProm = prom != nil
	}
	m.last = &fullRead{vhost: vhost, at: now, queues: queues, exchanges: exchanges, bindings: v.Bindings}
	m.mu.Unlock()

	v.Exchanges = adaptExchanges(exchanges)
	v.FullReadAt = now
	return v, nil
}

// cachedBindings returns the vhost's bindings: read (just read alongside
// queues and exchanges, when read is true), or from the cache while it is
// young and the set of queue and exchange names is unchanged.
func (m *Management) cachedBindings(ctx context.Context, vhost string, queues []apiQueue, exchanges []apiExchange, list []topology.Binding, read bool, now time.Time) ([]topology.Binding, error) {
	h := fnv.New64a()
	h.Write([]byte(vhost))
	for _, q := range queues {
		h.Write([]byte{0})
		h.Write([]byte(q.Name))
	}
	for _, e := range exchanges {
		h.Write([]byte{1})
		h.Write([]byte(e.Name))
	}
	key := strconv.FormatUint(h.Sum64(), 16)
	if !read {
		m.mu.Lock()
		if m.bindingsOf == key && now.Sub(m.bindingsAt) < m.bindingsTTL() {
			b := m.bindings
			m.mu.Unlock()
			return b, nil
		}
		m.mu.Unlock()
		var err error
		if list, err = m.listBindings(vhost); err != nil {
			return nil, m.vhostMissing(ctx, vhost, err)
		}
	}
	m.mu.Lock()
	m.bindings, m.bindingsAt, m.bindingsOf = list, now, key
	m.mu.Unlock()
	return list, nil
}

func adaptQueue(aq apiQueue) (topology.Queue, queueCounters) {
	typ := aq.Type
	if typ == "" {
		typ = topology.QueueClassic
	}
	q := topology.Queue{
		Name: aq.Name, Type: typ, Arguments: aq.Arguments, Policy: aq.EffectivePolicyDefinition,
		Messages: aq.Messages, Ready: aq.MessagesReady, Unacked: aq.MessagesUnacked, ReadyBytes: aq.MessageBytesReady,
	}
	if aq.Consumers != nil {
		q.Consumers = *aq.Consumers
	}
	if aq.HeadMessageTimestamp != nil && *aq.HeadMessageTimestamp > 0 {
		q.HeadMessageTimestamp = time.Unix(int64(*aq.HeadMessageTimestamp), 0)
	}
	if aq.MessagesDLX != nil {
		q.MessagesDLX = *aq.MessagesDLX
	}
	q.Transient = aq.Durable != nil && !*aq.Durable && (aq.Exclusive == nil || !*aq.Exclusive)
	q.Node, q.Members, q.Online = aq.Node, aq.Members, aq.Online
	if aq.Leader != "" {
		q.Node = aq.Leader
	}
	c := queueCounters{messages: aq.Messages}
	if s := aq.MessageStats; s != nil {
		c = queueCounters{publish: s.Publish, deliver: s.DeliverGet, ack: s.Ack, redeliver: s.Redeliver, messages: aq.Messages, hasStats: true,
			removed: s.Ack + s.DeliverNoAck + s.GetNoAck, removedKnown: true}
	} else if aq.Consumers != nil {
		// Stats are on (the row has consumers) and the queue has none:
		// nothing was ever delivered from it.
		c.removedKnown = true
	}
	return q, c
}

// withPrometheus fills what the management API left out: depths when it
// sent none, consumers, and the counters rates are taken from. Before 4.0
// Prometheus has no per-queue delivery counters: what left the queue is
// what came in less what it grew by (an estimate that counts expiry and
// dead-lettering as outflow, which for a wait queue it is).
func withPrometheus(q topology.Queue, c queueCounters, p *promQueue) (topology.Queue, queueCounters) {
	if p == nil {
		q.ConsumersUnknown = true
		return q, c
	}
	if p.hasDepth && q.Messages == 0 && q.Ready == 0 && q.Unacked == 0 {
		q.Messages, q.Ready, q.Unacked = p.messages, p.ready, p.unacked
	}
	if p.hasConsumers {
		q.Consumers, q.ConsumersUnknown = p.consumers, false
	} else {
		q.ConsumersUnknown = true
	}
	c = queueCounters{publish: p.published, deliver: p.delivered, ack: p.acked, redeliver: p.redeliv,
		messages: q.Messages, hasStats: true, outEstimated: !p.hasDelivery, fromProm: true,
		removed: p.acked + p.noAck, removedKnown: p.hasDelivery}
	return q, c
}

// rates prefers the server's smoothed rates and falls back to the deltas of
// its counters between two polls (stats lag or are off on busy brokers).
func rates(aq apiQueue, cur, prev queueCounters, havePrev bool, dt time.Duration) topology.Rates {
	var r topology.Rates
	if s := aq.MessageStats; s != nil && (s.PublishDetails != nil || s.DeliverGetDetail != nil || s.AckDetails != nil) {
		r.Known = true
		if s.PublishDetails != nil {
			r.Publish = s.PublishDetails.Rate
		}
		if s.DeliverGetDetail != nil {
			r.Deliver = s.DeliverGetDetail.Rate
		}
		if s.AckDetails != nil {
			r.Ack = s.AckDetails.Rate
		}
		if s.RedeliverDetails != nil {
			r.Redeliver = s.RedeliverDetails.Rate
		}
	}
	if !havePrev || dt <= 0 {
		return r
	}
	secs := dt.Seconds()
	r.Net = float64(cur.messages-prev.messages) / secs
	r.NetKnown = true
	if !r.Known && cur.hasStats && prev.hasStats && cur.fromProm == prev.fromProm {
		r.Known = true
		r.Publish = perSec(cur.publish-prev.publish, secs)
		r.Deliver = perSec(cur.deliver-prev.deliver, secs)
		r.Ack = perSec(cur.ack-prev.ack, secs)
		r.Redeliver = perSec(cur.redeliver-prev.redeliver, secs)
		if cur.outEstimated {
			r.Deliver = perSec(cur.publish-prev.publish-(cur.messages-prev.messages), secs)
			r.Ack, r.Redeliver = 0, 0
		}
	}
	return r
}

// perSec ignores counter resets (a restarted node starts from zero).
func perSec(delta int64, secs float64) float64 {
	if delta < 0 {
		return 0
	}
	return float64(delta) / secs
}

// Queue reads one queue (no paging, the same columns as a snapshot).
func (m *Management) Queue(ctx context.Context, vhost, name string) (topology.Queue, error) {
	var aq apiQueue
	q := url.Values{"columns": {queueColumns}}
	err := m.getJSON(ctx, fmt.Sprintf("queue %q in vhost %s", name, vhost), "queues/"+url.PathEscape(vhost)+"/"+url.PathEscape(name), q, &aq)
	if err != nil {
		var ce *broker.ConnError
		if verr := m.vhostMissing(ctx, vhost, err); errors.As(verr, &ce) {
			return topology.Queue{}, verr // the vhost is missing, or no management API answered
		}
		if isNotFound(err) {
			return topology.Queue{}, fmt.Errorf("queue %q in vhost %s: %w", name, vhost, broker.ErrNotFound)
		}
		return topology.Queue{}, err
	}
	out, _ := adaptQueue(aq)
	if aq.Consumers == nil {
		off, err := m.statsOff(ctx, []apiQueue{aq})
		if err != nil {
			return topology.Queue{}, err
		}
		out.ConsumersUnknown = off
	}
	return out, nil
}

// isNotFound is true for a management API 404.
func isNotFound(err error) bool {
	var he rabbithole.ErrorResponse
	return errors.As(err, &he) && he.StatusCode == http.StatusNotFound
}

// vhostMissing tells a missing vhost from a missing queue or exchange: the
// API answers 404 for both. A 404 from a vhost's path becomes "vhost X not
// found" only when the management API says so: GET /api/vhosts/X is a 404
// with its JSON error body, and /api/overview answers. Any web server
// answers 404 too (a path prefix missing from --api-url, another
// service): that is told as not being a management API. Anything else is
// err.
func (m *Management) vhostMissing(ctx context.Context, vhost string, err error) error {
	if !isNotFound(err) {
		return err
	}
	var v struct {
		Name string `json:"name"`
	}
	verr := m.getJSON(ctx, "vhost "+vhost, "vhosts/"+url.PathEscape(vhost), url.Values{"columns": {"name"}}, &v)
	if !isNotFound(verr) {
		return err
	}
	version, oerr := m.BrokerVersion(ctx)
	if oerr != nil {
		return oerr
	}
	if !isAPINotFound(verr) {
		return err
	}
	if m.otherBroker != nil {
		// A vhost the API does not know may be on the AMQP URL's broker.
		if serr := m.otherBroker(ctx); serr != nil {
			return serr
		}
	}
	r := *m.r
	r.Vhost = vhost
	return r.vhostNotFound(err, m.r.APIURL.Host+" (management API, RabbitMQ "+version+")")
}

// isAPINotFound is true for a 404 in the management API's own words, a
// JSON body {"error":"Object Not Found",…}, not a web server's page.
func isAPINotFound(err error) bool {
	var he rabbithole.ErrorResponse
	if !errors.As(err, &he) || he.StatusCode != http.StatusNotFound {
		return false
	}
	var body struct {
		Error string `json:"error"`
	}
	return json.Unmarshal([]byte(he.Reason), &body) == nil && body.Error != ""
}

// Vhosts lists the virtual hosts visible to the user.
func (m *Management) Vhosts(ctx context.Context) ([]string, error) {
	var vs []struct {
		Name string `json:"name"`
	}
	if err := m.getJSON(ctx, "list vhosts", "vhosts", url.Values{"columns": {"name"}}, &vs); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out, nil
}
