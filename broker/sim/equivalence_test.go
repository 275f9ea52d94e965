package sim

import (
	"context"
	"errors"
	"reflect"
	"regexp"
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

// The one planner, proven: every scenario runs through the simulation and
// through the live broker (a vhost of its own, the Go seed's ladder as
// `demo --real` declares it), with the same four DLQ messages:
//
//	m0  died in orders.process, no routing header          (key orders.created)
//	m1  waited in orders.wait.5s (retry-tier=…5s), died     (key orders.paid)
//	m2  carries the 5m tier's header retry-tier=…5m, died   (key orders.created)
//	m3  published straight into the DLQ: no origin
//
// Both must plan every message alike in the dry run, move as planned, and
// leave the same number of messages in every queue.

type scenario struct {
	name    string
	req     broker.MoveRequest
	delayed bool // add a delayed-message exchange (a fake on the live broker)
	// want, per message position, the via it must take ("" = skipped).
	want []topology.Via
}

func scenarios() []scenario {
	origin := moveplan.Target{Kind: moveplan.TargetOrigin}
	main := moveplan.Target{Kind: moveplan.TargetQueue, Name: OrdersMain}
	const skip = topology.Via("")
	d, t, q, x := topology.ViaDirect, topology.ViaTier, topology.ViaDelayQueue, topology.ViaDelayedExchange
	return []scenario{
		{name: "origin now", req: broker.MoveRequest{To: origin}, want: []topology.Via{d, d, d, skip}},
		{name: "origin via the 5s tier, whatever tier header each carries", req: broker.MoveRequest{To: origin, Delay: 5 * time.Second}, want: []topology.Via{t, t, t, skip}},
		{name: "origin after 7s: no tier, a ladder delay queue", req: broker.MoveRequest{To: origin, Delay: 7 * time.Second}, want: []topology.Via{q, q, q, skip}},
		{name: "origin after 7s through a delayed exchange", req: broker.MoveRequest{To: origin, Delay: 7 * time.Second}, delayed: true, want: []topology.Via{x, x, x, skip}},
		{name: "queue now", req: broker.MoveRequest{To: main}, want: []topology.Via{d, d, d, d}},
		{name: "queue after 30s: the tier returns elsewhere", req: broker.MoveRequest{To: main, Delay: 30 * time.Second}, want: []topology.Via{q, q, q, q}},
		{name: "exchange without key keeps each key", req: broker.MoveRequest{To: moveplan.Target{Kind: moveplan.TargetExchange, Name: OrdersExchange}}, want: []topology.Via{d, d, d, d}},
		{name: "exchange with key after 5s", req: broker.MoveRequest{To: moveplan.Target{Kind: moveplan.TargetExchange, Name: OrdersExchange, RoutingKey: "orders.created", HasKey: true}, Delay: 5 * time.Second}, want: []topology.Via{t, t, t, t}},
		{name: "exchange with a key that routes nowhere", req: broker.MoveRequest{To: moveplan.Target{Kind: moveplan.TargetExchange, Name: OrdersExchange, RoutingKey: "nothing.here", HasKey: true}}, want: []topology.Via{skip, skip, skip, skip}},
		{name: "reset retries", req: broker.MoveRequest{To: main, ResetRetries: true}, want: []topology.Via{d, d, d, d}},
		{name: "picked by identity, each with its own delay (unblock)", req: broker.MoveRequest{To: origin, Pick: []moveplan.Pick{
			// Due on the simulation's clock (onLiveClock moves it to the
			// broker's); a pick waits in a ladder delay queue, never a tier.
			{Position: 1, MessageID: "m1", BodyDigest: moveplan.BodyDigest([]byte(`{"id":"m1"}`)), Timestamp: t0, Delay: 5 * time.Second, DueAt: t0.Add(5 * time.Second)},
			{Position: 2, MessageID: "m2", BodyDigest: moveplan.BodyDigest([]byte(`{"id":"m2"}`)), Timestamp: t0, Delay: 7 * time.Second, DueAt: t0.Add(7 * time.Second)},
		}}, want: []topology.Via{q, q}},
		// A pick carries its exact remaining delay as its expiration, which
		// a delayed exchange would carry on into the target: a wait queue.
		{name: "picked, with a delayed exchange there (unblock)", req: broker.MoveRequest{To: origin, Pick: []moveplan.Pick{
			{Position: 2, MessageID: "m2", BodyDigest: moveplan.BodyDigest([]byte(`{"id":"m2"}`)), Timestamp: t0, Delay: 7 * time.Second, DueAt: t0.Add(7 * time.Second)},
		}}, delayed: true, want: []topology.Via{q}},
		{name: "positions with the ids shown", req: broker.MoveRequest{To: main, Positions: []int{1, 2}, PositionIDs: []string{"m1", "not-m2"}}, want: []topology.Via{d, skip}},
	}
}

func TestOnePlannerSimulationAndLiveBrokerAgree(t *testing.T) {
	brokertest.Require(t)
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			sc.req.From = OrdersDLQ
			l, r := equivLive(t, sc.delayed)
			version := brokerVersion(t, l)
			s := equivSim(t, sc.delayed, version)
			if sc.delayed && topology.DelayedExchangesGone(version) {
				// 4.3 has no delayed-message exchange: both sides wait in a
				// ladder delay queue instead.
				sc.want = slices.Clone(sc.want)
				for i, v := range sc.want {
					if v == topology.ViaDelayedExchange {
						sc.want[i] = topology.ViaDelayQueue
					}
				}
			}

			dry := sc.req
			dry.DryRun = true
			simPlan, err := s.Move(context.Background(), dry, nil)
			if err != nil {
				t.Fatalf("sim dry run: %v", err)
			}
			livePlan, err := l.Move(context.Background(), onLiveClock(dry), nil)
			if err != nil {
				t.Fatalf("live dry run: %v", err)
			}
			if len(simPlan.Planned) != len(sc.want) {
				t.Fatalf("sim planned %d messages, want %d", len(simPlan.Planned), len(sc.want))
			}
			for i, p := range simPlan.Planned {
				if p.Via != sc.want[i] {
					t.Errorf("#%d %s: via %q (%s), want %q", p.Position, p.MessageID, p.Via, p.Skip, sc.want[i])
				}
			}
			comparePlans(t, simPlan.Planned, livePlan.Planned)
			for _, p := range livePlan.Planned {
				t.Logf("#%d %s: via %q %s → %s/%s published to %q/%q set %v %s", p.Position, p.MessageID, p.Via, p.Queue, p.TargetExchange, p.TargetRoutingKey, p.Exchange, p.RoutingKey, p.SetHeaders, p.Skip)
			}
			if !reflect.DeepEqual(untimedRoutes(simPlan.Routes), untimedRoutes(livePlan.Routes)) || !reflect.DeepEqual(simPlan.Via, livePlan.Via) {
				t.Errorf("route counts differ: sim %v %v, live %v %v", simPlan.Via, simPlan.Routes, livePlan.Via, livePlan.Routes)
			}

			// The real move runs the confirmed plan, on both.
			run := sc.req
			run.Expect = simPlan.Planned
			simRep, simErr := s.Move(context.Background(), run, nil)
			run.Expect = livePlan.Planned
			liveRep, liveErr := l.Move(context.Background(), onLiveClock(run), nil)
			// Both say the same when messages stayed: a partial move.
			if (simErr != nil) != (liveErr != nil) || (simErr != nil && (!errors.Is(simErr, broker.ErrPartial) || !errors.Is(liveErr, broker.ErrPartial))) {
				t.Fatalf("move: sim %v, live %v", simErr, liveErr)
			}
			if simRep.Moved != liveRep.Moved || simRep.Skipped != liveRep.Skipped || simRep.Returned != liveRep.Returned || simRep.Failed != liveRep.Failed {
				t.Errorf("reports differ: sim moved %d skipped %d returned %d failed %d; live %d %d %d %d",
					simRep.Moved, simRep.Skipped, simRep.Returned, simRep.Failed, liveRep.Moved, liveRep.Skipped, liveRep.Returned, liveRep.Failed)
			}
			if !reflect.DeepEqual(simRep.Routes, simPlan.Routes) || !reflect.DeepEqual(untimedRoutes(liveRep.Routes), untimedRoutes(livePlan.Routes)) {
				t.Errorf("the move did not take the planned routes: sim %v (planned %v), live %v (planned %v)", simRep.Routes, simPlan.Routes, liveRep.Routes, livePlan.Routes)
			}

			// Where the messages are now, by exact depth: as the plan said,
			// and the same in both.
			want := expectedDepths(simPlan.Planned)
			names := slices.Sorted(func(yield func(string) bool) {
				for n := range want {
					if !yield(n) {
						return
					}
				}
			})
			// A pick's delay queue is named by its delay, which each side
			// planned at its own moment (untimed): the live one's is where
			// the live move put the message.
			liveName := map[string]string{}
			for _, rc := range liveRep.Routes {
				for _, p := range simPlan.Planned {
					if p.Pick > 0 && pickBucket(p.Queue) == pickBucket(rc.Through) {
						liveName[p.Queue] = rc.Through
					}
				}
			}
			for _, n := range append([]string{OrdersDLQ, OrdersMain, OrdersWait5s, OrdersWait30s, OrdersWait5m}, names...) {
				ln := n
				if o, ok := liveName[n]; ok {
					ln = o
				}
				sd, ld := simDepth(s, n), liveDepth(t, r, ln)
				if sd != ld {
					t.Errorf("%s: sim holds %d, live holds %d", n, sd, ld)
				}
				if w, ok := want[n]; ok && sd != w {
					t.Errorf("%s: holds %d, the plan put %d there", n, sd, w)
				}
			}
		})
	}
}

