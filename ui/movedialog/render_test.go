package movedialog

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/style"
)

// The dialog's pure parts: its renderers, its options and its parsing.

func newStylesForTest() *style.Styles { return style.New(style.DefaultTheme(), true) }

// joined is the text with its line breaks taken out, so a phrase wrapped
// across lines is found whole.
func joined(out string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		b.WriteString(strings.TrimSpace(l) + " ")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// Singular and plural, scope, via names, rate (the UI's wording test
// keeps the screens' part).
func TestMoveWording(t *testing.T) {
	if got := describeTarget(moveplan.Target{Kind: moveplan.TargetOrigin}, 1, nil); got != "its origin" {
		t.Errorf("one message goes to %q", got)
	}
	if got := describeTarget(moveplan.Target{Kind: moveplan.TargetOrigin}, 2, nil); got != "their origin" {
		t.Errorf("two messages go to %q", got)
	}
	if got := describeScope(broker.MoveRequest{Limit: 500}, 22); strings.Contains(got, "500 messages") || !strings.Contains(got, "all that are ready") {
		t.Errorf("first 500 of 22 ready: %q", got)
	}
	if got := describeScope(broker.MoveRequest{Limit: 1}, 1); got != "the first message" {
		t.Errorf("first 1: %q", got)
	}
	st := newStylesForTest()
	req := broker.MoveRequest{From: "q", To: moveplan.Target{Kind: moveplan.TargetQueue, Name: "orders"}, Delay: 5 * time.Minute}
	rep := &broker.MoveReport{Requested: 2, Moved: 2, Via: map[topology.Via]int{topology.ViaDelayQueue: 2}, Routes: []moveplan.RouteCount{{Via: topology.ViaDelayQueue, Through: "ladder.delay.300000.default.orders.ab12", Count: 2}}, DelayMS: 300000, Target: "queue:orders"}
	all := ansi.Strip(strings.Join(renderMovePreview("q", req, rep, nil, 76, 20, st, nil), "\n") + strings.Join(renderMoveSummary("q", req, rep, nil, 76, st, nil), "\n"))
	if strings.Contains(all, "delay_queue") || !strings.Contains(all, "2 via a ladder delay queue") {
		t.Errorf("raw via shown:\n%s", all)
	}
	if got := progressLine(broker.MoveProgress{Total: 1, Done: 1, Moved: 1, Elapsed: 26 * time.Millisecond}); strings.Contains(got, "msg/s") {
		t.Errorf("rate shown for a move of 26ms: %q", got)
	}

}

// 7. A move that skipped everything is a result with its reasons, not a
// crash; the dry run shows a skipped message's reason only.
func TestSkippedMoveWording(t *testing.T) {
	st := newStylesForTest()
	req := broker.MoveRequest{From: "orders.dlq", To: moveplan.Target{Kind: moveplan.TargetOrigin}}
	rep := &broker.MoveReport{Requested: 6, Skipped: 6, Target: "origin"}
	for i := range 6 {
		rep.Planned = append(rep.Planned, moveplan.Route{Position: i, MessageID: "m" + strconv.Itoa(i), Skip: "no x-death origin: it was never dead-lettered\x1b[31m"})
	}
	err := fmt.Errorf("move from orders.dlq: moved 0 of 6 (0 returned, 0 failed, 6 skipped): %w", broker.ErrPartial)
	out := ansi.Strip(strings.Join(renderMoveSummary("orders.dlq", req, rep, err, 76, st, nil), "\n"))
	for _, want := range []string{"Nothing moved: all 6 messages stay in orders.dlq", "#0 m0: no x-death origin", `\x1b[31m`, "… 2 more"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "move stopped") || strings.Contains(out, "#4 m4") {
		t.Errorf("summary:\n%s", out)
	}
	// Partly moved: a result too.
	rep2 := &broker.MoveReport{Requested: 3, Moved: 2, Skipped: 1, Planned: rep.Planned[:1]}
	out = ansi.Strip(strings.Join(renderMoveSummary("orders.dlq", req, rep2, err, 76, st, nil), "\n"))
	if !strings.Contains(out, "Moved 2 of 3; 1 stays in orders.dlq") || strings.Contains(out, "move stopped") {
		t.Errorf("partial summary:\n%s", out)
	}
	// Stopped on purpose: what moved and what stays, not "context canceled".
	rep3 := &broker.MoveReport{Requested: 10, Moved: 4}
	stopped := fmt.Errorf("move from orders.dlq: %w: %w", context.Canceled, broker.ErrPartial)
	out = ansi.Strip(strings.Join(renderMoveSummary("orders.dlq", req, rep3, stopped, 76, st, nil), "\n"))
	if !strings.Contains(out, "move stopped by you: 4 moved, 6 stay in orders.dlq") || strings.Contains(out, "context canceled") {
		t.Errorf("cancelled summary:\n%s", out)
	}
	// Stopped by anything else: an error, with its cause.
	out = ansi.Strip(strings.Join(renderMoveSummary("orders.dlq", req, rep3, fmt.Errorf("move from orders.dlq: channel closed: %w", broker.ErrPartial), 76, st, nil), "\n"))
	if !strings.Contains(out, "move stopped: move from orders.dlq: channel closed") {
		t.Errorf("failed summary:\n%s", out)
	}

	dry := &broker.MoveReport{Requested: 2, Planned: []moveplan.Route{
		{Position: 0, MessageID: "a", Skip: "no x-death origin"},
		{Position: 1, MessageID: "b", Exchange: "orders-x", RoutingKey: "orders.created"},
	}}
	out = ansi.Strip(strings.Join(renderMovePreview("orders.dlq", req, dry, nil, 76, 20, st, nil), "\n"))
	if !strings.Contains(out, "#0 a: skipped: no x-death origin") || strings.Contains(out, `default exchange key ""`) ||
		!strings.Contains(out, "1 message will be skipped; it stays in orders.dlq") || !strings.Contains(out, `#1 b → exchange orders-x key "orders.created"`) {
		t.Errorf("preview:\n%s", out)
	}
}

// The move dialog at 80 columns wraps what it used to cut: the paused
// line, and dry-run rows whose end names the tier and the note.
func TestMoveDialogWrapsAt80(t *testing.T) {
	st := newStylesForTest()
	const w = 76
	req := broker.MoveRequest{From: "orders.dlq", To: moveplan.Target{Kind: moveplan.TargetOrigin}, Delay: 5 * time.Second}
	check := func(what string, lines []string, wants ...string) {
		t.Helper()
		for _, l := range lines {
			if termtext.Width(ansi.Strip(l)) > w {
				t.Errorf("%s: line wider than %d: %q", what, w, ansi.Strip(l))
			}
		}
		out := joined(ansi.Strip(strings.Join(lines, "\n")))
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", what, want, strings.Join(lines, "\n"))
			}
		}
	}
	check("progress", renderMoveProgress("orders.dlq", req, broker.MoveProgress{Total: 10, Done: 2}, "", false, true, w, st, nil),
		"in-flight confirms still settle)")
	rep := &broker.MoveReport{Requested: 3, Planned: []moveplan.Route{
		{Position: 0, MessageID: "msg-0000", Exchange: "orders-x", RoutingKey: "orders.created", Via: topology.ViaTier, Queue: "orders.retry.5s",
			Note: "held at position 0, behind nothing: due now"},
		{Position: 1, MessageID: "msg-0001", Exchange: "orders-x", RoutingKey: "orders.created", Via: topology.ViaTier, Queue: "orders.retry.5s"},
		{Position: 2, MessageID: "msg-0002", Skip: "no x-death origin: it was never dead-lettered"},
	}}
	check("preview", renderMovePreview("orders.dlq", req, rep, nil, w, 20, st, nil),
		"via tier orders.retry.5s (held at position 0, behind nothing: due now)",
		"#1 msg-0001 → exchange orders-x key \"orders.created\" · via tier orders.retry.5s",
		"1 message will be skipped; it stays in orders.dlq")
	// With too little room, the rows that do not fit are counted.
	check("short preview", renderMovePreview("orders.dlq", req, rep, nil, w, 13, st, nil), "held at position 0, behind nothing: due now", "… 2 more")
}

