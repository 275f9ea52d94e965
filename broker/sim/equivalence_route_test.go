package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// The one planner, on topologies other than the Go seed's: where origin
// is one queue among several a route reaches (Spring's consumer groups),
// CC headers, length-limited targets and ladder's quorum wait queues. Each
// case is declared and filled the same way on the simulation and on the
// live broker (a vhost of its own); both must plan alike, move alike and
// leave the same messages in every queue.

type eqQueue struct {
	name string
	args map[string]any
}

// eqMessage is published to exchange with key, then (reject) taken from
// that queue and nacked without requeue, every other queue it reached
// having its copy acked (the other consumer groups did their work).
type eqMessage struct {
	id, exchange, key string
	headers           retry.Headers
	reject            string
	body              string
	// into is the queue it ends up in (waited for on the live broker, so
	// the next one lands behind it).
	into string
}

type eqCase struct {
	name      string
	exchanges []topology.Exchange
	queues    []eqQueue
	bindings  []topology.Binding
	messages  []eqMessage
	req       broker.MoveRequest
	// wantVia per planned message ("" = skipped); wantReaches per moving one.
	wantVia     []topology.Via
	wantReaches [][]string
	// wantDepths after the move (and the delay, if any), by queue.
	wantDepths map[string]int
}

// springDeclare is what Spring Cloud Stream's RabbitMQ binder declares for
// destination orders with groups billing and audit (see
// retry.springGroups): a topic exchange, group queues bound with "#",
// dead-lettering through the direct exchange DLX by queue name.
func springDeclare() ([]topology.Exchange, []eqQueue, []topology.Binding) {
	xs := []topology.Exchange{{Name: "orders", Type: topology.ExchangeTopic}, {Name: "DLX", Type: topology.ExchangeDirect}}
	var qs []eqQueue
	var bs []topology.Binding
	for _, g := range []string{"billing", "audit"} {
		q := "orders." + g
		qs = append(qs, eqQueue{q, map[string]any{"x-dead-letter-exchange": "DLX", "x-dead-letter-routing-key": q}}, eqQueue{q + ".dlq", nil})
		bs = append(bs, topology.Binding{Source: "orders", Destination: q, DestinationType: "queue", RoutingKey: "#"},
			topology.Binding{Source: "DLX", Destination: q + ".dlq", DestinationType: "queue", RoutingKey: q})
	}
	return xs, qs, bs
}

// springFailures: one message rejected by the audit consumer (x-death),
// one republished by Spring to the DLX (no x-death, x-original-*).
func springFailures() []eqMessage {
	return []eqMessage{
		{id: "rejected", exchange: "orders", key: "orders", reject: "orders.audit", into: "orders.audit.dlq"},
		{id: "republished", exchange: "DLX", key: "orders.audit", into: "orders.audit.dlq", headers: retry.Headers{
			"x-original-exchange": "orders", "x-original-routingKey": "orders", "x-exception-message": "boom"}},
	}
}

