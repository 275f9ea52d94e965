package movedialog

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/pace"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/ui/style"
)

// Read-only mode refuses the dialog's move and replay before their dry
// run, with the commands' error (usecase.RefuseReadOnly): nothing reaches
// the broker.
func TestReadOnlyRefusedBeforeTheDryRun(t *testing.T) {
	s := sim.New(sim.Options{Quiet: true, ReadOnly: true})
	defer s.Close()
	keys := keymap.Default()
	m := New(Env{Keys: &keys, Styles: style.New(style.DefaultTheme(), true),
		Client: func() Mover { return s }, Context: context.Background})
	for _, spec := range []Spec{{Queue: sim.OrdersDLQ, Depth: 3}, {Queue: sim.OrdersDLQ, ReplayFile: "d.jsonl"}} {
		m.Open(spec)
		cmd := m.preflight(broker.MoveRequest{From: sim.OrdersDLQ, To: moveplan.Target{Kind: moveplan.TargetOrigin}})
		what := "move from " + sim.OrdersDLQ
		if spec.ReplayFile != "" {
			what = "replay d.jsonl"
		}
		if cmd != nil || !errors.Is(m.err, broker.ErrReadOnly) || m.err.Error() != usecase.RefuseReadOnly(true, what).Error() {
			t.Errorf("read-only %s: %v (a dry run was started: %v)", what, m.err, cmd != nil)
		}
	}
}

// The dialog's confirm rule, driven through its keys on its own fake: the
// dry run asks the previewed scope (capped), and enter on the plan runs
// the move bound to it (each planned message expected, as many as were
// planned), paused by its own gate; a read-only session gets neither.
func TestConfirmedMoveRunsThePlanShown(t *testing.T) {
	f := &fakeMover{ready: []string{"m0", "m1", "m2"}}
	keys := keymap.Default()
	m := New(Env{Keys: &keys, Styles: style.New(style.DefaultTheme(), true),
		Client: func() Mover { return f }, Context: context.Background,
		AppKeys: func() []key.Binding { return nil }})
	m.SetSize(100, 30)
	const dlq = "orders.dlq"
	drive(m, m.Open(Spec{Queue: dlq, Depth: 3}))
	// Scope: the first N, then the whole queue; the target stays origin.
	drive(m, m.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}))
	if labels, at := m.Choices(FieldScope); !strings.HasPrefix(labels[at], "the whole queue") {
		t.Fatalf("scope %q, want the whole queue", labels[at])
	}
	enter := tea.KeyPressMsg{Code: tea.KeyEnter}
	drive(m, m.Update(enter))
	reqs := f.requests()
	if m.Step() != StepPreview || m.Preview() == nil || len(reqs) != 1 {
		t.Fatalf("after enter on the form: step %v, preview %v, requests %+v", m.Step(), m.Preview(), reqs)
	}
	dry := reqs[0]
	if !dry.DryRun || dry.Limit != usecase.PreviewCap || dry.From != dlq || dry.To.Kind != moveplan.TargetOrigin || dry.Expect != nil {
		t.Errorf("dry run asked %+v", dry)
	}
	if out := ansi.Strip(m.View()); !strings.Contains(out, "m0") {
		t.Errorf("the plan is not shown:\n%s", out)
	}

	drive(m, m.Update(enter))
	reqs = f.requests()
	if m.Step() != StepSummary || len(reqs) != 2 {
		t.Fatalf("after enter on the plan: step %v, requests %+v", m.Step(), reqs)
	}
	run := reqs[1]
	// The dry run's request, run for real: as many as were planned, each
	// expected on the route shown.
	want := dry
	want.DryRun, want.Limit, want.Expect, want.Hold = false, 3, m.Preview().Planned, run.Hold
	if run.Hold == nil || !reflect.DeepEqual(run, want) || len(run.Expect) != 3 || run.Expect[2].MessageID != "m2" {
		t.Errorf("the move ran\n%+v\nwant it bound to the plan shown:\n%+v", run, want)
	}
	if out := ansi.Strip(m.View()); !strings.Contains(out, "3 of 3") {
		t.Errorf("summary:\n%s", out)
	}

	ro := &fakeMover{ready: f.ready, readOnly: true}
	m.env.Client = func() Mover { return ro }
	drive(m, m.Open(Spec{Queue: dlq, Depth: 3}))
	drive(m, m.Update(enter))
	if reqs := ro.requests(); len(reqs) != 0 || !errors.Is(m.err, broker.ErrReadOnly) {
		t.Errorf("read-only: requests %+v, error %v", reqs, m.err)
	}
}