// A note every planned row shares is said once, below the rows, not on
// each (which left room for one row at 80×24).
func TestMovePreviewSaysASharedNoteOnce(t *testing.T) {
	note := "enters tier orders.wait.5s through headers exchange orders.retry with retry-tier=orders.wait.5s"
	rep := &broker.MoveReport{Requested: 3, Notes: []string{note}}
	for i := range 3 {
		rep.Planned = append(rep.Planned, moveplan.Route{Position: i, MessageID: "m" + string(rune('0'+i)), Exchange: "orders.retry",
			RoutingKey: "orders.created", Via: topology.ViaTier, Queue: "orders.wait.5s", Note: note})
	}
	req := broker.MoveRequest{From: "orders.dlq", To: moveplan.Target{Kind: moveplan.TargetOrigin}, Delay: 5 * time.Second}
	out := joined(ansi.Strip(strings.Join(renderMovePreview("orders.dlq", req, rep, nil, 76, 17, newStylesForTest(), nil), "\n")))
	if n := strings.Count(out, "through headers exchange"); n != 1 {
		t.Errorf("note said %d times:\n%s", n, out)
	}
	if !strings.Contains(out, "#2 m2") {
		t.Errorf("rows cut:\n%s", out)
	}
}

// The preview names every queue each route reaches (the question and each
// row), and says when a broker crash during the wait can lose messages.
func TestMovePreviewNamesEveryQueueReached(t *testing.T) {
	risk := "a broker crash while it waits in tier orders.wait.5s can lose it"
	rep := &broker.MoveReport{Requested: 2, Notes: []string{risk}, Planned: []moveplan.Route{
		{Position: 0, MessageID: "m0", Exchange: "orders", RoutingKey: "k", Via: topology.ViaTier, Queue: "orders.wait.5s", Reaches: []string{"orders.audit", "orders.billing"}, CrashRisk: risk},
		{Position: 1, MessageID: "m1", RoutingKey: "orders.audit", Via: topology.ViaDelayQueue, Queue: "ladder.delay.5000.x", Reaches: []string{"orders.audit"}},
	}}
	req := broker.MoveRequest{From: "orders.dlq", To: moveplan.Target{Kind: moveplan.TargetExchange, Name: "orders"}, Delay: 5 * time.Second}
	out := joined(ansi.Strip(strings.Join(renderMovePreview("orders.dlq", req, rep, nil, 76, 24, newStylesForTest(), nil), "\n")))
	for _, want := range []string{
		"reaching 1 → orders.audit + orders.billing, 1 → orders.audit?",
		"#0 m0 → exchange orders key \"k\" · via tier orders.wait.5s · reaches orders.audit, orders.billing",
		"#1 m1 → default exchange key \"orders.audit\" · via a ladder delay queue ladder.delay.5000.x · reaches orders.audit",
		"A broker crash during the wait can lose 1 of them (why below)",
		risk,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("preview lacks %q:\n%s", want, out)
		}
	}
}

