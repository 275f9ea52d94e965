package present

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/internal/termtext"
)

// One ladder's queues share a long start: cut to 20 cells, each keeps the
// end that tells it from its siblings, from a separator, and the start.
func TestShortenNamesKeepsTheTailThatDiffers(t *testing.T) {
	names := []string{
		"registration_service",
		"registration_service.retry.5s",
		"registration_service.retry.30s",
		"registration_service.retry.5m",
		"registration_service.dlq",
	}
	got := ShortenNames(names, 20)
	want := []string{
		"registration_service", // fits: untouched
		"registratio…retry.5s",
		"registrati…retry.30s",
		"registratio…retry.5m",
		"registra…service.dlq",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%q → %q, want %q", names[i], got[i], want[i])
		}
	}
	// Fitted as the tables did before (cut at the end), they read alike.
	if termtext.Truncate(names[1], 20) != termtext.Truncate(names[3], 20) {
		t.Fatal("the example does not show the problem")
	}
}

// Names whose ends are the same (a name that is the end of another) are
// told apart by their start.
func TestShortenNamesFallsBackToTheStart(t *testing.T) {
	names := []string{"eu.orders.process.dead-letter", "us.orders.process.dead-letter", "orders.process.dead-letter"}
	got := ShortenNames(names, 14)
	if got[0] == got[1] || got[0] == got[2] || got[1] == got[2] {
		t.Fatalf("%q", got)
	}
	if !strings.HasPrefix(got[0], "eu") || !strings.HasPrefix(got[1], "us") {
		t.Errorf("%q", got)
	}
}

func TestShortenNamesShortAndNarrow(t *testing.T) {
	if got := ShortenNames([]string{"a", "bb", "ccc"}, 3); strings.Join(got, ",") != "a,bb,ccc" {
		t.Errorf("short names changed: %q", got)
	}
	if got := ShortenNames(nil, 10); len(got) != 0 {
		t.Errorf("%q", got)
	}
	for _, w := range []int{0, 1} {
		for _, s := range ShortenNames([]string{"abc", "abd"}, w) {
			if termtext.Width(s) > w {
				t.Errorf("width %d: %q", w, s)
			}
		}
	}
	// Repeated names are cut alike.
	if got := ShortenNames([]string{"same.long.name.x", "same.long.name.x"}, 8); got[0] != got[1] {
		t.Errorf("%q", got)
	}
}

// Wide runes count two cells and are never split: every cut name is a
// start and an end of the name, within width.
func TestShortenNamesWideRunes(t *testing.T) {
	names := []string{"注文サービス.再試行.5秒", "注文サービス.再試行.30秒", "注文サービス.デッドレター"}
	got := ShortenNames(names, 15)
	for i, s := range got {
		if w := termtext.Width(s); w > 15 {
			t.Errorf("%q is %d cells", s, w)
		}
		checkCut(t, names[i], s)
	}
	if got[0] == got[1] || !strings.HasSuffix(got[0], "5秒") || !strings.HasSuffix(got[1], "30秒") {
		t.Errorf("%q", got)
	}
}

// checkCut: s is n, or a start of n, an ellipsis and an end of n.
func checkCut(t *testing.T, n, s string) {
	t.Helper()
	if s == n {
		return
	}
	h, tl, ok := strings.Cut(s, termtext.Ellipsis)
	if !ok || !strings.HasPrefix(n, h) || !strings.HasSuffix(n, tl) {
		t.Errorf("%q is not a cut of %q", s, n)
	}
}

// Random columns: no cut name is wider than width or anything but a start
// and an end of its name, a name that fits is untouched, and two names
// read the same only when neither has a start or an end, within the room
// left by the ellipsis, that is its alone (checked by brute force).
func TestShortenNamesProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	parts := []string{"orders", "retry", "5s", "30s", "5m", "dlq", "a", "b", "service", "注文", ".", "_", "-"}
	for range 3000 {
		names := make([]string, 1+rng.IntN(6))
		for i := range names {
			var b strings.Builder
			for range 1 + rng.IntN(6) {
				b.WriteString(parts[rng.IntN(len(parts))])
			}
			names[i] = b.String()
		}
		w := rng.IntN(24)
		got := ShortenNames(names, w)
		for i, s := range got {
			if termtext.Width(names[i]) <= w && s != names[i] {
				t.Fatalf("width %d: %q fits but became %q", w, names[i], s)
			}
			if termtext.Width(s) > w {
				t.Fatalf("width %d: %q is %d cells", w, s, termtext.Width(s))
			}
			if w >= 2 {
				checkCut(t, names[i], s)
			}
		}
		for i := range got {
			for j := range got {
				if names[i] != names[j] && got[i] == got[j] && (ownEnd(names, i, w) || ownEnd(names, j, w)) {
					t.Fatalf("width %d: %q and %q both read %q; names %q", w, names[i], names[j], got[i], names)
				}
			}
		}
	}
}

// ownEnd: names[i] fits, or has a start or an end within width-1 cells
// that no other name of names starts or ends with (by brute force over
// runes: the test's names hold no combining marks).
func ownEnd(names []string, i, w int) bool {
	n := names[i]
	if termtext.Width(n) <= w {
		return true
	}
	if w < 2 {
		return false
	}
	rs := []rune(n)
	for k := 1; k <= len(rs); k++ {
		head, tail := string(rs[:k]), string(rs[len(rs)-k:])
		headOwn, tailOwn := termtext.Width(head) <= w-1, termtext.Width(tail) <= w-1
		for j, m := range names {
			if j == i || m == n {
				continue
			}
			headOwn = headOwn && !strings.HasPrefix(m, head)
			tailOwn = tailOwn && !strings.HasSuffix(m, tail)
		}
		if headOwn || tailOwn {
			return true
		}
	}
	return false
}
