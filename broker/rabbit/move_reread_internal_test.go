package rabbit

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/topology"
)

// A failed policies listing puts the next off, twice as long each time up
// to 30 s; the report says once, during the move, that they could not be
// read; one that answers brings the reads back to every round.
func TestPoliciesListingBacksOffAfterAFailure(t *testing.T) {
	m := &mover{rep: &broker.MoveReport{}}
	now := time.Unix(1000, 0)
	refused := errors.New("management API at h:15672: 401 Unauthorized")
	m.policiesRead(nil, nil, refused, now, false) // before the move: no note
	if m.rereads.policyDue != now.Add(2*time.Second) || len(m.rep.Notes) != 0 {
		t.Fatalf("after the setup's failure: due in %v, notes %q", m.rereads.policyDue.Sub(now), m.rep.Notes)
	}
	for _, want := range []time.Duration{4, 8, 16, 30, 30} {
		m.policiesRead(nil, nil, refused, now, true)
		if got := m.rereads.policyDue.Sub(now); got != want*time.Second {
			t.Errorf("next listing in %v, want %v", got, want*time.Second)
		}
	}
	if len(m.rep.Notes) != 1 || !strings.Contains(m.rep.Notes[0], "policies could not be read during the move (management API at h:15672: 401 Unauthorized)") {
		t.Errorf("notes %q, want the one", m.rep.Notes)
	}
	user := []topology.PolicyDef{{Name: "p"}}
	m.policiesRead(user, nil, nil, now, true)
	if !m.havePolicies || len(m.policies) != 1 || m.rereads.policyWait != 0 || !m.rereads.policyDue.IsZero() {
		t.Errorf("after an answer: have %v %v, wait %v, due %v", m.havePolicies, m.policies, m.rereads.policyWait, m.rereads.policyDue)
	}
}
