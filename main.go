// Command ladder inspects and replays RabbitMQ retry ladders: a terminal UI
// and commands that share one retry engine (package retry) and one broker
// layer (package broker).
package main

import "os"

// Set by goreleaser's ldflags.
var (
	version = "dev"
	commit  = "dev"
	date    = "dev"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
