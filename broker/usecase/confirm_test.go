package usecase

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// confirmRun records what ConfirmThenBind dry-ran, answering with plan (or
// first refusing the read for want of a yes when refuse).
type confirmRun struct {
	dries  []broker.MoveRequest
	plan   *broker.MoveReport
	refuse bool
}

func (r *confirmRun) dryRun(_ context.Context, req broker.MoveRequest) (*broker.MoveReport, error) {
	r.dries = append(r.dries, req)
	if r.refuse && !req.ForcePeek {
		return nil, &broker.PeekRefused{Queue: req.From, Why: "it counts a delivery", Kind: broker.ErrPeekCostsDelivery}
	}
	return r.plan, nil
}

func planOf(n int) *broker.MoveReport {
	rep := &broker.MoveReport{Requested: n, DryRun: true}
	for i := range min(n, 3) {
		rep.Planned = append(rep.Planned, moveplan.Route{Position: i, MessageID: "m"})
	}
	return rep
}

// The one cap: a queue's whole-source dry run plans at most PreviewCap
// messages, and a run confirmed from a cut preview is not bound to its
// count (the rest are planned as they move); under the cap it takes as
// many as were planned. A dump file's dry run is never cut.
func TestConfirmThenBindCapsTheQueuesPreview(t *testing.T) {
	for _, c := range []struct {
		name               string
		req                broker.MoveRequest
		file               bool
		requested          int
		dryLimit, runLimit int
	}{
		{"whole queue, under the cap", broker.MoveRequest{From: "q"}, false, 40, PreviewCap, 40},
		{"whole queue, at the cap", broker.MoveRequest{From: "q"}, false, PreviewCap, PreviewCap, 0},
		{"a limit over the cap", broker.MoveRequest{From: "q", Limit: 20000}, false, PreviewCap, PreviewCap, 20000},
		{"a limit under the cap, fewer ready", broker.MoveRequest{From: "q", Limit: 50}, false, 7, 50, 7},
		{"positions", broker.MoveRequest{From: "q", Positions: []int{1, 2}}, false, 2, 0, 0},
		{"a dump file", broker.MoveRequest{From: "f.jsonl"}, true, 30000, 0, 0},
	} {
		run := &confirmRun{plan: planOf(c.requested)}
		asked := 0
		got, err := ConfirmThenBind(t.Context(), c.req, Confirmation{What: "move from q", File: c.file, DryRun: run.dryRun,
			Ask: func(*broker.MoveReport) error { asked++; return nil }})
		if err != nil || asked != 1 || len(run.dries) != 1 {
			t.Fatalf("%s: %v, asked %d, dry runs %d", c.name, err, asked, len(run.dries))
		}
		if d := run.dries[0]; !d.DryRun || d.Limit != c.dryLimit {
			t.Errorf("%s: dry run %+v, want limit %d", c.name, d, c.dryLimit)
		}
		if got.DryRun || got.Limit != c.runLimit || len(got.Expect) != len(run.plan.Planned) {
			t.Errorf("%s: run limit %d dry %v expect %d, want limit %d bound to the plan", c.name, got.Limit, got.DryRun, len(got.Expect), c.runLimit)
		}
	}
}

// A preview refused for the delivery its read counts is run again on the
// user's yes, and the run carries that yes; a no, nothing ready or a no to
// the plan end it unbound.
func TestConfirmThenBindConsentAndRefusals(t *testing.T) {
	run := &confirmRun{plan: planOf(3), refuse: true}
	got, err := ConfirmThenBind(t.Context(), broker.MoveRequest{From: "q"}, Confirmation{What: "move from q", DryRun: run.dryRun,
		Consent: func(err error, dry broker.MoveRequest) bool {
			return errors.Is(err, broker.ErrPeekCostsDelivery) && !dry.ForcePeek
		},
		Ask: func(*broker.MoveReport) error { return nil }})
	if err != nil || len(run.dries) != 2 || !run.dries[1].ForcePeek || !got.ForcePeek || got.Limit != 3 {
		t.Fatalf("consent: %+v %v (dry runs %+v)", got, err, run.dries)
	}
	run = &confirmRun{plan: planOf(3), refuse: true}
	if _, err := ConfirmThenBind(t.Context(), broker.MoveRequest{From: "q"}, Confirmation{What: "move from q", DryRun: run.dryRun,
		Ask: func(*broker.MoveReport) error { t.Fatal("asked without a plan"); return nil }}); !errors.Is(err, broker.ErrPeekCostsDelivery) {
		t.Errorf("no consent: %v", err)
	}
	for _, c := range []struct {
		file bool
		want string
	}{{false, "move from q: no message is ready: nothing to move"}, {true, "replay f: no line to publish: nothing to replay"}} {
		run = &confirmRun{plan: planOf(0)}
		what := "move from q"
		if c.file {
			what = "replay f"
		}
		_, err := ConfirmThenBind(t.Context(), broker.MoveRequest{From: "q"}, Confirmation{What: what, File: c.file, DryRun: run.dryRun,
			Ask: func(*broker.MoveReport) error { t.Fatal("asked with nothing to move"); return nil }})
		if err == nil || err.Error() != c.want {
			t.Errorf("nothing ready: %v, want %q", err, c.want)
		}
	}
	no := errors.New("cancelled")
	run = &confirmRun{plan: planOf(3)}
	if got, err := ConfirmThenBind(t.Context(), broker.MoveRequest{From: "q"}, Confirmation{What: "move from q", DryRun: run.dryRun,
		Ask: func(*broker.MoveReport) error { return no }}); !errors.Is(err, no) || got.Expect != nil {
		t.Errorf("a no: %+v %v", got, err)
	}
}

func TestRefuseReadOnly(t *testing.T) {
	err := RefuseReadOnly(true, "move from q")
	if !errors.Is(err, broker.ErrReadOnly) || err.Error() != "move from q: "+broker.ErrReadOnly.Error() {
		t.Errorf("read-only: %v", err)
	}
	if err := RefuseReadOnly(false, "move from q"); err != nil {
		t.Errorf("writable: %v", err)
	}
}

// One rule for --delay and the TUI: a unit each; a bare number is refused
// with what to type.
func TestParseDelay(t *testing.T) {
	for in, want := range map[string]time.Duration{"500ms": 500 * time.Millisecond, "30s": 30 * time.Second, " 5m ": 5 * time.Minute, "1h30m": 90 * time.Minute, "0": 0, "0s": 0} {
		if got, err := ParseDelay(in); err != nil || got != want {
			t.Errorf("ParseDelay(%q) = %v, %v", in, got, err)
		}
	}
	for in, want := range map[string]string{
		"500":  `delay "500": add a unit (500ms, 30s, 5m)`,
		"1.5":  `delay "1.5": add a unit (1.5ms, 30s, 5m)`,
		"-5s":  `delay "-5s": must not be negative`,
		"soon": `delay "soon": want a duration with its unit (500ms, 30s, 5m)`,
		"":     `delay "": want a duration with its unit (500ms, 30s, 5m)`,
	} {
		_, err := ParseDelay(in)
		if err == nil || err.Error() != want || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseDelay(%q): %v, want %q", in, err, want)
		}
	}
}
