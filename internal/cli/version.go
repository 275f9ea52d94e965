package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ladder's version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.json() {
				return writeJSON(a.stdout, map[string]string{
					"version": a.build.Version, "commit": a.build.Commit, "date": a.build.Date, "go": runtime.Version(),
				})
			}
			_, err := fmt.Fprintf(a.stdout, "ladder %s (commit %s, built %s, %s)\n", a.build.Version, a.build.Commit, a.build.Date, runtime.Version())
			return err
		},
	}
}