// comparePlans: the same plan, message by message, field by field.
func comparePlans(t *testing.T, sim, live []moveplan.Route) {
	t.Helper()
	if len(sim) != len(live) {
		t.Fatalf("sim planned %d messages, live %d", len(sim), len(live))
	}
	for i := range sim {
		if !reflect.DeepEqual(untimed(sim[i]), untimed(live[i])) {
			t.Errorf("plan of #%d differs:\n sim  %+v\n live %+v", sim[i].Position, sim[i], live[i])
		}
	}
}

// onLiveClock is req with its picks due as long after the broker's now as
// they are after the simulation's (t0).
func onLiveClock(req broker.MoveRequest) broker.MoveRequest {
	if req.Pick == nil {
		return req
	}
	req.Pick = slices.Clone(req.Pick)
	for i := range req.Pick {
		req.Pick[i].DueAt = time.Now().Add(req.Pick[i].DueAt.Sub(t0))
	}
	return req
}

// untimed is a plan with the death times of the history it carries taken
// out, and a pick's expiration (what remains of its delay, to the
// millisecond): the simulation's clock is not the broker's.
func untimed(p moveplan.Route) moveplan.Route {
	if p.Pick > 0 {
		// Its delay is what remains when each planner plans it, in whole
		// seconds: a busy machine may plan the live side a second later.
		p.Expiration = ""
		p.Queue, p.RoutingKey = pickBucket(p.Queue), pickBucket(p.RoutingKey)
		if p.WaitQueueArgs != nil {
			p.WaitQueueArgs = p.WaitQueueArgs.Clone()
			delete(p.WaitQueueArgs, "x-message-ttl")
			delete(p.WaitQueueArgs, "x-expires")
		}
	}
	carried, ok := p.SetHeaders[retry.HeaderCarriedDeaths].([]any)
	if !ok {
		return p
	}
	p.SetHeaders = p.SetHeaders.Clone()
	var out []any
	for _, e := range carried {
		m, _ := e.(map[string]any)
		c := make(map[string]any, len(m))
		for k, v := range m {
			if k != "time" {
				c[k] = v
			}
		}
		out = append(out, c)
	}
	p.SetHeaders[retry.HeaderCarriedDeaths] = out
	return p
}

