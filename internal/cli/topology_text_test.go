package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry/topology"
)

// IN/S is the inflow: counted publishes as they are, one derived from the
// depth marked "~" and explained once; a DLQ whose inflow nothing tells
// shows "-" rather than its zero publishes.
func TestRenderTopologyInflow(t *testing.T) {
	rep := present.TopologyReport{Vhost: "/", BrokerVersion: "3.10.8", OverMS: 10000, Ladders: []present.LadderReport{{
		Main: present.QueueReport{Name: "orders", PublishRate: f64(50), InRate: f64(50), InRateSource: strp(topology.InFromPublish)},
		DLQ:  &present.QueueReport{Name: "orders.dlq", PublishRate: f64(0), InRate: f64(4.13), InRateSource: strp(topology.InFromDepth)},
	}, {
		Main: present.QueueReport{Name: "emails", PublishRate: f64(2), InRate: f64(2), InRateSource: strp(topology.InFromPublish)},
		DLQ:  &present.QueueReport{Name: "emails.dlq", PublishRate: f64(0)},
	}}}
	out := renderTopology(rep)
	row := func(name string) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[1] == name {
				return l
			}
		}
		t.Fatalf("no row for %s:\n%s", name, out)
		return ""
	}
	if f := strings.Fields(row("orders.dlq")); f[len(f)-2] != "~4.1" {
		t.Errorf("orders.dlq IN/S %q, want ~4.1:\n%s", f[len(f)-2], out)
	}
	if f := strings.Fields(row("orders")); f[len(f)-2] != "50.0" {
		t.Errorf("orders IN/S %q, want 50.0:\n%s", f[len(f)-2], out)
	}
	if f := strings.Fields(row("emails.dlq")); f[len(f)-2] != "-" {
		t.Errorf("emails.dlq IN/S %q, want - (its zero publishes say nothing):\n%s", f[len(f)-2], out)
	}
	for _, want := range []string{"read twice, 10s apart", "~ inflow derived from the depth"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	rep.Ladders[0].DLQ.InRateSource = strp(topology.InFromPublish)
	rep.OverMS = 0
	if out := renderTopology(rep); strings.Contains(out, "~") || strings.Contains(out, "read twice") {
		t.Errorf("no derived inflow, one read: no legend, no mark:\n%s", out)
	}
}

// topology --over reads twice: on the simulation, whose workload keeps
// dead-lettering into its DLQs, the second read has a dlq-growing finding
// for each that grew, and their inflow from the depth.
func TestTopologyOverOnTheSimulation(t *testing.T) {
	// A clock a minute ahead for every real second: --over 1s sees a minute
	// of the workload.
	start, real0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), time.Now()
	clock := func() time.Time { return start.Add(time.Since(real0) * 60) }
	s := sim.New(sim.Options{Seed: 3, Now: clock, WarmUp: 10 * time.Minute})
	t.Cleanup(func() { s.Close() })
	code, out, errOut := runOnSim(t, s, "topology", "--over", "1s", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep present.TopologyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.OverMS != 1000 {
		t.Errorf("over_ms %d, want 1000", rep.OverMS)
	}
	var grew []string
	for _, f := range rep.Findings {
		if f.Code == topology.CodeDLQGrowing {
			if f.Severity != topology.SeverityWarning || !strings.HasPrefix(f.Message, "grew by ") || !strings.Contains(f.Message, " waiting") {
				t.Errorf("finding %+v", f)
			}
			grew = append(grew, f.Queue)
		}
	}
	if len(grew) == 0 {
		t.Fatalf("no dlq-growing finding after a minute of the demo's workload:\n%s", out)
	}
	for _, l := range rep.Ladders {
		if l.DLQ == nil || !slices.Contains(grew, l.DLQ.Name) {
			continue
		}
		// The simulation's rates are over its last 10 s, not the two reads.
		if l.DLQ.InRate == nil || l.DLQ.InRateSource == nil || *l.DLQ.InRateSource != topology.InFromDepth {
			t.Errorf("%s grew but its inflow is %s", l.DLQ.Name, inRate(*l.DLQ))
		}
	}
	// One read sees no growth: a command's first (a fresh process's
	// client remembers no earlier read).
	fresh := sim.New(sim.Options{Seed: 3, Now: clock, WarmUp: 10 * time.Minute})
	t.Cleanup(func() { fresh.Close() })
	code, out, _ = runOnSim(t, fresh, "topology", "-o", "json")
	if code != exitOK || strings.Contains(out, topology.CodeDLQGrowing) {
		t.Errorf("one read: exit %d, a dlq-growing finding:\n%s", code, out)
	}
	for _, bad := range []string{"500ms", "-1s"} {
		if code, _, errOut := runOnSim(t, s, "topology", "--over", bad); code != exitUsage || !strings.Contains(errOut, "--over") {
			t.Errorf("--over %s: exit %d %q", bad, code, errOut)
		}
	}
}

