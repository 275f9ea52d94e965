package present

// Column is one column of the ladders screen and what it means: the ?
// screen lists them, and docs/tui.md says the same.
type Column struct{ Name, Meaning string }

// HomeColumns are the ladders screen's columns. Every figure comes from the
// one analysis of the last read (broker/analysis): the same in the TUI,
// topology and a ladder serve session.
var HomeColumns = []Column{
	{"TTL", "the queue's role: main, a tier's TTL, msg (per-message TTLs), delay, DLQ, error, own (ladder's delay queue)"},
	{"READY", "messages waiting to be delivered"},
	{"UNACK", "delivered to a consumer, not yet acknowledged"},
	{"CON", "consumers (– when the broker does not say)"},
	{"IN/s", "arrivals a second: publishes, or for a queue fed by dead-lettering its depth's change plus what consumers took, over up to the last minute (~ before a derived figure)"},
	{"OUT/s", "deliveries a second"},
	{"DEPTH TREND", "the depth over the last reads, newest on the right"},
	{"DRAIN", "~time to empty at the net rate, ≤ bound set by a queue TTL, grow when filling, – when neither"},
	{"FINDINGS", "✖ error, ▲ warning, ℹ note: f lists them in full"},
}
