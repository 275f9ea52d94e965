package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry/topology"
)

// checkReport is `ladder check -o json`.
type checkReport struct {
	Vhost         string `json:"vhost"`
	BrokerVersion string `json:"broker_version"`
	FailOn        string `json:"fail_on"`
	// Failing counts the findings at or above FailOn: the exit code's
	// reason.
	Failing int `json:"failing"`
	// Findings are every finding of the read, as topology lists them.
	Findings []topology.Finding `json:"findings"`
	OverMS   int64              `json:"over_ms,omitempty"`
}

func newCheckCmd(a *app) *cobra.Command {
	var (
		failOn string
		over   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "check [--fail-on warning|error]",
		Short: "Exit non-zero when the vhost has findings: for cron and CI",
		Long: `Read the vhost once (with --over DUR, twice, DUR apart, as topology does, which
is what sees a DLQ growing) and print, one a line, each finding at or above
--fail-on: the findings ladder topology shows, from the same analysis.
Nothing printed and exit 0 when there are none; exit 4 when there are (1 when
the broker cannot be read). -o json lists every finding with how many fail.`,
		Example: "  ladder check --over 15s\n  ladder check --fail-on warning -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			floor, err := checkLevel(failOn)
			if err != nil {
				return err
			}
			if over < 0 || over > 0 && over < time.Second {
				return usageErr("--over %v: want 1s or more (10s or more sees the broker's depths change)", over)
			}
			c, closeClient, err := a.client("check")
			if err != nil {
				return err
			}
			defer closeClient()
			ctx := cmd.Context()
			snap, err := c.Snapshot(ctx)
			if err != nil {
				return err
			}
			if snap, err = readAgainAfter(ctx, c, over, snap); err != nil {
				return err
			}
			// The one analysis: the findings topology reports.
			all := present.Topology(snap).Findings
			rep := checkReport{Vhost: snap.Vhost, BrokerVersion: snap.BrokerVersion, FailOn: failOn, Findings: all, OverMS: over.Milliseconds()}
			var failing []topology.Finding
			for _, f := range all {
				if f.Severity.Rank() <= floor.Rank() {
					failing = append(failing, f)
				}
			}
			rep.Failing = len(failing)
			if a.json() {
				err = writeJSON(a.stdout, rep)
			} else if len(failing) > 0 {
				_, err = io.WriteString(a.stdout, findingsTable(failing))
			}
			if err != nil {
				return err
			}
			if len(failing) > 0 {
				return &exitErr{code: exitFindings, err: fmt.Errorf("check: %s at or above %s in vhost %s",
					topology.Plural(len(failing), "finding", "findings"), failOn, clean(snap.Vhost))}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&failOn, "fail-on", string(topology.SeverityError), "the least severity that fails the check: warning or error")
	cmd.Flags().DurationVar(&over, "over", 0, "read twice, this long apart, to see DLQs growing (dlq-growing findings; e.g. 15s)")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"warning", "error"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// checkLevel is --fail-on's severity.
func checkLevel(s string) (topology.Severity, error) {
	switch topology.Severity(s) {
	case topology.SeverityWarning, topology.SeverityError:
		return topology.Severity(s), nil
	}
	return "", usageErr("--fail-on %q: want warning or error", s)
}
