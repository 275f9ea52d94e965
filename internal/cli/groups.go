package cli

import (
	"os"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
)

// termWidth is the width of w when it is a terminal, else 0 (no limit:
// piped text keeps every key whole).
func termWidth(w any) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return 0
	}
	cols, _, err := term.GetSize(f.Fd())
	if err != nil {
		return 0
	}
	return cols
}

// renderGroups draws peek --group-by's groups: how much of the queue they
// cover (and, short of it, why), which time FIRST and LAST are, then a row
// per group (count, first and last time, key; the kind of time when groups
// differ in it) and under it one message's error in full, as an example.
// Within width cells (0: no limit) keys keep both ends (present.FitCause).
func renderGroups(b *strings.Builder, r *usecase.GroupedPeek, width int) {
	if c := r.Grouping; c != nil {
		b.WriteString(clean(present.Grouped(*c)) + "\n")
	}
	if t := present.GroupTimes(r.Groups, r.Queue); t != "" {
		b.WriteString(clean(t) + "\n")
	}
	b.WriteString("\n")
	countW := len("COUNT")
	for _, g := range r.Groups {
		countW = max(countW, len(strconv.Itoa(g.Count)))
	}
	const seenW, lastW = len("FIRST SEEN"), len("LAST SEEN")
	mixed := present.GroupTimesMixed(r.Groups)
	timeW := 0
	if mixed {
		timeW = len("1st death") + 2
	}
	lead := countW + 2 + seenW + 2 + lastW + 2 + timeW
	by := usecase.GroupError
	if r.Grouping != nil {
		by = r.Grouping.By
	}
	fit := func(s string, w int) string {
		if width <= 0 {
			return s
		}
		return present.FitGroupKey(s, by, max(w, 10))
	}
	head := strings.Repeat(" ", countW-len("COUNT")) + "COUNT  " + termtext.Fit("FIRST", seenW) + "  " + termtext.Fit("LAST", lastW) + "  "
	if mixed {
		head += termtext.Fit("TIME", timeW-2) + "  "
	}
	b.WriteString(head + "KEY\n")
	for _, g := range r.Groups {
		count := strconv.Itoa(g.Count)
		row := strings.Repeat(" ", countW-len(count)) + count + "  " + termtext.Fit(present.Age(g.FirstSeen, r.PeekedAt), seenW) + "  " +
			termtext.Fit(present.Age(g.LastSeen, r.PeekedAt), lastW) + "  "
		if mixed {
			row += termtext.Fit(present.GroupTimeShort(g.Times), timeW-2) + "  "
		}
		b.WriteString(row + fit(clean(g.Key), width-lead) + "\n")
		if g.Sample != "" && g.Sample != g.Key {
			// One message's error as it is; its id too where there is
			// room (a narrow column keeps the text).
			eg := "e.g. "
			if len(g.SampleIDs) > 0 && (width <= 0 || width >= 120) {
				eg += clean(g.SampleIDs[0]) + ": "
			}
			eg += clean(g.Sample)
			if width > 0 {
				eg = present.Middle(eg, max(width-lead, 10))
			}
			b.WriteString(strings.Repeat(" ", lead) + eg + "\n")
		}
	}
}