// The form takes what move and replay take on the command line, read by
// the same parsers: -n, --where, --rate and --max-moves reach the dry run
// and the move; a bad one is refused on the form with the command's words,
// and nothing is asked of the broker.
func TestFormTakesTheCommandsFlags(t *testing.T) {
	f := &fakeMover{ready: []string{"m0", "m1", "m2"}}
	keys := keymap.Default()
	m := New(Env{Keys: &keys, Styles: style.New(style.DefaultTheme(), true),
		Client: func() Mover { return f }, Context: context.Background,
		AppKeys: func() []key.Binding { return nil }})
	m.SetSize(100, 30)
	press := func(names ...string) {
		for _, n := range names {
			k := map[string]tea.KeyPressMsg{"tab": {Code: tea.KeyTab}, "enter": {Code: tea.KeyEnter}, "backspace": {Code: tea.KeyBackspace}}[n]
			drive(m, m.Update(k))
		}
	}
	typed := func(s string) {
		for _, r := range s {
			drive(m, m.Update(tea.KeyPressMsg{Code: r, Text: string(r)}))
		}
	}
	focus := func(want Field) {
		t.Helper()
		for range 12 {
			if m.Focus() == want {
				return
			}
			press("tab")
		}
		t.Fatalf("field %v never focused", want)
	}
	wipe := func() {
		for range 20 {
			press("backspace")
		}
	}
	drive(m, m.Open(Spec{Queue: "orders.dlq", Depth: 3}))
	if labels, at := m.Choices(FieldScope); labels[at] != "the first N" {
		t.Fatalf("scope %q", labels[at])
	}
	focus(FieldCount)
	wipe()
	typed("2")
	focus(FieldWhere)
	typed(`reason=rejected error~"card declined"`)
	focus(FieldRate)
	typed("50/s")
	focus(FieldMaxMoves)
	if got := m.Text(FieldMaxMoves); got != "5" {
		t.Errorf("the loop guard starts at %q, want the commands' default 5", got)
	}
	wipe()
	typed("2")
	press("enter")
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests %+v (form error %q)", reqs, m.formErr)
	}
	dry := reqs[0]
	wantWhere := []string{"reason=rejected", "error~card declined"}
	if dry.Limit != 2 || dry.Rate != 50 || dry.MaxMoves != 2 || !reflect.DeepEqual(dry.Where.Exprs(), wantWhere) {
		t.Errorf("dry run: limit %d rate %v max-moves %d where %q; want 2, 50, 2, %q", dry.Limit, dry.Rate, dry.MaxMoves, dry.Where.Exprs(), wantWhere)
	}
	if out := ansi.Strip(m.View()); !strings.Contains(out, "at most 50 a second") || !strings.Contains(joined(out), `the first 2 chosen by --where reason=rejected "error~card declined"`) {
		t.Errorf("the preview does not say the pace and the choice:\n%s", out)
	}
	press("enter")
	if reqs = f.requests(); len(reqs) != 2 || reqs[1].Rate != 50 || reqs[1].MaxMoves != 2 || reqs[1].Where.Empty() {
		t.Fatalf("the move ran %+v", reqs[len(reqs)-1])
	}

	// Bad values: the commands' errors, on the form.
	for field, bad := range map[Field]string{FieldRate: "fast", FieldMaxMoves: "-1", FieldWhere: "colour=red"} {
		drive(m, m.Open(Spec{Queue: "orders.dlq", Depth: 3}))
		focus(field)
		wipe()
		typed(bad)
		before := len(f.requests())
		press("enter")
		var want error
		switch field {
		case FieldRate:
			_, want = moveplan.ParseRate(bad)
		case FieldMaxMoves:
			_, want = moveplan.ParseMaxMoves(bad)
		case FieldWhere:
			_, want = moveplan.ParseWhereLine(bad)
		}
		if m.formErr != want.Error() || len(f.requests()) != before || m.Step() != StepForm {
			t.Errorf("%q: form error %q, want %q; %d requests more", bad, m.formErr, want, len(f.requests())-before)
		}
	}

	// Marks name their messages: no where field, and none applied.
	drive(m, m.Open(Spec{Queue: "orders.dlq", Depth: 3, Marked: []int{1}, IDs: map[int]string{1: "m1"}}))
	if slices.Contains(m.fields(), FieldWhere) {
		t.Errorf("a where field beside marked messages: %v", m.fields())
	}
}

// A replay from the dialog is replay with the same flags.
func TestReplayRequestKeepsTheFlags(t *testing.T) {
	w, err := moveplan.ParseWhereLine("retries>=2")
	if err != nil {
		t.Fatal(err)
	}
	g := &pace.Hold{}
	req := broker.MoveRequest{To: moveplan.Target{Kind: moveplan.TargetOriginal}, Delay: time.Second, Limit: 7, Where: w, Rate: 50,
		MaxMoves: 3, Force: true, ResetRetries: true, DryRun: true, Hold: g, Expect: []moveplan.Route{{Position: 1}}}
	got := replayRequest("d.jsonl", req)
	want := usecase.ReplayRequest{File: "d.jsonl", To: req.To, Delay: time.Second, Limit: 7, Where: w, Rate: 50, MaxMoves: 3, Force: true,
		ResetRetries: true, DryRun: true, Hold: g, Expect: req.Expect}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replay request\n%+v\nwant\n%+v", got, want)
	}
}
