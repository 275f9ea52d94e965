package usecase

import "github.com/ladder-tui/ladder/broker"

// The roles the use cases take: each only what it uses, so a test's fake
// stubs no more than that.

// DumpSource is what Dump reads a queue through: browsing it, or draining
// it with --consume (an action it audits).
type DumpSource interface {
	broker.TopologyReader
	broker.Peeker
	broker.Drainer
	broker.Auditor
}

// ReplayTarget is what Replay publishes a dump through: an action it
// audits, going on through another node when a connection is lost.
type ReplayTarget interface {
	broker.TopologyReader
	broker.Publisher
	broker.Auditor
	broker.Failoverer
}

// UnblockSource is what PrepareUnblock reads a queue's head through.
type UnblockSource interface {
	broker.TopologyReader
	broker.Peeker
}
