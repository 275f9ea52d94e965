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
