package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/usecase"
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
	var res usecase.GroupedPeek
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

// wholeDLQ fills a DLQ in the test's own vhost the way workers do
// (brokertest.CausesDLQ): 1,650, 950 and 400 dead letters of three causes.
// It returns the DLQ's name and the counts by exception type.
func wholeDLQ(t *testing.T, r *rabbit.Resolved) (string, map[string]int) {
	t.Helper()
	ch := brokertest.Channel(t, r, "test whole groups")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	counts := [brokertest.CauseKinds]int{1650, 950, 400}
	if err := brokertest.CausesDLQ(context.Background(), ch, "work", "work.dlq", counts, 32); err != nil {
		t.Fatal(err)
	}
	waitDepthCLI(t, r, "work.dlq", 3000, time.Minute)
	want := map[string]int{}
	for i, n := range counts {
		want[brokertest.CauseTypes[i]] = n
	}
	return "work.dlq", want
}

// Issue 32: groups are whole numbers by default. A DLQ of 3,000 dead
// letters of three causes (1,650/950/400) is grouped whole by a plain
// peek --group-by, in JSON and text, and says so; FIRST and LAST are when
// the messages reached the DLQ (the x-death of the rejection that put
// them there), and say so. A queue above the bound (usecase.GroupWholeLimit)
// is grouped partly, labelled partial with why, and exits 3.
func TestGroupsAreWholeByDefaultOnTheBroker(t *testing.T) {
	r := vhostEnv(t)
	dlq, want := wholeDLQ(t, r)
	code, out, errOut := runLadder(t, "peek", dlq, "--group-by", "error", "-o", "json")
	var res usecase.GroupedPeek
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("exit %d %s", code, errOut)
	}
	if g := res.Grouping; g == nil || !g.Whole || g.Partial != "" || g.Grouped != 3000 || g.Of != 3000 || len(res.Groups) != 3 {
		t.Fatalf("%d groups, grouping %+v", len(res.Groups), res.Grouping)
	}
	for _, g := range res.Groups {
		if g.Count != want[g.Type] || g.Times != usecase.GroupTimeReached || g.Timed != g.Count || g.FirstSeen.IsZero() {
			t.Errorf("group of %q: %d messages (want %d), times %q of %d", g.Type, g.Count, want[g.Type], g.Times, g.Timed)
		}
	}
	for _, field := range []string{`"whole": true`, `"times": "reached"`} {
		if !strings.Contains(out, field) {
			t.Errorf("JSON lacks %s", field)
		}
	}
	code, out, errOut = runLadder(t, "peek", dlq, "--group-by", "error")
	if code != exitOK {
		t.Fatalf("text: exit %d %s", code, errOut)
	}
	for _, s := range []string{"grouped 3000 of 3000 ready messages by error · the whole queue\n", "FIRST/LAST: when they reached " + dlq,
		"\n 1650  ", "\n  950  ", "\n  400  "} {
		if !strings.Contains(out, s) {
			t.Errorf("text lacks %q:\n%s", s, out)
		}
	}

	// Above the bound: the first GroupWholeLimit, partial, and why.
	const big = "big.dlq"
	ch := brokertest.Channel(t, r, "test big groups")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(big, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	n := usecase.GroupWholeLimit + 500
	if err := brokertest.PublishConfirmed(context.Background(), ch, "", big, brokertest.Publishings(brokertest.CauseMessages(n, 33, time.Now()))); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runLadder(t, "peek", big, "--group-by", "error", "-o", "json")
	res = usecase.GroupedPeek{}
	if code != exitPartial || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("above the bound: exit %d %s", code, errOut)
	}
	wantWhy := fmt.Sprintf("the first %d of %d: groups cover a queue of up to %d ready messages by default", usecase.GroupWholeLimit, n, usecase.GroupWholeLimit)
	if g := res.Grouping; g == nil || g.Whole || !strings.HasPrefix(g.Partial, wantWhy) || g.Grouped != usecase.GroupWholeLimit || g.Of != int64(n) {
		t.Fatalf("above the bound: grouping %+v", res.Grouping)
	}
	code, out, errOut = runLadder(t, "peek", big, "--group-by", "error")
	if code != exitPartial || !strings.Contains(out, fmt.Sprintf("grouped %d of %d ready messages by error · partial: %s", usecase.GroupWholeLimit, n, wantWhy)) ||
		!strings.Contains(errOut, wantWhy) {
		t.Errorf("above the bound, text: exit %d\n%s%s", code, out, errOut)
	}
	// -n asks for them all.
	code, out, errOut = runLadder(t, "peek", big, "--group-by", "error", "-n", strconv.Itoa(n), "-o", "json")
	res = usecase.GroupedPeek{}
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil || res.Grouping == nil || !res.Grouping.Whole || res.Grouping.Grouped != n {
		t.Errorf("-n %d: exit %d, grouping %+v %s", n, code, res.Grouping, errOut)
	}
}
