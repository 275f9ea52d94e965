package cli

import (
	"io"

	"github.com/spf13/cobra"
)

func newTopologyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "topology",
		Short: "Show the vhost's retry ladders, depths, rates and findings",
		Long: `Discover every retry ladder of the vhost (main queue, TTL wait tiers, delayed
exchanges, DLQ) from queue arguments, policies and bindings, with depths, rates
and findings such as unroutable dead-letter routes or head-of-line risks.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, closeClient, err := a.client("topology")
			if err != nil {
				return err
			}
			defer closeClient()
			snap, err := c.Snapshot(cmd.Context())
			if err != nil {
				return err
			}
			rep := snap.Report()
			if a.json() {
				return writeJSON(a.stdout, rep)
			}
			_, err = io.WriteString(a.stdout, renderTopology(rep))
			return err
		},
	}
}
