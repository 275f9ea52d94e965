package present

import (
	"strings"

	"github.com/ladder-tui/ladder/retry/moveplan"
)

// WhereText writes --where expressions back as a shell (and the UI's w
// prompt) splits them: one with a space or a quote in double quotes.
func WhereText(w moveplan.Where) string {
	parts := make([]string, 0, len(w.Exprs()))
	for _, e := range w.Exprs() {
		if strings.ContainsAny(e, " \t'\"") {
			e = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(e) + `"`
		}
		parts = append(parts, e)
	}
	return strings.Join(parts, " ")
}