func routeCases() []eqCase {
	xs, qs, bs := springDeclare()
	origin := moveplan.Target{Kind: moveplan.TargetOrigin}
	d, q := topology.ViaDirect, topology.ViaDelayQueue
	audit := []string{"orders.audit"}
	ccX := []topology.Exchange{{Name: "x", Type: topology.ExchangeDirect}}
	ccQ := []eqQueue{{"a", nil}, {"b", nil}, {"src", nil}}
	ccB := []topology.Binding{{Source: "x", Destination: "a", DestinationType: "queue", RoutingKey: "ka"}, {Source: "x", Destination: "b", DestinationType: "queue", RoutingKey: "kb"}}
	four := func(h retry.Headers) []eqMessage {
		var out []eqMessage
		for i := range 4 {
			out = append(out, eqMessage{id: fmt.Sprintf("m%d", i), key: "src", headers: h, body: strings.Repeat("x", 10)})
		}
		return out
	}
	return []eqCase{
		{name: "spring origin: the audit group only", exchanges: xs, queues: qs, bindings: bs, messages: springFailures(),
			req:     broker.MoveRequest{From: "orders.audit.dlq", To: origin},
			wantVia: []topology.Via{d, d}, wantReaches: [][]string{audit, audit},
			wantDepths: map[string]int{"orders.audit": 2, "orders.billing": 0, "orders.audit.dlq": 0, "orders.billing.dlq": 0}},
		{name: "spring origin after a delay: a quorum wait queue into the audit group only", exchanges: xs, queues: qs, bindings: bs, messages: springFailures(),
			req:     broker.MoveRequest{From: "orders.audit.dlq", To: origin, Delay: time.Second},
			wantVia: []topology.Via{q, q}, wantReaches: [][]string{audit, audit},
			wantDepths: map[string]int{"orders.audit": 2, "orders.billing": 0, "orders.audit.dlq": 0}},
		{name: "a CC header routes as the broker does", exchanges: ccX, queues: ccQ, bindings: ccB,
			messages: []eqMessage{{id: "cc", key: "src", headers: retry.Headers{"CC": []any{"kb"}}}},
			req:      broker.MoveRequest{From: "src", To: moveplan.Target{Kind: moveplan.TargetExchange, Name: "x", RoutingKey: "ka", HasKey: true}},
			wantVia:  []topology.Via{d}, wantReaches: [][]string{{"a", "b"}}, wantDepths: map[string]int{"a": 1, "b": 1, "src": 0}},
		{name: "a drop-head target with room for 2 of 4: the move stops", queues: []eqQueue{{"src", nil}, {"t", map[string]any{"x-max-length": int32(2)}}},
			messages: four(nil), req: broker.MoveRequest{From: "src", To: moveplan.Target{Kind: moveplan.TargetQueue, Name: "t"}},
			wantVia: []topology.Via{d, d, "", ""}, wantReaches: [][]string{{"t"}, {"t"}}, wantDepths: map[string]int{"t": 2, "src": 2}},
		{name: "a bytes-limited target with room for 3 of 4", queues: []eqQueue{{"src", nil}, {"t", map[string]any{"x-max-length-bytes": int32(35)}}},
			messages: four(nil), req: broker.MoveRequest{From: "src", To: moveplan.Target{Kind: moveplan.TargetQueue, Name: "t"}},
			wantVia: []topology.Via{d, d, d, ""}, wantReaches: [][]string{{"t"}, {"t"}, {"t"}}, wantDepths: map[string]int{"t": 3, "src": 1}},
		{name: "a reject-publish target refuses what does not fit: it stays", queues: []eqQueue{{"src", nil}, {"t", map[string]any{"x-max-length": int32(2), "x-overflow": "reject-publish"}}},
			messages: four(nil), req: broker.MoveRequest{From: "src", To: moveplan.Target{Kind: moveplan.TargetQueue, Name: "t"}},
			wantVia: []topology.Via{d, d, d, d}, wantReaches: [][]string{{"t"}, {"t"}, {"t"}, {"t"}}, wantDepths: map[string]int{"t": 2, "src": 2}},
	}
}

func TestOnePlannerAgreesOnOriginsCCAndLimits(t *testing.T) {
	brokertest.Require(t)
	for _, c := range routeCases() {
		t.Run(c.name, func(t *testing.T) {
			l, r := routeLive(t, c)
			s := routeSim(t, c, brokerVersion(t, l))
			dry := c.req
			dry.DryRun = true
			simPlan, err := s.Move(context.Background(), dry, nil)
			if err != nil {
				t.Fatalf("sim dry run: %v", err)
			}
			livePlan, err := l.Move(context.Background(), dry, nil)
			if err != nil {
				t.Fatalf("live dry run: %v", err)
			}
			if len(simPlan.Planned) != len(c.wantVia) {
				t.Fatalf("sim planned %d, want %d: %+v", len(simPlan.Planned), len(c.wantVia), simPlan.Planned)
			}
			k := 0
			for i, p := range simPlan.Planned {
				if p.Via != c.wantVia[i] {
					t.Errorf("#%d %s: via %q (%s), want %q", p.Position, p.MessageID, p.Via, p.Skip, c.wantVia[i])
				}
				if p.Moves() {
					if !slices.Equal(p.Reaches, c.wantReaches[k]) {
						t.Errorf("#%d %s: reaches %v, want %v", p.Position, p.MessageID, p.Reaches, c.wantReaches[k])
					}
					k++
				}
			}
			comparePlans(t, simPlan.Planned, livePlan.Planned)
			if !slices.Equal(simPlan.Notes, withoutBrowseNote(livePlan.Notes)) {
				t.Errorf("notes differ:\n sim  %q\n live %q", simPlan.Notes, livePlan.Notes)
			}

			run := c.req
			run.Expect = simPlan.Planned
			simRep, simErr := s.Move(context.Background(), run, nil)
			run.Expect = livePlan.Planned
			liveRep, liveErr := l.Move(context.Background(), run, nil)
			if (simErr != nil) != (liveErr != nil) || (simErr != nil && (!errors.Is(simErr, broker.ErrPartial) || !errors.Is(liveErr, broker.ErrPartial))) {
				t.Fatalf("move: sim %v, live %v", simErr, liveErr)
			}
			if simRep.Moved != liveRep.Moved || simRep.Skipped != liveRep.Skipped || simRep.Returned != liveRep.Returned || simRep.Failed != liveRep.Failed || simRep.DuplicatesPossible != liveRep.DuplicatesPossible {
				t.Errorf("reports differ: sim %+v; live %+v", simRep, liveRep)
			}
			if c.req.Delay > 0 {
				s.Advance(c.req.Delay + time.Second)
			}
			for name, want := range c.wantDepths {
				if got := simDepth(s, name); got != want {
					t.Errorf("sim: %s holds %d, want %d", name, got, want)
				}
				deadline := time.Now().Add(c.req.Delay + 30*time.Second)
				got := liveDepth(t, r, name)
				for got != want && time.Now().Before(deadline) {
					time.Sleep(100 * time.Millisecond)
					got = liveDepth(t, r, name)
				}
				if got != want {
					t.Errorf("live: %s holds %d, want %d", name, got, want)
				}
			}
		})
	}
}

