package ui

import (
	"slices"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/retry"
)

func TestSplitWhereReadsQuotesAsAShellDoes(t *testing.T) {
	for in, want := range map[string][]string{
		`reason=expired  retries>=3`:         {"reason=expired", "retries>=3"},
		`error~"connection refused" queue=q`: {"error~connection refused", "queue=q"},
		`body~'a "b" c'`:                     {`body~a "b" c`},
		`header:x="say \"hi\""`:              {`header:x=say "hi"`},
		`error~\d+ body~"x\\y"`:              {`error~\d+`, `body~x\y`},
		``:                                   nil,
		`  `:                                 nil,
		`error~"database deadlock" header:k='v w' x`: {"error~database deadlock", "header:k=v w", "x"},
	} {
		got, err := splitWhere(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`error~"open`, `body~'open`} {
		if _, err := splitWhere(bad); err == nil || !strings.Contains(err.Error(), "is not closed") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// What whereText writes, splitWhere reads back.
	exprs := []string{"error~database deadlock", `body~a"b\sc`, `error~\d+`, "reason=expired", "header:k=it's"}
	w, err := retry.ParseWhere(exprs)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := splitWhere(whereText(w)); err != nil || !slices.Equal(back, exprs) {
		t.Errorf("round trip of %q: %q %v (text %s)", exprs, back, err, whereText(w))
	}
}

// The scope names how many the filter chose, and says when the peek did
// not see the whole queue (the dry run counts the rest).
func TestChosenScopeSaysWhatItCounted(t *testing.T) {
	w, _ := retry.ParseWhere([]string{"reason=rejected"})
	if got := chosenLabel(moveSpec{where: w, chosen: 277, peeked: 1932, allPeeked: true}); got != "the 277 chosen by the w filter" {
		t.Errorf("whole queue peeked: %q", got)
	}
	if got := chosenLabel(moveSpec{where: w, chosen: 277, peeked: 1932}); got != "those the w filter chooses in the whole queue (277 of the 1932 peeked)" {
		t.Errorf("part peeked: %q", got)
	}
	opts := scopeOptions(moveSpec{where: w, chosen: 3, allPeeked: true, depth: 1934, marked: []int{1}})
	var kinds []scopeKind
	for _, o := range opts {
		kinds = append(kinds, o.kind)
	}
	if !slices.Equal(kinds, []scopeKind{scopeMarked, scopeChosen, scopeFirstN, scopeAll}) {
		t.Errorf("scopes %v", kinds)
	}
}

// A w filter (with a space in it) chooses some of the queue; the move
// dialog offers exactly those, across the whole queue, and its dry run and
// move are move --where's: the same request, the same plan, and the
// chosen messages — only they — leave the queue.
func TestMoveTakesWhatTheWhereFilterChose(t *testing.T) {
	h, s := simHarness(t)
	all, err := s.Peek(t.Context(), sim.OrdersDLQ, broker.PeekOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	exprs := []string{"error~database deadlock"}
	where, _ := retry.ParseWhere(exprs)
	var want []string
	for _, m := range broker.Choose(all.Messages, where, all.PeekedAt) {
		want = append(want, m.Properties.MessageID)
	}
	if len(want) == 0 || len(want) == len(all.Messages) {
		t.Fatalf("the filter chooses %d of %d: the test needs some, not all", len(want), len(all.Messages))
	}
	h.key("w")
	h.typeText(`error~"database deadlock"`)
	h.key("enter")
	h.mustContain(itoa(len(want)) + " messages chosen by --where \"error~database deadlock\"")
	h.key("m")
	h.mustContain("the " + itoa(len(want)) + " chosen by the w filter")
	h.key("enter") // the dry run
	dlg := h.m.move
	if dlg.preview == nil || !slices.Equal(dlg.req.Where.Exprs(), exprs) || dlg.req.Limit != 0 || dlg.req.Positions != nil {
		t.Fatalf("dry run of %+v: %+v", dlg.req, dlg.preview)
	}
	h.mustContain("Move "+itoa(len(want))+" messages (those chosen by --where", "error~database deadlock")
	// move --where's own dry run (what the CLI asks the client for).
	cli, err := s.Move(t.Context(), broker.MoveRequest{From: sim.OrdersDLQ, To: dlg.req.To, Where: where, MaxMoves: broker.DefaultMaxMoves, DryRun: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(ps []broker.PlannedMove) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.MessageID)
		}
		slices.Sort(out)
		return out
	}
	slices.Sort(want)
	if got := ids(dlg.preview.Planned); !slices.Equal(got, want) || !slices.Equal(ids(cli.Planned), want) {
		t.Fatalf("planned %v; move --where plans %v; the filter chose %v", got, ids(cli.Planned), want)
	}
	h.key("enter") // move
	h.mustContain("Moved")
	after, err := s.Peek(t.Context(), sim.OrdersDLQ, broker.PeekOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, m := range after.Messages {
		left = append(left, m.Properties.MessageID)
	}
	for _, m := range all.Messages {
		id := m.Properties.MessageID
		if moved := !slices.Contains(left, id); moved != slices.Contains(want, id) {
			t.Errorf("%s: moved %v, chosen %v", id, moved, slices.Contains(want, id))
		}
	}
}
