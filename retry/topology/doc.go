// Package topology is ladder's model of a vhost: it discovers retry ladders
// from a vhost description (queues, exchanges, bindings, policies), routes
// messages the way the broker would, and reports findings, head-of-line
// blocking, lint, inflow and dead-letter settings. It does no I/O: the
// broker package describes the vhost, this package reads it.
package topology
