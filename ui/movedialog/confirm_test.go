package movedialog

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/ui/style"
)

// Read-only mode refuses the dialog's move and replay before their dry
// run, with the commands' error (broker.RefuseReadOnly): nothing reaches
// the broker.
func TestReadOnlyRefusedBeforeTheDryRun(t *testing.T) {
	s := sim.New(sim.Options{Quiet: true, ReadOnly: true})
	defer s.Close()
	keys := keymap.Default()
	m := New(Env{Keys: &keys, Styles: style.New(style.DefaultTheme(), true),
		Client: func() Mover { return s }, Context: context.Background})
	for _, spec := range []Spec{{Queue: sim.OrdersDLQ, Depth: 3}, {Queue: sim.OrdersDLQ, ReplayFile: "d.jsonl"}} {
		m.Open(spec)
		cmd := m.preflight(broker.MoveRequest{From: sim.OrdersDLQ, To: broker.Target{Kind: broker.TargetOrigin}})
		what := "move from " + sim.OrdersDLQ
		if spec.ReplayFile != "" {
			what = "replay d.jsonl"
		}
		if cmd != nil || !errors.Is(m.err, broker.ErrReadOnly) || m.err.Error() != broker.RefuseReadOnly(true, what).Error() {
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
	if !dry.DryRun || dry.Limit != broker.PreviewCap || dry.From != dlq || dry.To.Kind != broker.TargetOrigin || dry.Expect != nil {
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
	want.DryRun, want.Limit, want.Expect, want.Gate = false, 3, m.Preview().Planned, run.Gate
	if run.Gate == nil || !reflect.DeepEqual(run, want) || len(run.Expect) != 3 || run.Expect[2].MessageID != "m2" {
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
