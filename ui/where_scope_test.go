package ui

import (
	"slices"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

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
	where, _ := moveplan.ParseWhere(exprs)
	var want []string
	for _, m := range usecase.Choose(all.Messages, where, all.PeekedAt) {
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
	if dlg.Preview() == nil || !slices.Equal(dlg.Request().Where.Exprs(), exprs) || dlg.Request().Limit != 0 || dlg.Request().Positions != nil {
		t.Fatalf("dry run of %+v: %+v", dlg.Request(), dlg.Preview())
	}
	h.mustContain("Move "+itoa(len(want))+" messages (those chosen by --where", "error~database deadlock")
	// move --where's own dry run (what the CLI asks the client for).
	cli, err := s.Move(t.Context(), broker.MoveRequest{From: sim.OrdersDLQ, To: dlg.Request().To, Where: where, MaxMoves: dlg.Request().MaxMoves, DryRun: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(ps []moveplan.Route) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.MessageID)
		}
		slices.Sort(out)
		return out
	}
	slices.Sort(want)
	if got := ids(dlg.Preview().Planned); !slices.Equal(got, want) || !slices.Equal(ids(cli.Planned), want) {
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
