// Package testhook holds the knobs broker's tests in other packages (the
// live client's, broker/rabbit) turn on broker's use cases: internal, so
// nothing outside broker/ can reach them.
package testhook

import "sync/atomic"

// DumpLimit, when above 0, stands for usecase.DefaultDumpLimit: a test of
// the bound without 100,000 messages.
var DumpLimit atomic.Int64