func withoutBrowseNote(notes []string) []string {
	return slices.DeleteFunc(slices.Clone(notes), func(n string) bool { return strings.HasPrefix(n, "dry run: nothing was published") })
}

// routeSim declares the case on a quiet simulation of the live broker's
// version, bare (no demo topology), and fills it.
func routeSim(t *testing.T, c eqCase, version string) *Sim {
	t.Helper()
	s := New(Options{Seed: 1, Now: fixedClock, Quiet: true, BrokerVersion: version})
	t.Cleanup(func() { s.Close() })
	s.mu.Lock()
	s.queues, s.byName, s.exchanges, s.bindings, s.topo = nil, map[string]*queue{}, nil, nil, nil
	for _, x := range c.exchanges {
		s.declareExchange(x.Name, x.Type, x.Arguments)
	}
	for _, q := range c.queues {
		if err := s.declareQueue(q.name, q.args); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range c.bindings {
		s.bind(b.Source, b.Destination, b.RoutingKey, b.Arguments)
	}
	s.mu.Unlock()
	for _, m := range c.messages {
		s.testPublishBody(t, m.exchange, m.key, m.id, m.headers, m.body)
		if m.reject == "" {
			continue
		}
		s.mu.Lock()
		for _, q := range s.queues {
			if q.name != m.reject && len(q.ready) > 0 && q.ready[len(q.ready)-1].props.MessageID == m.id {
				q.ready = q.ready[:len(q.ready)-1] // its consumer acked its copy
			}
		}
		s.mu.Unlock()
		s.testReject(t, m.reject)
	}
	return s
}

func (s *Sim) testPublishBody(t *testing.T, exchange, key, id string, h retry.Headers, body string) {
	t.Helper()
	if body == "" {
		body = `{"id":"` + id + `"}`
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.now.Truncate(time.Second)
	p := broker.Properties{MessageID: id, Timestamp: &ts, ContentType: "application/json", DeliveryMode: 2}
	if _, err := s.publish(exchange, key, p, h.Clone(), []byte(body)); err != nil {
		t.Fatal(err)
	}
}

// routeLive declares the case in a vhost of the test's own and fills it the
// same way.
func routeLive(t *testing.T, c eqCase) (*rabbit.Live, *rabbit.Resolved) {
	t.Helper()
	r := brokertest.OwnVhost(t)
	conn, err := r.DialAMQP(context.Background(), "test route equivalence")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for _, x := range c.exchanges {
		if err := ch.ExchangeDeclare(x.Name, x.Type, true, false, false, false, amqp.Table(x.Arguments)); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range c.queues {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, amqp.Table(q.args)); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range c.bindings {
		if err := ch.QueueBind(b.Destination, b.RoutingKey, b.Source, false, amqp.Table(b.Arguments)); err != nil {
			t.Fatal(err)
		}
	}
	landed := map[string]int{}
	for _, m := range c.messages {
		body := m.body
		if body == "" {
			body = `{"id":"` + m.id + `"}`
		}
		p := amqp.Publishing{MessageId: m.id, ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: []byte(body), Headers: amqp.Table(m.headers.Clone()), Timestamp: t0}
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), m.exchange, m.key, false, false, p)
		if err != nil || !dc.Wait() {
			t.Fatalf("publish %s: %v", m.id, err)
		}
		if m.reject != "" {
			ackOthers(t, ch, c, m)
			rejectLive(t, ch, r, m.reject)
		}
		if m.into != "" {
			landed[m.into]++
			waitLiveDepth(t, r, m.into, landed[m.into])
		}
	}
	l, err := rabbit.NewLive(r, "test route equivalence")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, r
}

// ackOthers is the other consumer groups taking their copy of m.
func ackOthers(t *testing.T, ch *amqp.Channel, c eqCase, m eqMessage) {
	t.Helper()
	for _, q := range c.queues {
		if q.name == m.reject {
			continue
		}
		if d, ok, err := ch.Get(q.name, false); err == nil && ok {
			if d.MessageId == m.id {
				_ = d.Ack(false)
			} else {
				_ = d.Nack(false, true)
			}
		}
	}
}
