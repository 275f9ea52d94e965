package cli

import (
	"fmt"

	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/spf13/cobra"
)

// lintReport is `ladder lint -o json`.
type lintReport struct {
	For           string             `json:"for"`
	Vhost         string             `json:"vhost"`
	BrokerVersion string             `json:"broker_version"`
	Findings      []topology.Finding `json:"findings"`
}

func newLintCmd(a *app) *cobra.Command {
	var target string
	cmd := &cobra.Command{
		Use:   "lint [--for 4.3]",
		Short: "Say what will break in the vhost on upgrading RabbitMQ",
		Long: `Read the vhost's queues and exchanges and say, one finding a line, what breaks or
changes on an upgrade to RabbitMQ --for (4.0 or 4.3): classic queue version 1
(refused on 4.3), delayed-message exchanges (the plugin is gone in 4.3), classic
mirroring policies (removed in 4.0), quorum queues without a dead-letter target
(from 4.0 a message redelivered 20 times is dropped silently), lazy queue mode
(ignored), transient non-exclusive queues (deprecated), and Spring Cloud Stream
retry loops (a DLQ with a TTL back to its queue): the binder republishes failures
with their x-death, which 4.x no longer counts, so a limit read from x-death
never trips. Exit 0 when nothing is found or only warnings, 1 when it finds
errors. Reads only.`,
		Example: "  ladder lint --for 4.3\n  ladder lint --for 4.0 -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, closeClient, err := a.client("lint")
			if err != nil {
				return err
			}
			defer closeClient()
			v, err := c.Topology(cmd.Context())
			if err != nil {
				return err
			}
			fs, err := topology.Lint(&v, target)
			if err != nil {
				return usageErr("%w", err)
			}
			version, _ := c.BrokerVersion(cmd.Context())
			rep := lintReport{For: target, Vhost: c.Vhost(), BrokerVersion: version, Findings: fs}
			if rep.Findings == nil {
				rep.Findings = []topology.Finding{}
			}
			if a.json() {
				if err := writeJSON(a.stdout, rep); err != nil {
					return err
				}
			} else {
				fmt.Fprint(a.stdout, renderLint(rep))
			}
			for _, f := range fs {
				if f.Severity == topology.SeverityError {
					n := countSeverity(fs, topology.SeverityError)
					return fmt.Errorf("lint: %s on RabbitMQ %s", topology.Plural(n, "thing breaks", "things break"), target)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&target, "for", "4.3", "the RabbitMQ version to upgrade to: 4.0 or 4.3")
	_ = cmd.RegisterFlagCompletionFunc("for", cobra.FixedCompletions(topology.LintTargets, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func countSeverity(fs []topology.Finding, s topology.Severity) int {
	n := 0
	for _, f := range fs {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// renderLint is one finding a line, as topology prints them.
func renderLint(r lintReport) string {
	n := len(r.Findings)
	head := fmt.Sprintf("vhost %s · RabbitMQ %s → %s: %s\n", clean(r.Vhost), clean(r.BrokerVersion), clean(r.For), topology.Plural(n, "finding", "findings"))
	return head + findingsTable(r.Findings)
}