// delayBucket is the delay in the name of ladder's delay queue.
var delayBucket = regexp.MustCompile(`^ladder\.delay\.[0-9]+\.`)

// pickBucket is a delay queue's name without its delay.
func pickBucket(name string) string { return delayBucket.ReplaceAllString(name, "ladder.delay.*.") }

// untimedRoutes are route counts with picks' delay queues unnamed by
// their delay (see untimed).
func untimedRoutes(rs []moveplan.RouteCount) []moveplan.RouteCount {
	out := slices.Clone(rs)
	for i := range out {
		out[i].Through = pickBucket(out[i].Through)
	}
	return out
}

// expectedDepths is where the plan says messages are right after the move:
// a tier or wait queue for delayed routes, the reached queues otherwise;
// skipped ones stay in the DLQ.
func expectedDepths(plan []moveplan.Route) map[string]int {
	// Messages not selected stay where they are.
	out := map[string]int{OrdersDLQ: len(equivMessages()) - len(plan)}
	for _, p := range plan {
		switch {
		case !p.Moves():
			out[OrdersDLQ]++
		case p.Via == topology.ViaTier || p.Via == topology.ViaDelayQueue:
			out[p.Queue]++
		default:
			for _, q := range p.Reaches {
				out[q]++
			}
		}
	}
	return out
}

