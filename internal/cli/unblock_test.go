package cli

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// quietSim is the simulation with nothing running (no producers, no
// workers) on a clock that only Advance moves.
func quietSim(t *testing.T) *sim.Sim {
	t.Helper()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := sim.New(sim.Options{Seed: 1, Quiet: true, Now: func() time.Time { return now }})
	t.Cleanup(func() { s.Close() })
	return s
}

// putWaiting publishes messages with no id into payments.wait (which
// dead-letters to payments.process), each "body/expiration-ms", stamped
// with the simulation's time.
func putWaiting(t *testing.T, s *sim.Sim, msgs ...string) {
	t.Helper()
	ts := s.Now()
	var batch []broker.Outgoing
	for _, m := range msgs {
		body, exp, _ := strings.Cut(m, "/")
		batch = append(batch, broker.Outgoing{RoutingKey: sim.PaymentsWait, Mandatory: true,
			Properties: broker.Properties{Expiration: exp, Timestamp: &ts}, Body: []byte(body)})
	}
	out, err := s.Publish(t.Context(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if !o.Confirmed {
			t.Fatalf("publish %s: %+v", msgs[i], o)
		}
	}
}

// arrived lists what reached payments.process, each "body/expiration"
// (dead-lettering drops the expiration; a moved message keeps it in
// x-ladder-original-expiration).
func arrived(t *testing.T, s *sim.Sim) []string {
	t.Helper()
	res, err := s.Peek(t.Context(), sim.PaymentsMain, broker.PeekOptions{Limit: 100, BodyPreview: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range res.Messages {
		exp := m.Properties.Expiration
		if v, ok := m.Headers[moveplan.HeaderOriginalExpiration].(string); ok {
			exp = v
		}
		out = append(out, string(m.Body)+"/"+exp)
	}
	return out
}

// Repro D of issue 12: two messages with the same body and no id, a 60 s
// one ahead of a 10-minute one, both holding a 20 s one back. Each moves
// with its own remaining delay (not the other's), both are counted, and
// each arrives when it was due.
func TestUnblockTellsSameBodiesApart(t *testing.T) {
	s := quietSim(t)
	putWaiting(t, s, "x/60000", "x/600000", "z/20000")
	s.Advance(5 * time.Second)
	code, out, errOut := runOnSim(t, s, "unblock", sim.PaymentsWait, "--force-peek", "--yes", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var res unblockResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Unblock.Picks) != 2 || res.Move == nil || res.Move.Requested != 2 || res.Move.Moved != 2 {
		t.Fatalf("want 2 picked and moved: %s", out)
	}
	var through []string
	for _, r := range res.Move.Routes {
		through = append(through, r.Through)
	}
	want := []string{retry.ReplayQueueName("", sim.PaymentsMain, 55000), retry.ReplayQueueName("", sim.PaymentsMain, 595000)}
	if !slices.Equal(through, want) {
		t.Errorf("routes %v, want %v", through, want)
	}
	start := s.Now().Add(-5 * time.Second)
	for _, c := range []struct {
		at   time.Duration // since publishing
		want []string
	}{
		{21 * time.Second, []string{"z/"}},
		{59 * time.Second, []string{"z/"}},
		{61 * time.Second, []string{"z/", "x/60000"}},
		{599 * time.Second, []string{"z/", "x/60000"}},
		{601 * time.Second, []string{"z/", "x/60000", "x/600000"}},
	} {
		s.Advance(start.Add(c.at).Sub(s.Now()))
		if got := arrived(t, s); !slices.Equal(got, c.want) {
			t.Errorf("%v after publishing: payments.process has %q, want %q", c.at, got, c.want)
		}
	}
}

// Identical messages (same body, no id, same expiration) behind a long
// head: only the head holds anything back, and the dry run and the move
// both say 1, not every message that looks like it.
func TestUnblockMovesOnlyTheHolderAmongLookAlikes(t *testing.T) {
	s := quietSim(t)
	putWaiting(t, s, "same/600000", "same/30000", "same/30000", "same/30000", "same/30000", "same/30000")
	for _, args := range [][]string{{"--dry-run"}, {"--yes"}} {
		code, out, errOut := runOnSim(t, s, append([]string{"unblock", sim.PaymentsWait, "--force-peek", "-o", "json"}, args...)...)
		var res unblockResult
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitOK {
			t.Fatalf("%v: exit %d %v\n%s\n%s", args, code, err, out, errOut)
		}
		moved := res.Move.Moved
		if args[0] == "--dry-run" {
			moved = res.Move.Via[topology.ViaDelayQueue]
		}
		if len(res.Unblock.Picks) != 1 || res.Move.Requested != 1 || moved != 1 {
			t.Errorf("%v: picks %d, requested %d, moved %d: %s", args, len(res.Unblock.Picks), res.Move.Requested, moved, out)
		}
	}
	s.Advance(31 * time.Second)
	if got := arrived(t, s); len(got) != 5 {
		t.Errorf("after 31 s payments.process has %q, want the five 30 s ones", got)
	}
}

// A picked message that is gone when the move runs is not made up for by
// another: the move says so, counts it, and fails as partial (exit 3).
func TestUnblockCountsAPickThatLeft(t *testing.T) {
	s := quietSim(t)
	putWaiting(t, s, "a/600000", "b/300000", "c/20000")
	req, plan, _, err := usecase.PrepareUnblockWith(t.Context(), s, sim.PaymentsWait, usecase.UnblockOptions{ForcePeek: true})
	if err != nil || len(plan.Picks) != 2 {
		t.Fatalf("%+v %v", plan, err)
	}
	// Someone consumes the head between the peek and the move.
	if _, err := s.Drain(t.Context(), sim.PaymentsWait, 1, func(*broker.Message) (bool, error) { return true, nil }); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Move(t.Context(), req, nil)
	if !errors.Is(err, broker.ErrPartial) || rep.Requested != 2 || rep.Moved != 1 || !strings.Contains(strings.Join(rep.Notes, " "), "1 message of the plan not found") {
		t.Fatalf("err %v, report %+v", err, rep)
	}
}

// The time spent confirming adds no lateness: the head is published with
// what remains of its delay then, not with what remained at the peek, and
// in the wait queue of that delay, not behind a message a plain delayed
// move put, meanwhile, into the wait queue of the delay the preview showed.
func TestUnblockKeepsTheDueTimeWhileConfirming(t *testing.T) {
	s := quietSim(t)
	start := s.Now()
	putWaiting(t, s, "long/600000", "short/20000")
	req, plan, _, err := usecase.PrepareUnblockWith(t.Context(), s, sim.PaymentsWait, usecase.UnblockOptions{ForcePeek: true})
	if err != nil || len(plan.Picks) != 1 || plan.Picks[0].Remaining != 10*time.Minute {
		t.Fatalf("%+v %v", plan, err)
	}
	dry := req
	dry.DryRun = true
	preview, err := s.Move(t.Context(), dry, nil)
	if err != nil || len(preview.Planned) != 1 || preview.Planned[0].Expiration != "600000" {
		t.Fatalf("preview %+v %v", preview, err)
	}
	s.Advance(20 * time.Second) // the user reads the dialog
	out, err := s.Publish(t.Context(), []broker.Outgoing{{RoutingKey: sim.PaymentsDLQ, Mandatory: true, Body: []byte("other")}})
	if err != nil || !out[0].Confirmed {
		t.Fatalf("publish: %+v %v", out, err)
	}
	other := broker.MoveRequest{From: sim.PaymentsDLQ, To: req.To, Delay: 10 * time.Minute}
	if rep, err := s.Move(t.Context(), other, nil); err != nil || rep.Moved != 1 || rep.Routes[0].Through != preview.Routes[0].Through {
		t.Fatalf("a plain move into %s: %+v %v", preview.Routes[0].Through, rep, err)
	}
	s.Advance(10 * time.Second)
	req.Expect = preview.Planned
	if rep, err := s.Move(t.Context(), req, nil); err != nil || rep.Moved != 1 {
		t.Fatalf("move %+v %v", rep, err)
	}
	for _, c := range []struct {
		at   time.Duration
		want int
	}{{599 * time.Second, 1}, {600*time.Second + time.Millisecond, 2}, {620*time.Second + time.Millisecond, 3}} {
		s.Advance(start.Add(c.at).Sub(s.Now()))
		if got := arrived(t, s); len(got) != c.want {
			t.Errorf("%v after publishing: payments.process has %q", c.at, got)
		}
	}
}

// ladder unblock reads the queue as ladder peek does, and says what that
// did: the peek's side effects, in the text and in the JSON.
func TestUnblockOutputKeepsThePeeksSideEffects(t *testing.T) {
	s := quietSim(t)
	putWaiting(t, s, "long/600000", "short/20000")
	want := broker.PeekSideEffectsVia(broker.PeekModeOf(topology.Queue{Type: topology.QueueClassic}, sim.BrokerVersion), topology.QueueClassic, sim.BrokerVersion)
	if len(want) == 0 {
		t.Fatal("a classic peek has no side effects to check")
	}
	code, out, errOut := runOnSim(t, s, "unblock", sim.PaymentsWait, "--force-peek", "--dry-run", "-o", "json")
	var res unblockResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitOK {
		t.Fatalf("exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	if !slices.Equal(res.SideEffects, want) {
		t.Errorf("JSON side_effects %q, want %q", res.SideEffects, want)
	}
	code, out, errOut = runOnSim(t, s, "unblock", sim.PaymentsWait, "--force-peek", "--dry-run")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	for _, e := range want {
		if !strings.Contains(out, "\n! "+e+"\n") {
			t.Errorf("text lacks %q:\n%s", e, out)
		}
	}
}

// A holder ladder cannot move (no timestamp: its remaining delay is not
// known) is still a holder: the dry run does not say nothing holds others
// back and then note one that does.
func TestUnblockDryRunSaysAHolderItCannotMoveIsOne(t *testing.T) {
	s := quietSim(t)
	out, err := s.Publish(t.Context(), []broker.Outgoing{{RoutingKey: sim.PaymentsWait, Mandatory: true,
		Properties: broker.Properties{Expiration: "600000"}, Body: []byte("long, no timestamp")}})
	if err != nil || !out[0].Confirmed {
		t.Fatalf("%+v %v", out, err)
	}
	putWaiting(t, s, "short/1000")
	code, stdout, errOut := runOnSim(t, s, "unblock", sim.PaymentsWait, "--force-peek", "--dry-run")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	if strings.Contains(stdout, "no message holds others back") || !strings.Contains(stdout, "1 message holds others back but cannot be moved") ||
		!strings.Contains(stdout, "has no timestamp") {
		t.Errorf("%s", stdout)
	}
	code, stdout, _ = runOnSim(t, s, "unblock", sim.PaymentsWait, "--force-peek", "--dry-run", "-o", "json")
	var res unblockResult
	if code != exitOK || json.Unmarshal([]byte(stdout), &res) != nil || res.Unblock.Kept != 1 || len(res.Unblock.Picks) != 0 {
		t.Errorf("json: exit %d %s", code, stdout)
	}
}

// Issue 33: unblock has move's loop guard. A holder ladder already moved
// five times (x-ladder-moves) stays, with the guard's note, and the run is
// partial (exit 3); --max-moves raises the guard (0: none) and --force
// passes it, and then it moves. A bad --max-moves is a usage error.
func TestUnblockHasTheLoopGuard(t *testing.T) {
	for _, c := range []struct {
		args  []string
		moved int
		code  int
	}{
		{nil, 0, exitPartial},
		{[]string{"--max-moves", "6"}, 1, exitOK},
		{[]string{"--max-moves", "0"}, 1, exitOK},
		{[]string{"--force"}, 1, exitOK},
	} {
		s := quietSim(t)
		ts := s.Now()
		batch := []broker.Outgoing{
			{RoutingKey: sim.PaymentsWait, Mandatory: true, Headers: retry.Headers{moveplan.HeaderMoves: int32(5)},
				Properties: broker.Properties{MessageID: "looped", Expiration: "600000", Timestamp: &ts}, Body: []byte("a")},
			{RoutingKey: sim.PaymentsWait, Mandatory: true, Properties: broker.Properties{MessageID: "short", Expiration: "20000", Timestamp: &ts}, Body: []byte("b")},
		}
		if out, err := s.Publish(t.Context(), batch); err != nil || !out[0].Confirmed || !out[1].Confirmed {
			t.Fatalf("publish: %+v %v", out, err)
		}
		code, out, errOut := runOnSim(t, s, append([]string{"unblock", sim.PaymentsWait, "--yes", "--force-peek", "-o", "json"}, c.args...)...)
		var res unblockResult
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != c.code || res.Move == nil {
			t.Fatalf("%v: exit %d (want %d) %v\n%s\n%s", c.args, code, c.code, err, out, errOut)
		}
		if len(res.Unblock.Picks) != 1 || res.Move.Moved != c.moved {
			t.Errorf("%v: picks %d, moved %d (want %d): %s", c.args, len(res.Unblock.Picks), res.Move.Moved, c.moved, out)
		}
		if c.moved == 0 && (len(res.Move.Planned) != 1 || !strings.Contains(res.Move.Planned[0].Skip, "ladder moved it 5 times already (--max-moves 5)")) {
			t.Errorf("%v: the guard's reason is not given: %+v", c.args, res.Move.Planned)
		}
	}
	s := quietSim(t)
	if code, _, errOut := runOnSim(t, s, "unblock", sim.PaymentsWait, "--max-moves", "-1"); code != exitUsage || !strings.Contains(errOut, "--max-moves -1: want 0 (no guard) or more") {
		t.Errorf("--max-moves -1: exit %d %q", code, errOut)
	}
}