func TestParseTargetAndDelay(t *testing.T) {
	// As the command line's --to: a typed key is marked as given (HasKey),
	// or the live broker would keep each message's own key.
	for in, want := range map[string]moveplan.Target{
		"queue:orders":        {Kind: moveplan.TargetQueue, Name: "orders"},
		"exchange:x:a.b":      {Kind: moveplan.TargetExchange, Name: "x", RoutingKey: "a.b", HasKey: true},
		"exchange:x:":         {Kind: moveplan.TargetExchange, Name: "x", RoutingKey: "", HasKey: true},
		"exchange:x":          {Kind: moveplan.TargetExchange, Name: "x"},
		"exchange:x:key:with": {Kind: moveplan.TargetExchange, Name: "x", RoutingKey: "key:with", HasKey: true},
	} {
		if got, err := parseTarget(in); err != nil || got != want {
			t.Errorf("parseTarget(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "queue:", "orders", "exchange::orders", "origin", "topic:x"} {
		if _, err := parseTarget(bad); err == nil {
			t.Errorf("parseTarget(%q) accepted", bad)
		}
	}
	for in, want := range map[string]time.Duration{"90s": 90 * time.Second, "1m30s": 90 * time.Second, "250ms": 250 * time.Millisecond} {
		if got, err := usecase.ParseDelay(in); err != nil || got != want {
			t.Errorf("ParseDelay(%q) = %v, %v", in, got, err)
		}
	}
	// A bare number is refused, as --delay refuses it (a unit each).
	for _, bad := range []string{"", "-5s", "soon", "250"} {
		if _, err := usecase.ParseDelay(bad); err == nil {
			t.Errorf("ParseDelay(%q) accepted", bad)
		}
	}
}

func TestMoveOptions(t *testing.T) {
	l := &retry.Ladder{Main: "orders", DLQ: "orders.dlq", Tiers: []retry.Tier{
		{Queue: "orders.retry.5s", TTL: 5 * time.Second}, {Queue: "orders.retry.1m", TTL: time.Minute}}}
	msg := broker.Message{Position: 0, Retry: retry.RetryState{Count: 3}}
	spec := Spec{Queue: "orders.dlq", Ladder: l, Depth: 12, Cursor: &msg, Marked: []int{1, 2}}
	var targets []string
	for _, o := range targetOptions(spec) {
		targets = append(targets, o.label)
	}
	if got := strings.Join(targets, "|"); got != "origin (the queue each message failed in)|main queue orders|tier orders.retry.5s (5s)|tier orders.retry.1m (1m)|typed" {
		t.Fatalf("targets %q", got)
	}
	p := &retry.Policy{Backoff: retry.BackoffExponential, Base: 5 * time.Second, Factor: 5}
	var delays []string
	for _, o := range delayOptions(spec, p) {
		delays = append(delays, o.label)
	}
	// The message has 3 retries: the policy's next is attempt 4, 5s × 5³.
	if got := strings.Join(delays, "|"); got != "none (publish now)|5s (TTL of orders.retry.5s)|1m (TTL of orders.retry.1m)|10m25s (policy, attempt 4)|typed" {
		t.Fatalf("delays %q", got)
	}
	var scopes []string
	for _, o := range scopeOptions(spec) {
		scopes = append(scopes, o.label)
	}
	if got := strings.Join(scopes, "|"); got != "marked messages (2)|this message (#0)|the first N|the whole queue (12 ready)" {
		t.Fatalf("scopes %q", got)
	}
}

func TestProgressLine(t *testing.T) {
	got := progressLine(broker.MoveProgress{Total: 100, Done: 25, Moved: 24, Failed: 1, Elapsed: 5 * time.Second})
	if got != "25 of 100 · 5.0 msg/s · 75 left · ETA 15s · moved 24 · failed 1" {
		t.Fatalf("progress %q", got)
	}
}

// A resource alarm on the broker: the move dialog says why nothing moves,
// in the broker's words made safe, and stops saying it when it clears.
func TestMoveProgressShowsBlockedBroker(t *testing.T) {
	req := broker.MoveRequest{To: moveplan.Target{Kind: moveplan.TargetQueue, Name: "orders"}}
	p := broker.MoveProgress{Total: 10, Done: 3, Moved: 3, Blocked: "low on memory\x1b[2J"}
	text := ansi.Strip(strings.Join(renderMoveProgress("orders.dlq", req, p, "", false, false, 80, newStylesForTest(), nil), "\n"))
	if !strings.Contains(text, "broker is blocking publishes (low on memory\\x1b[2J); waiting") {
		t.Fatalf("no blocked line:\n%s", text)
	}
	p.Blocked = ""
	text = ansi.Strip(strings.Join(renderMoveProgress("orders.dlq", req, p, "", false, false, 80, newStylesForTest(), nil), "\n"))
	if strings.Contains(text, "blocking") {
		t.Fatalf("still blocked once cleared:\n%s", text)
	}
}

// The scope names how many the filter chose, and says when the peek did
// not see the whole queue (the dry run counts the rest).
func TestChosenScopeSaysWhatItCounted(t *testing.T) {
	w, _ := moveplan.ParseWhere([]string{"reason=rejected"})
	if got := chosenLabel(Spec{Where: w, Chosen: 277, Peeked: 1932, AllPeeked: true}); got != "the 277 chosen by the w filter" {
		t.Errorf("whole queue peeked: %q", got)
	}
	if got := chosenLabel(Spec{Where: w, Chosen: 277, Peeked: 1932}); got != "those the w filter chooses in the whole queue (277 of the 1932 peeked)" {
		t.Errorf("part peeked: %q", got)
	}
	opts := scopeOptions(Spec{Where: w, Chosen: 3, AllPeeked: true, Depth: 1934, Marked: []int{1}})
	var kinds []scopeKind
	for _, o := range opts {
		kinds = append(kinds, o.kind)
	}
	if !slices.Equal(kinds, []scopeKind{scopeMarked, scopeChosen, scopeFirstN, scopeAll}) {
		t.Errorf("scopes %v", kinds)
	}
}