// Both refuse alike: the same error for errors.Is, the same report shape.
// A partial move (messages left in the source) is asserted by
// TestOnePlannerSimulationAndLiveBrokerAgree.
func TestRefusalsSimulationAndLiveBrokerAgree(t *testing.T) {
	brokertest.Require(t)
	l, r := equivLive(t, false)
	version := brokerVersion(t, l)
	s := equivSim(t, false, version)
	ro := *r
	ro.ReadOnly = true
	lro, err := rabbit.NewLive(&ro, "test refusal equivalence")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lro.Close() })
	sro := New(Options{Seed: 1, Now: fixedClock, Quiet: true, BrokerVersion: version, ReadOnly: true})
	t.Cleanup(func() { sro.Close() })
	ctx := context.Background()
	const missing = "no.such.queue"
	move := broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: OrdersMain}}
	for _, c := range []struct {
		name string
		want error
		// call runs the refused operation on c; report says whether it
		// handed back a report (or outcomes) with its error.
		call func(c broker.Client) (report bool, err error)
		ro   bool // on the read-only clients
	}{
		{"read-only move", broker.ErrReadOnly, func(c broker.Client) (bool, error) {
			rep, err := c.Move(ctx, move, nil)
			return rep != nil, err
		}, true},
		{"read-only publish", broker.ErrReadOnly, func(c broker.Client) (bool, error) {
			out, err := c.Publish(ctx, []broker.Outgoing{{RoutingKey: OrdersMain, Headers: retry.Headers{broker.HeaderMoveID: "r/1"}, Body: []byte("x")}})
			return out != nil, err
		}, true},
		{"read-only drain", broker.ErrReadOnly, func(c broker.Client) (bool, error) {
			_, err := c.Drain(ctx, OrdersDLQ, 1, func(*broker.Message) (bool, error) { return false, nil })
			return false, err
		}, true},
		{"peek of a missing queue", broker.ErrNotFound, func(c broker.Client) (bool, error) {
			res, err := c.Peek(ctx, missing, broker.PeekOptions{Limit: 1})
			return res != nil, err
		}, false},
		{"drain of a missing queue", broker.ErrNotFound, func(c broker.Client) (bool, error) {
			_, err := c.Drain(ctx, missing, 1, func(*broker.Message) (bool, error) { return false, nil })
			return false, err
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var live, simulated broker.Client = l, s
			if c.ro {
				live, simulated = lro, sro
			}
			liveRep, liveErr := c.call(live)
			simRep, simErr := c.call(simulated)
			if !errors.Is(liveErr, c.want) || !errors.Is(simErr, c.want) {
				t.Errorf("live %v, sim %v: want both %v", liveErr, simErr, c.want)
			}
			if liveRep != simRep {
				t.Errorf("a report with the error: live %v, sim %v", liveRep, simRep)
			}
		})
	}
	// Nothing was taken or moved by any of them.
	if n := liveDepth(t, r, OrdersDLQ); n != 4 {
		t.Errorf("live DLQ holds %d, want 4", n)
	}
	if n := simDepth(s, OrdersDLQ); n != 4 {
		t.Errorf("sim DLQ holds %d, want 4", n)
	}
}

