package main

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

func newDemoCmd(*app) *cobra.Command {
	return pendingCmd("demo", "Run the UI against an embedded demo broker (no network)", "the TUI issue")
}

func newTopologyCmd(*app) *cobra.Command {
	return pendingCmd("topology", "Show the vhost's retry ladders, depths, rates and findings", "the broker issue")
}

func newPeekCmd(*app) *cobra.Command {
	return pendingCmd("peek QUEUE", "Browse the first messages of a queue without removing them", "the broker issue")
}

func newMoveCmd(*app) *cobra.Command {
	return pendingCmd("move", "Move or re-publish messages loss-free, optionally with a delay", "the broker issue")
}

func newDumpCmd(*app) *cobra.Command {
	return pendingCmd("dump QUEUE", "Save a queue's messages to files without removing them", "a later issue")
}

func newReplayCmd(*app) *cobra.Command {
	return pendingCmd("replay", "Re-publish messages saved by dump", "a later issue")
}

func newScheduleCmd(*app) *cobra.Command {
	return pendingCmd("schedule", "Print a backoff policy's retry schedule", "the retry-engine issue")
}
