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

// BrowserColumns are the message browser's columns, and the marks in them.
var BrowserColumns = []Column{
	{"POS", "the message's place in the queue, 0 at the head"},
	{"MESSAGE ID", "its message_id property (– when unset; the end is kept when cut)"},
	{"AGE", "since its timestamp property; ~ before it: from an x-death or a framework's time, the timestamp unset"},
	{"RETRY", "retries so far and where read: xd x-death, xrc x-retry-count, dlv/acq a quorum queue's delivery counters, a framework's name; gss guessed from a field's name alone (the inspector says which)"},
	{"LAST DEATH", "the newest x-death entry: reason@queue"},
	{"DUE", "when its TTL sends it on: 4s, late 3m (overdue), due, never (no TTL applies), stuck (its expiration was stripped and the queue has no TTL), eta (a framework's run time)"},
	{"HOL", "held back by a longer-lived message ahead of it (head-of-line blocking; ←#n names it)"},
	{"SIZE", "the body's size"},
	{"ROUTING KEY", "the key it was last published with"},
}
