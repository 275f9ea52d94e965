package broker

import (
	"encoding/json"
	"strings"
	"testing"

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
	s := &Snapshot{Vhost: "/", Topology: v, Ladders: ls, Findings: topology.Findings(&v, ls)}
	js, err := json.Marshal(s.Report())
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

// A move that went on through another node: what moved adds up, what is
// left in the source is the second part's (it looked at all of it again).
func TestMoveReportAdd(t *testing.T) {
	first := NewMoveReport(MoveRequest{})
	first.Requested, first.Moved, first.Failed, first.Skipped = 100, 40, 7, 2
	first.DuplicatesAtMost, first.Via["direct"] = 5, 40
	first.Note("lost")
	more := NewMoveReport(MoveRequest{})
	more.Requested, more.Moved, more.Skipped = 62, 60, 2
	more.DuplicatesAtMost, more.Via["direct"] = 1, 60
	more.Note("lost")
	first.Add(more)
	if first.Requested != 100 || first.Moved != 100 || first.Failed != 0 || first.Skipped != 2 || first.DuplicatesAtMost != 6 ||
		first.Via["direct"] != 100 || len(first.Notes) != 1 {
		t.Errorf("added: %+v", first)
	}
}
