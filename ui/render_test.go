package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui/style"
)

func newStylesForTest() *style.Styles { return style.New(style.DefaultTheme(), true) }

func TestSparkline(t *testing.T) {
	s := func(ds ...int64) []sample {
		out := make([]sample, len(ds))
		for i, d := range ds {
			out[i].depth = d
		}
		return out
	}
	for _, tc := range []struct {
		in    []sample
		width int
		want  string
	}{
		{s(), 4, "    "},
		{s(0, 0), 3, " ▁▁"},
		{s(0, 1, 70), 3, "▁▂█"}, // a small non-zero value is not drawn as zero
		{s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 4, "▅▆▇█"},
	} {
		if got := sparkline(tc.in, tc.width); got != tc.want {
			t.Errorf("sparkline(%v, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func TestRing(t *testing.T) {
	var r ring
	for i := range historyLen + 5 {
		r.push(sample{depth: int64(i)})
	}
	got := r.last(3, nil)
	if len(got) != 3 || got[0].depth != historyLen+2 || got[2].depth != historyLen+4 {
		t.Fatalf("last 3 = %+v", got)
	}
	h := newHistory()
	h.record(fixedNow, map[string]int64{"a": 1, "b": 2})
	h.record(fixedNow.Add(time.Second), map[string]int64{"a": 3})
	if _, ok := h.q["b"]; ok {
		t.Fatal("a deleted queue kept its history")
	}
	if r, ok := h.netRate("a"); !ok || r != 2 {
		t.Fatalf("net rate %v %v", r, ok)
	}
}

func TestDrainCell(t *testing.T) {
	for _, tc := range []struct {
		depth int64
		rs    rowStats
		want  string
	}{
		{0, rowStats{net: -5, netOK: true}, ""},
		{600, rowStats{net: -5, netOK: true}, "~2m"},
		{600, rowStats{net: 5, netOK: true}, "grow"},
		{600, rowStats{}, "–"},
		// A 30 s tier: what is in it leaves within 30 s, whatever the net
		// rate says (issue 21: "~16m" on a 30 s tier).
		{1000, rowStats{net: -1, netOK: true, ttl: 30 * time.Second}, "≤30s"},
		{1000, rowStats{net: 5, netOK: true, ttl: 30 * time.Second}, "≤30s"},
		{1000, rowStats{ttl: 30 * time.Second}, "≤30s"},
		{100, rowStats{net: -10, netOK: true, ttl: 30 * time.Second}, "~10s"},
		{1000, rowStats{net: -1, netOK: true, ttl: 80 * time.Second}, "≤2m"},
	} {
		if got := drainCell(tc.depth, tc.rs); got != tc.want {
			t.Errorf("drainCell(%d, %+v) = %q, want %q", tc.depth, tc.rs, got, tc.want)
		}
	}
}

func TestApproxUpNeverShortens(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second: "30s", 59*time.Second + time.Millisecond: "1m", 80 * time.Second: "2m",
		time.Hour: "1h", 61 * time.Minute: "2h", 47 * time.Hour: "47h", 49 * time.Hour: "3d", 72 * time.Hour: "3d",
	} {
		if got := approxUp(d); got != want {
			t.Errorf("approxUp(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestDrainBound(t *testing.T) {
	tier := retry.Queue{Name: "t", Type: retry.QueueClassic, Arguments: map[string]any{"x-message-ttl": int32(30000)}}
	if got := drainBound(&tier); got != 30*time.Second {
		t.Fatalf("tier: %v", got)
	}
	byPolicy := retry.Queue{Name: "p", Type: retry.QueueQuorum, Policy: map[string]any{"message-ttl": float64(5000)}}
	if got := drainBound(&byPolicy); got != 5*time.Second {
		t.Fatalf("policy TTL: %v", got)
	}
	held := tier
	held.Unacked = 1
	for name, q := range map[string]*retry.Queue{"unacked": &held, "no TTL": {Name: "q"}, "none": nil} {
		if got := drainBound(q); got != 0 {
			t.Errorf("%s: %v, want no bound", name, got)
		}
	}
}

func TestBadges(t *testing.T) {
	st := newStylesForTest()
	fs := []retry.Finding{{Code: retry.CodeStuck, Severity: retry.SeverityError}, {Code: retry.CodeNoDLQ, Severity: retry.SeverityWarning},
		{Code: retry.CodeNoConsumers, Severity: retry.SeverityInfo}}
	// Each badge carries its severity in a glyph: error and warning differ
	// without colour.
	if got := renderBadges(fs, 8, false, st).text; got != "✖STUCK+2" {
		t.Fatalf("narrow badges %q", got)
	}
	if got := renderBadges(fs, 40, false, st).text; got != "✖STUCK ▲NODLQ ℹNOCON" {
		t.Fatalf("short badges %q", got)
	}
	if got := renderBadges(fs, 40, true, st).text; got != "✖stuck ▲no-dlq ℹno-consumers" {
		t.Fatalf("wide badges %q", got)
	}
}

// Layouts add up to the width exactly, at and above 80 columns.
func TestLayoutsFillWidth(t *testing.T) {
	st := newStylesForTest()
	s := fixtureSnapshot()
	rows := buildHomeRows(s, "")
	msg := fixtureMessage(1)
	for w := 80; w <= 260; w += 7 {
		c := homeLayout(w)
		if got := ansi.StringWidth(renderHomeRow(&rows[1], rowStats{}, c, st, false, false)); got != w {
			t.Errorf("home row at %d is %d wide", w, got)
		}
		if got := ansi.StringWidth(renderHomeHeader(c, st)); got != w {
			t.Errorf("home header at %d is %d wide", w, got)
		}
		bc := browserLayout(w)
		if got := 2 + ansi.StringWidth(renderBrowserRow(&msg, bc, fixedNow)); got != w {
			t.Errorf("browser row at %d is %d wide", w, got)
		}
		if got := ansi.StringWidth(renderBrowserHeader(bc, st)); got != w {
			t.Errorf("browser header at %d is %d wide", w, got)
		}
	}
}

func TestBuildHomeRows(t *testing.T) {
	rows := buildHomeRows(fixtureSnapshot(), "")
	var got []string
	for _, r := range rows {
		if r.kind == rowSection {
			got = append(got, r.title)
		} else {
			got = append(got, r.name)
		}
	}
	want := "LADDERS (2)|orders|orders.retry.5s|orders.retry.1m|orders.delayed|orders.dlq|payments|payments.wait|OTHER QUEUES (2)|audit|" + evilQueue
	if strings.Join(got, "|") != want {
		t.Fatalf("rows %q", got)
	}
	if !rows[5].last || rows[4].last || !rows[7].last {
		t.Fatal("tree ends misplaced")
	}
	if len(rows[7].finds) != 1 || rows[7].finds[0].Code != retry.CodeStuck {
		t.Fatal("finding not attached to its queue")
	}
}

func TestAMQPTypes(t *testing.T) {
	for v, want := range map[any]string{
		"s": "longstr", int8(1): "byte (int8)", int16(1): "short (int16)", int32(1): "int (int32)",
		int64(1): "long (int64)", float32(1): "float (float32)", 1.5: "double (float64)", true: "bool",
		uint8(1): "ubyte (uint8)",
	} {
		if got := amqpType(v); got != want {
			t.Errorf("amqpType(%T) = %q, want %q", v, got, want)
		}
	}
	for _, tc := range []struct {
		v    any
		want string
	}{
		{[]byte("x"), "bytes"}, {fixedNow, "timestamp"}, {[]any{1, 2}, "array[2]"},
		{map[string]any{}, "table"}, {retry.Decimal{Scale: 2, Value: 425}, "decimal"}, {nil, "void"},
	} {
		if got := amqpType(tc.v); got != tc.want {
			t.Errorf("amqpType(%T) = %q, want %q", tc.v, got, tc.want)
		}
	}
	// Nested tables and decimals, as broker hands them over (plain values).
	lines := ansi.Strip(strings.Join(renderHeaders(retry.Headers{"t": map[string]any{"inner": int32(7), "d": retry.Decimal{Scale: 2, Value: 425}}}, 80, newStylesForTest()), "\n"))
	if !strings.Contains(lines, "inner") || !strings.Contains(lines, "int (int32)") || !strings.Contains(lines, "4.25") {
		t.Fatalf("nested table not shown:\n%s", lines)
	}
}

func TestRenderBody(t *testing.T) {
	lines, kind := renderBody([]byte(`{"a":[1,2]}`), "", 80)
	if kind != bodyJSON || strings.Join(lines, "\n") != "{\n  \"a\": [\n    1,\n    2\n  ]\n}" {
		t.Fatalf("json: %v %q", kind, lines)
	}
	lines, kind = renderBody([]byte("hello\tworld\r\nline2 \x1b[31m"), "text/plain", 80)
	if kind != bodyText || lines[0] != "hello   world" || lines[1] != `line2 \x1b[31m` {
		t.Fatalf("text: %v %q", kind, lines)
	}
	lines, kind = renderBody(append(make([]byte, 16), 0, 1, 2, 0xff, 'A'), "", 80)
	// hexdump -C: the ASCII column starts at the same place on every line.
	if kind != bodyBinary || len(lines) != 2 || !strings.HasPrefix(lines[1], "00000010  00 01 02 ff 41 ") ||
		!strings.HasSuffix(lines[1], "|....A|") || strings.Index(lines[0], "|") != 60 || strings.Index(lines[1], "|") != 60 {
		t.Fatalf("binary: %v %q", kind, lines)
	}
	lines, _ = renderBody([]byte(strings.Repeat("word ", 40)), "", 30)
	for _, l := range lines {
		if termtext.Width(l) > 30 {
			t.Fatalf("body line wider than the view: %q", l)
		}
	}
	if _, kind := renderBody(nil, "", 80); kind != bodyEmpty {
		t.Fatal("empty body")
	}
}

func TestBrowserCells(t *testing.T) {
	at := fixedNow
	for _, tc := range []struct {
		h    *retry.HoLMark
		want string
	}{
		{nil, "–"},
		{&retry.HoLMark{NeverDue: true}, "never"},
		{&retry.HoLMark{Overdue: 3 * time.Minute}, "late 3m"},
		{&retry.HoLMark{Overdue: 8*time.Minute + 24*time.Second}, "late 8m"},
		{&retry.HoLMark{Overdue: 45 * time.Second}, "late 45s"},
		{&retry.HoLMark{DueAt: at.Add(4 * time.Second)}, "4s"},
	} {
		if got := present.Due(tc.h, at, dueForm(false)); got != tc.want {
			t.Errorf("present.Due(%+v) = %q, want %q", tc.h, got, tc.want)
		}
	}
	if got := present.Blocked(&retry.HoLMark{Blocked: true, BlockedBy: 3}, true); got != "HoL←#3" {
		t.Errorf("holCell = %q", got)
	}
	if got := retryCell(retry.RetryState{Count: 3, Source: retry.SourceXDeath}, false); got != "3 xd" {
		t.Errorf("retryCell = %q", got)
	}
	if got := lastDeath([]retry.Death{{Queue: "q", Reason: retry.ReasonOther, RawReason: "weird"}}); got != "weird@q" {
		t.Errorf("lastDeath = %q", got)
	}
}

func TestParseTargetAndDelay(t *testing.T) {
	// As the command line's --to: a typed key is marked as given (HasKey),
	// or the live broker would keep each message's own key.
	for in, want := range map[string]broker.Target{
		"queue:orders":        {Kind: broker.TargetQueue, Name: "orders"},
		"exchange:x:a.b":      {Kind: broker.TargetExchange, Name: "x", RoutingKey: "a.b", HasKey: true},
		"exchange:x:":         {Kind: broker.TargetExchange, Name: "x", RoutingKey: "", HasKey: true},
		"exchange:x":          {Kind: broker.TargetExchange, Name: "x"},
		"exchange:x:key:with": {Kind: broker.TargetExchange, Name: "x", RoutingKey: "key:with", HasKey: true},
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
		if got, err := broker.ParseDelay(in); err != nil || got != want {
			t.Errorf("ParseDelay(%q) = %v, %v", in, got, err)
		}
	}
	// A bare number is refused, as --delay refuses it (a unit each).
	for _, bad := range []string{"", "-5s", "soon", "250"} {
		if _, err := broker.ParseDelay(bad); err == nil {
			t.Errorf("ParseDelay(%q) accepted", bad)
		}
	}
}

func TestMoveOptions(t *testing.T) {
	l := &fixtureSnapshot().Ladders[0]
	msg := fixtureMessage(0)
	spec := moveSpec{queue: "orders.dlq", ladder: l, depth: 12, cursor: &msg, marked: []int{1, 2}}
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

// The inspector says how often ladder moved the message (the loop guard's count).
func TestInspectorShowsLadderMoves(t *testing.T) {
	m := fixtureMessage(0)
	m.Headers = retry.Headers{retry.HeaderMoves: int32(4)}
	text := ansi.Strip(strings.Join(renderRetrySummary(&m, fixedNow, 80, newStylesForTest()), "\n"))
	if !strings.Contains(text, "4 times by ladder") {
		t.Errorf("%s", text)
	}
}

// A resource alarm on the broker: the move dialog says why nothing moves,
// in the broker's words made safe, and stops saying it when it clears.
func TestMoveProgressShowsBlockedBroker(t *testing.T) {
	req := broker.MoveRequest{To: broker.Target{Kind: broker.TargetQueue, Name: "orders"}}
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
