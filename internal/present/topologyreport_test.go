package present

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Topology JSON says where rates came from, null for consumers the broker
// did not report, and what a guessed ladder rested on.
func TestTopologyReportJSONContract(t *testing.T) {
	v := topology.Vhost{Name: "/", RatesFrom: topology.RatesUnavailable, RatesNote: "prometheus http://h:15692: connection refused", Queues: []topology.Queue{
		{Name: "jobs", Type: topology.QueueClassic, ConsumersUnknown: true, Messages: 3, Ready: 3},
		{Name: "jobs.delay", Type: topology.QueueClassic, Consumers: 0, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs"}},
	}}
	ls := topology.Discover(&v)
	s := &broker.Snapshot{Vhost: "/", Topology: v, Ladders: ls, Findings: topology.Findings(&v, ls)}
	js, err := json.Marshal(Topology(s))
	if err != nil {
		t.Fatal(err)
	}
	out := string(js)
	for _, want := range []string{
		`"rates_from":"unavailable"`, `"rates_note":"prometheus http://h:15692: connection refused"`,
		`"name":"jobs","type":"classic","messages":3,"ready":3,"unacked":0,"consumers":null`,
		`"name":"jobs.delay","type":"classic","messages":0,"ready":0,"unacked":0,"consumers":0`,
		`"inferred_from":["jobs.delay: no queue TTL`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("JSON lacks %s:\n%s", want, out)
		}
	}
	for _, f := range s.Findings {
		if f.Code == topology.CodeNoConsumers {
			t.Errorf("no-consumers from an unknown consumer count: %+v", f)
		}
	}
}

// A DLQ or error queue that only a framework's naming ties to its queue
// is unconfirmed until a message read there says it failed in that queue;
// one on the dead-letter route never is.
func TestTopologyReportUnconfirmedNameOnlyLinks(t *testing.T) {
	report := func(errSeen, skipSeen topology.Seen) LadderReport {
		t.Helper()
		v := topology.Vhost{Name: "/", Queues: []topology.Queue{
			{Name: "orders", Type: topology.QueueClassic, Consumers: 1},
			{Name: "orders_error", Type: topology.QueueClassic, Messages: 2, Ready: 2, Seen: errSeen},
			{Name: "orders_skipped", Type: topology.QueueClassic, Messages: 1, Ready: 1, Seen: skipSeen},
			{Name: "billing", Type: topology.QueueClassic, Consumers: 1, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "billing.dlq"}},
			{Name: "billing.dlq", Type: topology.QueueClassic},
		}}
		ls := topology.Discover(&v)
		rep := Topology(&broker.Snapshot{Vhost: "/", Topology: v, Ladders: ls})
		for _, l := range rep.Ladders {
			if l.Main.Name == "billing" && (l.DLQ == nil || l.DLQ.Unconfirmed) {
				t.Errorf("billing's DLQ on its dead-letter route: %+v", l.DLQ)
			}
		}
		for _, l := range rep.Ladders {
			if l.Main.Name == "orders" {
				if l.DLQ == nil || l.DLQ.Name != "orders_error" || l.DLQFrom == "" || len(l.ErrorQueues) != 1 {
					t.Fatalf("orders' ladder: %+v", l)
				}
				return l
			}
		}
		t.Fatalf("no ladder of orders: %+v", rep.Ladders)
		return LadderReport{}
	}
	l := report(topology.Seen{}, topology.Seen{})
	if !l.DLQ.Unconfirmed || !l.ErrorQueues[0].Unconfirmed {
		t.Errorf("by name only: dlq %+v, error queue %+v: want both unconfirmed", l.DLQ, l.ErrorQueues[0])
	}
	js, _ := json.Marshal(l)
	if !strings.Contains(string(js), `"name":"orders_error"`) || !strings.Contains(string(js), `"unconfirmed":true`) {
		t.Errorf("JSON: %s", js)
	}
	// A message that failed in orders confirms orders_error; one that
	// failed elsewhere confirms nothing of orders.
	l = report(topology.Seen{FailedIn: []string{"orders"}}, topology.Seen{FailedIn: []string{"shipping"}})
	if l.DLQ.Unconfirmed || !l.ErrorQueues[0].Unconfirmed {
		t.Errorf("confirmed by a message: dlq %+v, error queue %+v", l.DLQ, l.ErrorQueues[0])
	}
	if js, _ := json.Marshal(l); strings.Contains(string(js), `"unconfirmed":false`) {
		t.Errorf("a confirmed link says unconfirmed false rather than nothing: %s", js)
	}
}
