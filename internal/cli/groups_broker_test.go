package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
)

// The done-when of the grouping work on a real broker: a DLQ of 5,000 dead
// letters of 3 causes (Spring-like, with ids, amounts, hosts, UUIDs, line
// and column numbers in their texts) is 3 groups by error, over all 5,000,
// each of the exception type that caused it; by exact text, about 5,000.
func TestPeekGroupByErrorOnTheBroker(t *testing.T) {
	r := brokerEnv(t)
	q := testQueue(t, r, "causes", 0, nil)
	conn, err := r.DialAMQP(context.Background(), "test causes")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	msgs := brokertest.CauseMessages(5000, 11, time.Now())
	want := map[string]int{}
	for _, m := range msgs {
		want[brokertest.CauseTypes[m.Cause]]++
	}
	if err := brokertest.PublishConfirmed(context.Background(), ch, "", q, brokertest.Publishings(msgs)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runLadder(t, "peek", q, "--group-by", "error", "-o", "json")
	var res broker.PeekResult
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("exit %d %s", code, errOut)
	}
	if g := res.Grouping; len(res.Groups) != 3 || g == nil || g.Grouped != 5000 || g.Of != 5000 || g.Capped {
		t.Fatalf("%d groups, grouping %+v", len(res.Groups), res.Grouping)
	}
	for _, g := range res.Groups {
		if g.Count != want[g.Type] {
			t.Errorf("group of %q: %d messages, want %d (%q)", g.Type, g.Count, want[g.Type], g.Key)
		}
	}
	// The browse's side effects are reported, and every message is back.
	if len(res.SideEffects) == 0 || !strings.Contains(strings.Join(res.SideEffects, " "), "redelivered") {
		t.Errorf("side effects %q", res.SideEffects)
	}
	code, out, _ = runLadder(t, "peek", q, "--group-by", "error-text", "-o", "json")
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil || len(res.Groups) < 4900 || res.Grouping.Grouped != 5000 {
		t.Fatalf("error-text: exit %d, %d groups", code, len(res.Groups))
	}
}
