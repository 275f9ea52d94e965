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
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/style"
)

func newStylesForTest() *style.Styles { return style.New(style.DefaultTheme(), true) }

func TestSparkline(t *testing.T) {
	for _, tc := range []struct {
		in    []int64
		width int
		want  string
	}{
		{nil, 4, "    "},
		{[]int64{0, 0}, 3, " ▁▁"},
		{[]int64{0, 1, 70}, 3, "▁▂█"}, // a small non-zero value is not drawn as zero
		{[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 4, "▅▆▇█"},
	} {
		if got := sparkline(tc.in, tc.width); got != tc.want {
			t.Errorf("sparkline(%v, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func TestBadges(t *testing.T) {
	st := newStylesForTest()
	fs := []topology.Finding{{Code: topology.CodeStuck, Severity: topology.SeverityError}, {Code: topology.CodeNoDLQ, Severity: topology.SeverityWarning},
		{Code: topology.CodeNoConsumers, Severity: topology.SeverityInfo}}
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
		if got := ansi.StringWidth(renderHomeRow(&rows[1], broker.Trend{}, c, st, false, false)); got != w {
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
	if len(rows[7].finds) != 1 || rows[7].finds[0].Code != topology.CodeStuck {
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
		h    *topology.HoLMark
		want string
	}{
		{nil, "–"},
		{&topology.HoLMark{NeverDue: true}, "never"},
		{&topology.HoLMark{Overdue: 3 * time.Minute}, "late 3m"},
		{&topology.HoLMark{Overdue: 8*time.Minute + 24*time.Second}, "late 8m"},
		{&topology.HoLMark{Overdue: 45 * time.Second}, "late 45s"},
		{&topology.HoLMark{DueAt: at.Add(4 * time.Second)}, "4s"},
	} {
		if got := present.Due(tc.h, at, dueForm(false)); got != tc.want {
			t.Errorf("present.Due(%+v) = %q, want %q", tc.h, got, tc.want)
		}
	}
	if got := present.Blocked(&topology.HoLMark{Blocked: true, BlockedBy: 3}, true); got != "HoL←#3" {
		t.Errorf("holCell = %q", got)
	}
	if got := retryCell(retry.RetryState{Count: 3, Source: retry.SourceXDeath}, false); got != "3 xd" {
		t.Errorf("retryCell = %q", got)
	}
	// A framework's own counter is named by the framework's short name at
	// 80 columns, not cut: Sneakers' retry_info.num_attempts.
	st := retry.ReadState(retry.Headers{"retry_info": `{"num_attempts":6,"error":"x"}`}, nil)
	if got := retryCell(st, false); got != "5 snk" {
		t.Errorf("retryCell(Sneakers) = %q, want 5 snk", got)
	}
	for _, c := range retry.Conventions() {
		if c.Short == "" || len(c.Short) > 3 {
			t.Errorf("%s: short name %q, want 1 to 3 letters", c.Name, c.Short)
		}
	}
	if got := lastDeath([]retry.Death{{Queue: "q", Reason: retry.ReasonOther, RawReason: "weird"}}); got != "weird@q" {
		t.Errorf("lastDeath = %q", got)
	}
}

// The inspector says how often ladder moved the message (the loop guard's count).
func TestInspectorShowsLadderMoves(t *testing.T) {
	m := fixtureMessage(0)
	m.Headers = retry.Headers{moveplan.HeaderMoves: int32(4)}
	text := ansi.Strip(strings.Join(renderRetrySummary(&m, fixedNow, 80, newStylesForTest()), "\n"))
	if !strings.Contains(text, "4 times by ladder") {
		t.Errorf("%s", text)
	}
}

// A count and an error read from names alone (no convention) say so in
// the browser's cell and the inspector: where, and that it is a guess.
func TestGuessedCountAndErrorSayHowTheyAreKnown(t *testing.T) {
	m := fixtureMessage(0)
	m.Headers = retry.Headers{"x-attempts": int32(3), "x-error": "payment service unavailable"}
	m.Retry = retry.ReadState(m.Headers, nil)
	if got := retryCell(m.Retry, false); got != "~2 gss" {
		t.Errorf("retryCell = %q, want ~2 gss", got)
	}
	text := ansi.Strip(strings.Join(renderRetrySummary(&m, fixedNow, 120, newStylesForTest()), "\n"))
	for _, want := range []string{"~2 (from header x-attempts, guessed: attempts made, less the first)", "payment service unavailable (x-error, guessed)"} {
		if !strings.Contains(text, want) {
			t.Errorf("inspector lacks %q:\n%s", want, text)
		}
	}
}