// What discovery learned from a framework's shape shows in the table: a
// shared delay infrastructure as one row with its TTL range and depth, a
// ladder without tiers saying its retries are in the consumer, error
// queues by naming, and which naming linked a DLQ (failures are published
// there: no dead-letter route leads to it).
func TestRenderTopologyFrameworkShapes(t *testing.T) {
	rep := present.TopologyReport{Vhost: "/", BrokerVersion: "4.3.6", Ladders: []present.LadderReport{{
		Main: present.QueueReport{Name: "Sales"},
		Delays: []present.DelayReport{{Name: "nsb.v2.delay-level-00…27", Queues: []string{"nsb.v2.delay-level-00", "nsb.v2.delay-level-01", "nsb.v2.delay-level-02"},
			MinTTLMS: 1000, MaxTTLMS: 4000, Messages: 7}},
		DLQ: &present.QueueReport{Name: "error"}, DLQFrom: "NServiceBus: error (shared)",
	}, {
		Main: present.QueueReport{Name: "submit-order"}, RetriesInConsumer: true,
		DLQ: &present.QueueReport{Name: "submit-order_error"}, DLQFrom: "MassTransit: {queue}_error",
		ErrorQueues: []present.QueueReport{{Name: "submit-order_skipped"}},
	}, {
		Main:   present.QueueReport{Name: "default"},
		Delays: []present.DelayReport{{Name: "default.DQ", Queues: []string{"default.DQ"}, HeldByConsumers: true, Messages: 2}},
		DLQ:    &present.QueueReport{Name: "default.XQ"},
	}}}
	out := renderTopology(rep)
	for _, want := range []string{
		"  delays  nsb.v2.delay-level-00…27",
		"1s…4s",
		"  delays  default.DQ                       until due",
		"(none: retries in the consumer)",
		"  error   submit-order_skipped",
		"DLQ BY NAMING OR MESSAGES SEEN",
		"submit-order  submit-order_error  MassTransit: {queue}_error",
		"Sales         error               NServiceBus: error (shared)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Count(out, "retries in the consumer") != 1 {
		t.Errorf("only submit-order retries in the consumer:\n%s", out)
	}
}

// topology --sample lists what it read of each queue: where its messages
// failed, and what the peek cost or why it was skipped.
func TestRenderTopologySampled(t *testing.T) {
	rep := present.TopologyReport{Vhost: "/", BrokerVersion: "3.10.8", Sampled: &usecase.SampleReport{PerQueue: 20, Left: 3, Queues: []usecase.SampledQueue{
		{Queue: "poison_queue", Read: 3, FailedIn: []string{"orders", "payments"}, SideEffects: []string{"their redelivered flag is now set"}},
		{Queue: "empty", FailedIn: []string{}},
		{Queue: "q.dlq", Skipped: "a peek of this quorum queue counts a delivery", FailedIn: []string{}},
		{Queue: "evil\x1b[31m", FailedIn: []string{"x\x1b[2J"}},
	}}}
	out := renderTopology(rep)
	for _, want := range []string{
		"SAMPLED (up to 20 messages of each queue no ladder explained)",
		"poison_queue  3     orders, payments  their redelivered flag is now set",
		"empty         0     –",
		"q.dlq         0     –                 a peek of this quorum queue counts a delivery",
		"3 more not sampled (at most 50 queues a run)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("escape sequences from the broker reached the terminal:\n%q", out)
	}
	rep.Sampled = &usecase.SampleReport{PerQueue: 5, Queues: []usecase.SampledQueue{}}
	if out := renderTopology(rep); !strings.Contains(out, "no queue to sample") {
		t.Errorf("an empty sample says nothing:\n%s", out)
	}
}

