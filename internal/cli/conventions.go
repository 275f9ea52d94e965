package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/internal/termtext"
)

// conventionView is one convention as `ladder conventions` lists it.
type conventionView struct {
	Name string `json:"name"`
	// From says where it came from: "built in" or "config file PATH".
	From string `json:"from"`
	// Source is the framework source a built-in one follows.
	Source      string   `json:"source,omitempty"`
	Marks       []string `json:"marks,omitempty"`
	Count       []string `json:"count,omitempty"`
	Error       []string `json:"error,omitempty"`
	OriginQueue []string `json:"origin_queue,omitempty"`
	ErrorQueues []string `json:"error_queues,omitempty"`
	DelayQueues []string `json:"delay_queues,omitempty"`
}

func newConventionsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "conventions",
		Short: "List the retry conventions ladder reads, built in and declared in the config file",
		Long: `List the retry conventions ladder reads messages by, in the order it tries
them: those declared in the config file ([conventions.NAME]) first, then the
built-in ones, each with where it came from.

A field no convention gives is guessed from a header's or JSON body field's
name (x-attempts, retryCount, error, failed_at…) and shown as guessed.
Teach ladder a convention of your own in the config file:

  [conventions.acme-jobs]
  count            = "header:x-acme-tries"
  count-is-attempt = true
  error            = "body:meta.lastError"
  origin-queue     = "header:x-acme-queue"
  error-queues     = ["{queue}.graveyard"]`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t := a.cfg.Conventions
			declared := map[string]bool{}
			for _, c := range t.Declared() {
				declared[c.Name] = true
			}
			var views []conventionView
			for _, c := range t.All() {
				v := conventionView{Name: c.Name, From: "built in", Source: c.Source, Marks: c.Marks,
					Count: userPaths(c.Count), Error: userPaths(c.Error), OriginQueue: userPaths(c.OriginQueue),
					ErrorQueues: c.ErrorQueues, DelayQueues: c.DelayQueues}
				if declared[c.Name] {
					v.From, v.Source = c.Source, ""
				}
				views = append(views, v)
			}
			if a.json() {
				return writeJSON(a.stdout, map[string]any{"conventions": views})
			}
			// Narrow enough for 80 columns: -o json has every path.
			rows := [][]string{{"NAME", "FROM", "COUNT", "ERROR QUEUES"}}
			for _, v := range views {
				from := v.From
				if from != "built in" {
					from = "config file"
				}
				rows = append(rows, []string{clean(v.Name), from, firstCell(v.Count), listCell(v.ErrorQueues)})
			}
			_, err := fmt.Fprint(a.stdout, table(rows))
			return err
		},
	}
}

// firstCell is the first of a list of paths, "-" for none.
func firstCell(xs []string) string {
	if len(xs) == 0 {
		return "-"
	}
	return termtext.Truncate(clean(xs[0]), 40)
}

// listCell is a list of paths or names in one cell, "-" for none.
func listCell(xs []string) string {
	if len(xs) == 0 {
		return "-"
	}
	return clean(strings.Join(xs, ", "))
}

// userPaths are engine paths (retry.Convention) as a user writes them in
// the config file: header:NAME, body:FIELD.
func userPaths(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		switch {
		case strings.HasPrefix(p, "body#"):
			out[i] = "body:" + strings.TrimPrefix(p, "body#")
		case strings.HasPrefix(p, "{"):
			out[i] = p // headers' texts joined (Moleculer's {group}.{channel})
		default:
			out[i] = "header:" + p
		}
	}
	return out
}
