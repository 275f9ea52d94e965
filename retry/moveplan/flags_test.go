package moveplan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry/moveplan"
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
		got, err := moveplan.SplitWhere(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`error~"open`, `body~'open`} {
		if _, err := moveplan.SplitWhere(bad); err == nil || !strings.Contains(err.Error(), "is not closed") {
			t.Errorf("%q: %v", bad, err)
		}
		if _, err := moveplan.ParseWhereLine(bad); err == nil || !strings.Contains(err.Error(), "is not closed") {
			t.Errorf("line %q: %v", bad, err)
		}
	}
	// What present.WhereText writes, SplitWhere and ParseWhereLine read back.
	exprs := []string{"error~database deadlock", `body~a"b\sc`, `error~\d+`, "reason=expired", "header:k=it's"}
	w, err := moveplan.ParseWhere(exprs)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := moveplan.SplitWhere(present.WhereText(w)); err != nil || !slices.Equal(back, exprs) {
		t.Errorf("round trip of %q: %q %v (text %s)", exprs, back, err, present.WhereText(w))
	}
	if back, err := moveplan.ParseWhereLine(present.WhereText(w)); err != nil || !slices.Equal(back.Exprs(), exprs) {
		t.Errorf("line round trip of %q: %q %v", exprs, back.Exprs(), err)
	}
	if _, err := moveplan.ParseWhereLine("retries>=x"); err == nil || !strings.Contains(err.Error(), `--where "retries>=x"`) {
		t.Errorf("a bad expression on a line: %v", err)
	}
}

// One reading of a rate and a loop guard for the command line and the UI.
func TestParseRateAndMaxMoves(t *testing.T) {
	for in, want := range map[string]float64{"": 0, " ": 0, "50": 50, "50/s": 50, " 50/s ": 50, "120/m": 2, "30/min": 0.5, "0.5/s": 0.5} {
		if got, err := moveplan.ParseRate(in); err != nil || got != want {
			t.Errorf("rate %q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"0", "-1/s", "fast", "50/h", "NaN", "Inf/s", "/s"} {
		if got, err := moveplan.ParseRate(bad); err == nil || !strings.HasPrefix(err.Error(), "--rate ") {
			t.Errorf("rate %q: %v %v, want an error naming --rate", bad, got, err)
		}
	}
	for in, want := range map[string]int{"": 0, "0": 0, "5": 5, " 12 ": 12} {
		if got, err := moveplan.ParseMaxMoves(in); err != nil || got != want {
			t.Errorf("max-moves %q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"-1", "x", "2.5"} {
		if got, err := moveplan.ParseMaxMoves(bad); err == nil || !strings.HasPrefix(err.Error(), "--max-moves ") {
			t.Errorf("max-moves %q: %v %v, want an error naming --max-moves", bad, got, err)
		}
	}
}