// equivSim is the demo topology, quiet, with the four DLQ messages.
// brokerVersion is the live broker's version: the simulation plays it.
func brokerVersion(t *testing.T, l *rabbit.Live) string {
	t.Helper()
	v, err := l.BrokerVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func equivSim(t *testing.T, delayed bool, version string) *Sim {
	s := New(Options{Seed: 1, Now: fixedClock, Quiet: true, BrokerVersion: version})
	t.Cleanup(func() { s.Close() })
	if delayed {
		s.mu.Lock()
		s.declareExchange("orders.delayed", topology.ExchangeDelayed, map[string]any{"x-delayed-type": "topic"})
		s.bind("orders.delayed", OrdersMain, "orders.#", nil)
		s.mu.Unlock()
	}
	for _, m := range equivMessages() {
		switch {
		case m.viaTier:
			s.testPublish(t, OrdersRetry, m.key, m.id, "1", m.headers)
			s.Advance(10 * time.Millisecond) // expires at the head, back to orders.topic
			s.testReject(t, OrdersMain)
		case m.dead:
			s.testPublish(t, OrdersExchange, m.key, m.id, "", m.headers)
			s.testReject(t, OrdersMain)
		default:
			s.testPublish(t, "", OrdersDLQ, m.id, "", m.headers)
		}
	}
	return s
}

type equivMessage struct {
	id, key       string
	headers       retry.Headers
	dead, viaTier bool
}

func equivMessages() []equivMessage {
	return []equivMessage{
		{id: "m0", key: "orders.created", dead: true, headers: retry.Headers{"x-retry-count": int32(1)}},
		{id: "m1", key: "orders.paid", viaTier: true, headers: retry.Headers{"x-retry-count": int32(2), TierHeader: OrdersWait5s}},
		{id: "m2", key: "orders.created", dead: true, headers: retry.Headers{"x-retry-count": int32(3), TierHeader: OrdersWait5m}},
		{id: "m3", headers: retry.Headers{"x-retry-count": int32(4)}},
	}
}

// equivLive declares the Go seed's ladder in a vhost of the test's own and
// puts the same four messages in its DLQ, the same way.
func equivLive(t *testing.T, delayed bool) (*rabbit.Live, *rabbit.Resolved) {
	r := brokertest.OwnVhost(t)
	conn, err := r.DialAMQP(context.Background(), "test equivalence")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := rabbit.DeclareGoSeed(conn, ""); err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	if delayed {
		// The plugin is not installable here: a topic exchange the client
		// is told is a delayed-message exchange (routing is the same).
		if err := ch.ExchangeDeclare("orders.delayed", "topic", true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		if err := ch.QueueBind(OrdersMain, "orders.#", "orders.delayed", false, nil); err != nil {
			t.Fatal(err)
		}
	}
	publish := func(x, key string, p amqp.Publishing) {
		t.Helper()
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), x, key, false, false, p)
		if err != nil || !dc.Wait() {
			t.Fatalf("publish %s: %v", p.MessageId, err)
		}
	}
	for i, m := range equivMessages() {
		// The simulation's timestamp (its clock, t0): an unblock pick
		// knows a message by it.
		p := amqp.Publishing{MessageId: m.id, ContentType: "application/json", Body: []byte(`{"id":"` + m.id + `"}`), Headers: amqp.Table(m.headers), Timestamp: t0}
		switch {
		case m.viaTier:
			p.Expiration = "1"
			publish(OrdersRetry, m.key, p)
			rejectLive(t, ch, r, OrdersMain)
		case m.dead:
			publish(OrdersExchange, m.key, p)
			rejectLive(t, ch, r, OrdersMain)
		default:
			publish("", OrdersDLQ, p)
		}
		waitLiveDepth(t, r, OrdersDLQ, i+1)
	}
	l, err := rabbit.NewLive(r, "test equivalence")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if delayed {
		l.AdaptTopology(func(v *topology.Vhost) {
			for i := range v.Exchanges {
				if v.Exchanges[i].Name == "orders.delayed" {
					v.Exchanges[i].Type = topology.ExchangeDelayed
					v.Exchanges[i].Arguments = map[string]any{"x-delayed-type": "topic"}
				}
			}
		})
	}
	return l, r
}

