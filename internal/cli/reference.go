package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Reference is ladder's command tree as `ladder --help` shows it (cobra's
// help and completion commands included, as Execute adds them), for the
// generated reference (internal/refdocs). It is built from the same
// newRootCmd as Run, on an app with no streams and a fixed build, so what
// it says depends neither on the environment nor on the release: flags
// read their environment variables only when a command runs (applyEnv),
// which this tree is not meant to do.
func Reference() *cobra.Command {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, build: Build{Version: "dev", Commit: "dev", Date: "dev"}}
	a.connect = a.liveConnector
	root := newRootCmd(a)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}
