package moveplan

import (
	"github.com/ladder-tui/ladder/retry"
	"strings"
	"testing"
	"time"
)

// --where expressions: parsing never panics, and a parsed one matches any
// subject (headers of every shape) without panicking.
func FuzzParseWhere(f *testing.F) {
	for _, s := range []string{"reason=rejected", "queue=orders.process", "origin=x:k", "error~time(out)?", "header:x-a=1",
		"header:x-b~^a", "body~\\d+", "age>5m", "age<1h30m", "retries>=3", "retries=0", "age>", "retries>=x", "error~("} {
		f.Add(s, "v")
	}
	f.Fuzz(func(t *testing.T, expr, value string) {
		w, err := ParseWhere(strings.Split(expr, " "))
		if err != nil {
			if w.Empty() != true {
				t.Fatalf("%q: an error with conditions", expr)
			}
			return
		}
		h := retry.Headers{"x-a": value, "x-b": []any{value, int64(3)}, "x-death": []any{retry.Headers{"reason": value, "queue": value, "count": int64(2)}}}
		s := SubjectOf(retry.Table{}, h, map[string]bool{value: true}, map[string]bool{value: true}, []byte(value), time.Unix(0, 0))
		w.Match(s, time.Unix(1e9, 0))
	})
}

// Move targets: whatever parses writes back as itself.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"origin", "original", "queue:q", "exchange:x", "exchange:x:k", "exchange::k", "queue:", "exchange:x:k:z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		if err != nil {
			return
		}
		back, err := ParseTarget(tg.String())
		if err != nil || back != tg {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, tg, tg.String(), back, err)
		}
	})
}