// A cluster with a node down says so in topology's first line; a finding
// about a node names it.
func TestRenderTopologyCluster(t *testing.T) {
	rep := present.TopologyReport{Vhost: "/", BrokerVersion: "4.3.6", ClusterName: "rabbit@prod",
		Nodes:    []topology.Node{{Name: "rabbit@a"}, {Name: "rabbit@b", Running: true}, {Name: "rabbit@c", Running: true}},
		Findings: []topology.Finding{{Code: topology.CodeNodeDown, Severity: topology.SeverityError, Node: "rabbit@a", Message: "node rabbit@a is down"}}}
	out := renderTopology(rep)
	for _, want := range []string{"vhost / · RabbitMQ 4.3.6 · 0 ladders · cluster rabbit@prod, 2 of 3 nodes up\n", "error  node-down  node rabbit@a  node rabbit@a is down"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	rep.Nodes = rep.Nodes[1:2]
	if out := renderTopology(rep); strings.Contains(out, "nodes up") {
		t.Errorf("one node, running: the header says nothing of nodes:\n%s", out)
	}
}

// A chain's levels that deliver to the endpoint are listed with their
// TTLs, and a shared wait queue (per-message expirations, its router
// sending messages back by header) reads as shared, per message.
func TestRenderTopologySharedDelays(t *testing.T) {
	rep := present.TopologyReport{Vhost: "/", BrokerVersion: "4.3.6", Ladders: []present.LadderReport{{
		Main: present.QueueReport{Name: "orders"},
		Delays: []present.DelayReport{
			{Name: "delay.level-0…2", Queues: []string{"delay.level-0", "delay.level-1", "delay.level-2"}, MinTTLMS: 1000, MaxTTLMS: 4000,
				Levels: []present.DelayLevelReport{{Queue: "delay.level-0", TTLMS: 1000}, {Queue: "delay.level-1", TTLMS: 2000}, {Queue: "delay.level-2", TTLMS: 4000}}},
			{Name: "amqplib-retry.delayed", Queues: []string{"amqplib-retry.delayed", "amqplib-retry.ready"}, PerMessageTTL: true, Messages: 3,
				From: "messages seen in amqplib-retry.ready return to orders"},
		},
		DLQ: &present.QueueReport{Name: "orders.failure"},
	}}}
	out := renderTopology(rep)
	for _, want := range []string{"delay.level-0…2        1s,2s,4s", "amqplib-retry.delayed  msg (shared)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// A link only a naming makes is said unconfirmed, in the table and in the
// naming section; a confirmed one is not; unasked samples are said.
func TestRenderTopologyUnconfirmedAndFreeSample(t *testing.T) {
	rep := present.TopologyReport{Vhost: "/", BrokerVersion: "4.3.6", Ladders: []present.LadderReport{{
		Main: present.QueueReport{Name: "orders"}, DLQFrom: "MassTransit: {queue}_error",
		DLQ:         &present.QueueReport{Name: "orders_error", Unconfirmed: true},
		ErrorQueues: []present.QueueReport{{Name: "orders_skipped", Unconfirmed: true}},
	}, {
		Main: present.QueueReport{Name: "billing"}, DLQFrom: "MassTransit: {queue}_error",
		DLQ: &present.QueueReport{Name: "billing_error"},
	}}, Sampled: &usecase.SampleReport{Free: true, PerQueue: usecase.FreePerQueue, Queues: []usecase.SampledQueue{
		{Queue: "poison", Read: 3, FailedIn: []string{"orders"}},
	}}}
	out := renderTopology(rep)
	for _, want := range []string{
		"orders_error (by name, unconfirmed)", "orders_skipped (by name, unconfirmed)",
		"unconfirmed: no message read there yet says it failed in orders",
		"sampled 3 messages of poison (free on this broker): they failed in orders",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "billing_error (by name") || strings.Count(out, "unconfirmed: no message") != 1 {
		t.Errorf("a confirmed link said unconfirmed:\n%s", out)
	}
}
