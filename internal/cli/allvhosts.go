package cli

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
)

// allVhostsReport is topology --all-vhosts -o json.
type allVhostsReport struct {
	Vhosts []broker.VhostSummary `json:"vhosts"`
	OverMS int64                 `json:"over_ms,omitempty"`
}

// allVhosts is topology --all-vhosts: every vhost's summary, read once
// (twice, over apart, with --over).
func (a *app) allVhosts(cmd *cobra.Command, over time.Duration) error {
	c, closeClient, err := a.client("topology")
	if err != nil {
		return err
	}
	defer closeClient()
	ctx := cmd.Context()
	sums, err := c.AllVhosts(ctx)
	if err != nil {
		return err
	}
	rep := allVhostsReport{Vhosts: sums}
	if over > 0 {
		t := time.NewTimer(over)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		// The client remembers the first read: the second's growth is
		// over both.
		if rep.Vhosts, err = c.AllVhosts(ctx); err != nil {
			return err
		}
		rep.OverMS = over.Milliseconds()
	}
	if a.json() {
		return writeJSON(a.stdout, rep)
	}
	_, err = io.WriteString(a.stdout, renderAllVhosts(rep))
	return err
}

// renderAllVhosts is one line a vhost, the one on fire first.
func renderAllVhosts(r allVhostsReport) string {
	head := []string{"VHOST", "LADDERS", "QUEUES", "DLQ MSGS"}
	if r.OverMS > 0 {
		head = append(head, "GROWTH")
	}
	rows := [][]string{append(head, "FINDINGS", "WORST")}
	for _, s := range r.Vhosts {
		row := []string{clean(s.Vhost), strconv.Itoa(s.Ladders), strconv.Itoa(s.Queues), strconv.FormatInt(s.DLQMessages, 10)}
		if r.OverMS > 0 {
			g := "–"
			if s.DLQGrowth != nil {
				g = fmt.Sprintf("%+d", *s.DLQGrowth)
			}
			row = append(row, g)
		}
		worst := "–"
		if s.Worst != nil {
			worst = string(s.Worst.Severity) + " " + s.Worst.Code + " " + s.Worst.Queue
		}
		rows = append(rows, append(row, strconv.Itoa(s.Findings), clean(worst)))
	}
	out := present.Plural(len(r.Vhosts), "vhost", "vhosts")
	if r.OverMS > 0 {
		out += fmt.Sprintf(" · read twice, %s apart", present.Dur(time.Duration(r.OverMS)*time.Millisecond))
	}
	return out + "\n\n" + table(rows)
}
