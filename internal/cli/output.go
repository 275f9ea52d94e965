package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/charmbracelet/x/term"

	"github.com/ladder-tui/ladder/internal/termtext"
)

// writeJSON prints v as indented JSON: the stable output for scripts.
// Runes a terminal may act on are escaped even inside strings (see
// termtext.EscapeJSON): the same JSON, safe to print.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termtext.EscapeJSON(b.Bytes()))
	return err
}

// isTerminal reports whether f is a terminal ladder may talk to.
func isTerminal(rw any) bool {
	f, ok := rw.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// clean makes untrusted text (anything from the broker) safe to print.
var clean = termtext.Sanitize

// table aligns rows in columns two spaces apart.
func table(rows [][]string) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	w.Flush()
	return b.String()
}

// ask puts a yes/no question on a terminal; without one (or on "no") it
// refuses, changing nothing.
func ask(a *app, question string) error {
	if !isTerminal(a.stdin) {
		return usageErr("not a terminal, so no one can confirm: pass --yes (or try --dry-run first)")
	}
	fmt.Fprint(a.stderr, question)
	line, _ := bufio.NewReader(a.stdin).ReadString('\n')
	if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
		return errors.New("cancelled: nothing was changed")
	}
	return nil
}
