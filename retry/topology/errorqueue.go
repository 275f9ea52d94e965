package topology

import (
	"strings"
	"sync"

	"github.com/ladder-tui/ladder/retry"
)

// Error queues fed by publishing: frameworks that retry in the consumer
// publish a message that has failed for good into a queue named after the
// work queue (MassTransit's {queue}_error, Sneakers' {queue}-error, Spring's
// {queue}.dlq and {queue}.parkingLot), with no dead-letter route between
// the two: the graph cannot see the link, the naming in each convention of
// retry.Conventions can. NServiceBus's one "error" queue serves every
// endpoint its delay infrastructure delivers into (sharedErrorQueues).

// namedErrorQueue is one queue that a convention's naming makes an error
// queue of a work queue.
type namedErrorQueue struct {
	queue int
	from  string // "MassTransit: {queue}_error"
}

// queueNaming is one convention's name for a queue of a work queue
// ({queue}_error), with the framework's name.
type queueNaming struct{ framework, pattern string }

// builtinNamings are the built-in tables' error-queue and held-delay-queue
// names relative to a work queue, read once: discovery asks for every
// queue on every refresh.
var builtinNamings = sync.OnceValues(func() (errorQueues, delayQueues []queueNaming) {
	return tableNamings(retry.Table{})
})

// namings are t's namings: the built-in ones read once, a user's declared
// ones before them.
func namings(t retry.Table) (errorQueues, delayQueues []queueNaming) {
	if len(t.Declared()) == 0 {
		return builtinNamings()
	}
	return tableNamings(t)
}

// tableNamings are t's error-queue names (the same table --to origin
// infers a work queue from, Q.failure → Q: a link discovery draws is an
// origin a move finds, and back) and its conventions' held delay queues.
func tableNamings(t retry.Table) (errorQueues, delayQueues []queueNaming) {
	for _, n := range t.ErrorQueueNamings() {
		by := n.Framework
		if by == "" {
			by = "common naming"
		}
		errorQueues = append(errorQueues, queueNaming{by, n.Pattern})
	}
	for _, c := range t.All() {
		for _, pat := range c.DelayQueues {
			if strings.Contains(pat, "{queue}") {
				delayQueues = append(delayQueues, queueNaming{c.Name, pat})
			}
		}
	}
	return errorQueues, delayQueues
}

// namedErrorQueues lists, for work queue m, the existing queues the
// conventions name as its error queues, in the table's order; tiers,
// queues of delay chains and m itself are never among them.
func (t *discTopo) namedErrorQueues(m int) []namedErrorQueue {
	name := t.v.Queues[m].Name
	var out []namedErrorQueue
	errorQueues, _ := namings(t.v.Conventions)
	for _, n := range errorQueues {
		e := t.r.QueueIndex(strings.ReplaceAll(n.pattern, "{queue}", name))
		// One that dead-letters back into m is on m's way back to work,
		// not its dead end, whatever its name.
		if e < 0 || e == m || !t.canon[e] || t.inChain(e) || t.hasTTL(e) && t.set[e].HasDeadLetterExchange || t.reaches(e, m) {
			continue
		}
		out = append(out, namedErrorQueue{queue: e, from: n.framework + ": " + n.pattern})
	}
	return out
}

// sharedErrorQueues are the existing error queues a convention names
// without a work queue ("error") whose delay chain delivers into m: the
// chain's common name prefix is how that convention names its delay queues.
func (t *discTopo) sharedErrorQueues(m int) []namedErrorQueue {
	var out []namedErrorQueue
	for _, ci := range t.chainsInto(m) {
		d := t.delay(ci)
		prefix := d.Name[:strings.Index(d.Name, "…")]
		prefix = strings.TrimRight(prefix, "0123456789")
		for _, c := range t.v.Conventions.All() {
			if !conventionNames(c, prefix) {
				continue
			}
			for _, pat := range c.ErrorQueues {
				if strings.Contains(pat, "{queue}") {
					continue
				}
				if e := t.r.QueueIndex(pat); e >= 0 && e != m && t.canon[e] {
					out = append(out, namedErrorQueue{queue: e, from: c.Name + ": " + pat + " (shared)"})
				}
			}
		}
	}
	return out
}

// conventionNames: one of c's queue names starts with prefix (a delay
// chain's common prefix, at least a few characters long).
func conventionNames(c retry.Convention, prefix string) bool {
	if len(prefix) < 4 {
		return false
	}
	for _, q := range c.QueueNames {
		if !strings.Contains(q, "{queue}") && strings.HasPrefix(q, prefix) {
			return true
		}
	}
	return false
}

// heldDelayQueues lists, for work queue m, the existing queues a
// convention names as m's delay queues held by its workers (Dramatiq's
// {queue}.DQ).
func (t *discTopo) heldDelayQueues(m int) []int {
	name := t.v.Queues[m].Name
	var out []int
	_, delayQueues := namings(t.v.Conventions)
	for _, n := range delayQueues {
		if d := t.r.QueueIndex(strings.ReplaceAll(n.pattern, "{queue}", name)); d >= 0 && d != m && t.canon[d] && !t.inChain(d) {
			out = append(out, d)
		}
	}
	return out
}

// seenErrorQueues are rule 9's links, by main: queue e whose messages
// failed in m (Seen.FailedIn) is an error queue of m when e is no main
// (isMain) and waits for none (waits), belongs to no delay chain, is no
// TTL queue forwarding elsewhere, and does not dead-letter back into m
// (then it is on m's way back to work, not its dead end).
func (t *discTopo) seenErrorQueues(isMain, waits []bool) map[int][]namedErrorQueue {
	var out map[int][]namedErrorQueue
	for e := range t.v.Queues {
		q := &t.v.Queues[e]
		if len(q.Seen.FailedIn) == 0 || !t.canon[e] || isMain[e] || waits[e] || t.inChain(e) ||
			t.hasTTL(e) && t.set[e].HasDeadLetterExchange {
			continue
		}
		for _, name := range q.Seen.FailedIn {
			m := t.r.QueueIndex(name)
			if m < 0 || m == e || !t.canon[m] || t.inChain(m) || waits[m] || t.reaches(e, m) {
				continue
			}
			if out == nil {
				out = map[int][]namedErrorQueue{}
			}
			out[m] = append(out[m], namedErrorQueue{queue: e, from: "messages seen: they failed in " + name})
		}
	}
	return out
}
