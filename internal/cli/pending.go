package cli

import "github.com/spf13/cobra"

// pendingCmd is a command whose issue has not landed: it says so and exits 1,
// whatever arguments it is given.
func pendingCmd(use, short, issue string) *cobra.Command {
	return &cobra.Command{
		Use:                use,
		Short:              short,
		Args:               cobra.ArbitraryArgs,
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return notYet("ladder "+cmd.Name(), issue)
		},
	}
}

func newDumpCmd(*app) *cobra.Command {
	return pendingCmd("dump QUEUE", "Save a queue's messages to files without removing them", "a later issue")
}

func newReplayCmd(*app) *cobra.Command {
	return pendingCmd("replay", "Re-publish messages saved by dump", "a later issue")
}