// rejectLive takes the head of queue (waiting for one to arrive) and
// rejects it without requeue: it is dead-lettered.
func rejectLive(t *testing.T, ch *amqp.Channel, r *rabbit.Resolved, queue string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, ok, err := ch.Get(queue, false)
		if err != nil {
			t.Fatalf("get %s: %v", queue, err)
		}
		if ok {
			if err := d.Nack(false, false); err != nil {
				t.Fatal(err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing arrived in %s", queue)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitLiveDepth(t *testing.T, r *rabbit.Resolved, queue string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for liveDepth(t, r, queue) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %d", queue, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// liveDepth is a queue's exact ready count (-1 when it does not exist).
func liveDepth(t *testing.T, r *rabbit.Resolved, queue string) int {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test depth")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		if strings.Contains(err.Error(), "NOT_FOUND") {
			return -1
		}
		t.Fatalf("depth %s: %v", queue, err)
	}
	return q.Messages
}

func simDepth(s *Sim, queue string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.byName[queue]
	if q == nil {
		return -1
	}
	return len(q.ready)
}

// A plan that became impossible between the dry run and the move (a tier
// deleted, messages shifted) stops those messages with a note: nothing takes
// another way silently. Simulation and live broker alike.
func TestMoveStopsMessagesWhosePlanChanged(t *testing.T) {
	brokertest.Require(t)
	req := broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}, Delay: 5 * time.Second}
	check := func(t *testing.T, name string, c broker.Client, change func(), depthOf func(string) int) {
		dry := req
		dry.DryRun = true
		plan, err := c.Move(context.Background(), dry, nil)
		if err != nil || plan.Via[topology.ViaTier] != 3 {
			t.Fatalf("%s: plan %+v %v", name, plan, err)
		}
		change()
		run := req
		run.Expect = plan.Planned
		rep, err := c.Move(context.Background(), run, nil)
		if rep == nil || rep.Moved != 0 || rep.Skipped != 4 {
			t.Fatalf("%s: moved %+v (%v), want every message stopped", name, rep, err)
		}
		for _, p := range rep.Planned[:3] {
			if !strings.Contains(p.Skip, "the plan changed since the preview (via tier orders.wait.5s") {
				t.Errorf("%s: #%d: %q", name, p.Position, p.Skip)
			}
		}
		if d := depthOf(OrdersDLQ); d != 4 {
			t.Errorf("%s: the DLQ holds %d, want all 4", name, d)
		}
		if d := depthOf(retry.ReplayQueueName(OrdersExchange, "orders.created", 5000)); d != -1 {
			t.Errorf("%s: a ladder delay queue was used instead (%d)", name, d)
		}
	}
	t.Run("a tier deleted", func(t *testing.T) {
		s := equivSim(t, false, "")
		check(t, "sim", s, func() {
			s.mu.Lock()
			s.deleteQueue(s.byName[OrdersWait5s])
			s.mu.Unlock()
		}, func(q string) int { return simDepth(s, q) })
		l, r := equivLive(t, false)
		check(t, "live", l, func() {
			conn, err := r.DialAMQP(context.Background(), "test delete tier")
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ch, _ := conn.Channel()
			if _, err := ch.QueueDelete(OrdersWait5s, false, false, false); err != nil {
				t.Fatal(err)
			}
		}, func(q string) int { return liveDepth(t, r, q) })
	})
}

// Messages that moved up since the preview (the head was consumed) are not
// moved in the place of the ones shown.
func TestMoveStopsMessagesThatChangedPosition(t *testing.T) {
	s := equivSim(t, false, "")
	req := broker.MoveRequest{From: OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: OrdersMain}, DryRun: true}
	plan := move(t, s, req)
	s.mu.Lock()
	s.byName[OrdersDLQ].pop() // a consumer took m0
	s.mu.Unlock()
	req.DryRun, req.Expect, req.Limit = false, plan.Planned, plan.Requested
	rep, err := s.Move(context.Background(), req, nil)
	if !errors.Is(err, broker.ErrPartial) || rep.Moved != 0 || rep.Skipped != 3 || !strings.Contains(rep.Planned[0].Skip, `another message is at position 0 (was "m0", now "m1")`) {
		t.Fatalf("%+v %v", rep, err)
	}
}
