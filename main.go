// Command ladder inspects and replays RabbitMQ retry ladders: a terminal UI
// and commands that share one retry engine (package retry) and one broker
// layer (package broker). The commands live in internal/cli.
package main

import (
	"os"

	"github.com/ladder-tui/ladder/internal/cli"
)

// Set by goreleaser's ldflags.
var (
	version = "dev"
	commit  = "dev"
	date    = "dev"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, cli.Build{Version: version, Commit: commit, Date: date}))
}
