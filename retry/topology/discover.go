package topology

import (
	"cmp"
	"github.com/ladder-tui/ladder/retry"
	"slices"
	"sort"
	"strings"
)

// Discover finds every retry ladder in v, sorted by main queue name.
//
// It builds the "dead-letters into" graph (each queue's effective dead-letter
// route, see EffectiveSettings and Router.DeadLetters) and the queues each
// x-delayed-message exchange may route to. A queue M is a ladder's main when
//
//  1. a queue W with a TTL dead-letters into M: W is a tier. Not when W is
//     itself fed by a TTL queue or a delayed exchange (then W is a main
//     whose own TTL expires stale messages), nor when W has consumers and M
//     has neither consumers nor a dead-letter exchange, or M is named as a
//     DLQ and has no dead-letter exchange (a queue expiring stale messages
//     into its DLQ), nor when W is fed by
//     dead-lettering and M is not one of the queues feeding it (W is then a
//     parking stage on someone's dead-letter route: a tier returns what it
//     was given).
//  2. a delayed exchange may route to M.
//  3. M's dead letters reach a queue with a TTL whose own dead-letter route
//     reaches no queue: a tier whose return is broken (the Python seed's
//     retry_queue returning via "" to a queue "main" that does not exist). It
//     is listed as a tier so the ladder shows it; Findings flags its route.
//  4. a queue W without a TTL, not itself a main by 1–3, dead-letters into
//     M and waits for it (waitsFor): its messages can only leave by
//     per-message expiration, or never. W is not a tier (a Tier has a queue
//     TTL) but makes M a ladder, so Findings can report it against M. Which
//     side waits is read from evidence, never from who happens to be
//     consuming: what messages showed (Queue.Seen), then the graph (the
//     side publishers' exchanges feed is the work queue), then names, then
//     a deterministic guess; the ladder's InferredFrom says what decided.
//     A loop of two TTL-less queues is one ladder.
//  5. M is a quorum queue with built-in delayed retry (RabbitMQ 4.3): it
//     holds its own returned messages back (Ladder.DelayedRetry).
//  6. a delay chain delivers into M (delaychain.go: NServiceBus's delay
//     levels): the chain is one Ladder.Delays entry of every queue it
//     reaches, listing the levels whose dead letters reach that queue
//     (Delay.Levels), and its queues are never mains, tiers or wait queues.
//  7. a framework's naming, or a common one (retry.ErrorQueueNamings:
//     M.failure, M.dlq…), gives M an error queue that exists and does not
//     dead-letter back into M (errorqueue.go: MassTransit's M_error,
//     Sneakers' M-error…); a
//     queue it names as M's delay queue held by the workers (Dramatiq's
//     M.DQ) is one of M's Delays, never a main.
//  8. M's dead letters end in a dead end (a DLQ as below) and M is neither
//     a tier or wait queue of a main by 1–6 nor a stage on another queue's
//     dead-letter route (fed by dead letters alone): a work queue and its
//     DLQ. With nothing that makes messages wait, its retries (if any)
//     happen in the consumer (Ladder.RetriesInConsumer).
//  9. messages sitting in a queue E failed in M by their framework's
//     headers (Queue.Seen.FailedIn: what peeks showed), and E is no main,
//     tier, wait or delay queue by 1–8 and does not dead-letter back into
//     M: E is an error queue of M (errorqueue.go: Watermill's poison
//     queue, Moleculer's FAILED_MESSAGES, shared by every endpoint and
//     named by configuration, so only the messages in them tell whose
//     failures they hold).
//  10. messages seen in a wait queue W (they waited there for their
//     expiration) or in a ready queue R it dead-letters into name M as
//     where they return (Queue.Seen.FailedIn), and W does not dead-letter
//     into M: a router sends them back by header (sharedwait.go:
//     amqplib-retry). W and R are one Ladder.Delays entry of every queue
//     so named, and never mains, tiers or wait queues. Without such
//     evidence the graph alone makes R a main waited for by W (rule 4).
//
// Tiers are those of 1 and 3, sorted by TTL then name.
// The DLQ is the nearest queue on M's dead-letter route whose dead letters do
// not come back to M and which is not a (broken) tier: one without a TTL, or
// with a TTL but no dead-letter exchange (a DLQ with retention). A TTL queue
// forwarding elsewhere is looked through. Ties go to the queue without a TTL,
// then by name. With no DLQ on the route, the first error queue a
// framework's naming gives (7, or the shared one of the framework whose delay
// chain delivers into M), else the first that messages showed (9), is the
// DLQ, saying so in DLQFrom; the others are ErrorQueues.
//
// A tier whose dead letters keep their routing keys "may reach" every queue
// bound to its dead-letter exchange, so with a shared exchange it appears in
// the ladder of each of those queues.
func Discover(v *Vhost) []retry.Ladder {
	t := discBuild(v)
	mains := t.mains()
	var out []retry.Ladder
	for qi, isMain := range mains {
		if isMain {
			l := t.ladder(qi)
			l.WaitQueues, l.InferredFrom = t.waitQueues(qi, mains)
			l.RetriesInConsumer = len(l.Tiers) == 0 && len(l.WaitQueues) == 0 && len(l.DelayedExchanges) == 0 &&
				len(l.Delays) == 0 && l.DelayedRetry == nil && len(l.DelayQueues) == 0
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b retry.Ladder) int { return cmp.Compare(a.Main, b.Main) })
	return out
}

// discTopo is the dead-letter graph of one vhost, shared by Discover and Findings.
type discTopo struct {
	v      *Vhost
	r      *Router
	set    []QueueSettings
	dlRes  []RouteResult // per queue: its dead-letter route's result
	dl     [][]int       // per queue: queues its dead letters reach (never itself)
	dlSelf []bool        // its dead letters would come back to itself
	dlFrom [][]int       // reverse of dl
	// delayedTo lists, per queue, the delayed exchanges (indices) that may route to it.
	delayedTo [][]int
	// canon[i] is false for a second queue with an already-seen name, and
	// for ladder's own wait queues, which are never part of the graph.
	canon []bool
	// ownedInto lists, per queue, ladder's own wait queues dead-lettering into it.
	ownedInto [][]string
	// pubFed: a publishers' exchange (one that is nobody's dead-letter
	// exchange, nor delayed) may route to the queue.
	pubFed []bool
	// chains are the vhost's delay chains (delaychain.go); chainOf[i] is
	// the chain queue i belongs to, or -1.
	chains  []delayChain
	chainOf []int
	// shared are the vhost's shared waits (sharedwait.go); sharedOf[i]
	// is the one queue i belongs to, or -1.
	shared   []sharedWait
	sharedOf []int
	// heldBy[i] is the work queue whose held delay queue (a framework's
	// naming, heldDelayQueues) queue i is, or -1.
	heldBy []int
	// seenErr are rule 9's error queues by main (seenErrorQueues), set
	// by mains.
	seenErr map[int][]namedErrorQueue
}

func discBuild(v *Vhost) *discTopo {
	r := NewRouter(v)
	n := len(v.Queues)
	t := &discTopo{
		v: v, r: r,
		set:       make([]QueueSettings, n),
		dlRes:     make([]RouteResult, n),
		dl:        make([][]int, n),
		dlSelf:    make([]bool, n),
		dlFrom:    make([][]int, n),
		delayedTo: make([][]int, n),
		canon:     make([]bool, n),
		ownedInto: make([][]string, n),
		pubFed:    make([]bool, n),
	}
	s := r.newScratch()
	memo := make(map[dlMemoKey]dlMemoVal)
	for qi := range v.Queues {
		t.canon[qi] = r.queues[v.Queues[qi].Name] == qi
		if !t.canon[qi] {
			continue
		}
		t.set[qi] = EffectiveSettings(&v.Queues[qi])
		t.dlRes[qi], t.dl[qi], t.dlSelf[qi] = r.deadLetterTargetsMemo(qi, &t.set[qi], s, memo)
		if retry.OwnedByLadder(v.Queues[qi].Name) {
			t.canon[qi] = false
			for _, to := range t.dl[qi] {
				t.ownedInto[to] = append(t.ownedInto[to], v.Queues[qi].Name)
			}
			t.dl[qi] = nil
			continue
		}
		for _, to := range t.dl[qi] {
			t.dlFrom[to] = append(t.dlFrom[to], qi)
		}
	}
	dlxs := map[string]bool{}
	for qi := range v.Queues {
		if t.canon[qi] && t.set[qi].HasDeadLetterExchange {
			dlxs[t.set[qi].DeadLetterExchange] = true
		}
	}
	for xi := range v.Exchanges {
		x := &v.Exchanges[xi]
		if x.Name == "" || x.Type == ExchangeDelayed || dlxs[x.Name] || r.exchanges[x.Name] != xi || len(r.bySource[x.Name]) == 0 {
			continue
		}
		r.routeInto(x.Name, rtMsg{anyKey: true, anyHeaders: true}, s)
		for _, qi := range s.queues {
			t.pubFed[qi] = true
		}
	}
	for xi := range v.Exchanges {
		x := &v.Exchanges[xi]
		if x.Type != ExchangeDelayed || r.exchanges[x.Name] != xi {
			continue
		}
		// Publishers choose the key and headers: any binding may match.
		r.routeInto(x.Name, rtMsg{anyKey: true, anyHeaders: true}, s)
		for _, qi := range s.queues {
			t.delayedTo[qi] = append(t.delayedTo[qi], xi)
		}
	}
	t.findDelayChains()
	t.findSharedWaits()
	t.heldBy = make([]int, n)
	for i := range t.heldBy {
		t.heldBy[i] = -1
	}
	for m := range n {
		if t.canon[m] {
			for _, d := range t.heldDelayQueues(m) {
				t.heldBy[d] = m
			}
		}
	}
	return t
}

func (t *discTopo) hasTTL(qi int) bool { return t.set[qi].HasMessageTTL }

// brokenTier: a TTL queue meant to forward its dead letters (it has a
// dead-letter exchange) whose route reaches no queue.
func (t *discTopo) brokenTier(qi int) bool {
	return t.set[qi].HasMessageTTL && t.set[qi].HasDeadLetterExchange && len(t.dl[qi]) == 0
}

func (t *discTopo) reaches(from, to int) bool { return slices.Contains(t.dl[from], to) }

// fedByTTLOrDelay: a TTL queue or a delayed exchange feeds qi, so qi is a
// main itself and not a tier of another queue (rule 1).
func (t *discTopo) fedByTTLOrDelay(qi int) bool {
	if len(t.delayedTo[qi]) > 0 {
		return true
	}
	for _, w := range t.dlFrom[qi] {
		if t.hasTTL(w) {
			return true
		}
	}
	return false
}

// terminalLike: nobody consumes it and its dead letters go nowhere: a DLQ.
func (t *discTopo) terminalLike(qi int) bool {
	return !t.set[qi].HasDeadLetterExchange && t.v.Queues[qi].Consumers == 0
}

// tiers returns the tier queue indices of m (rules 1 and 3), unsorted.
func (t *discTopo) tiers(m int) []int {
	var out []int
	for _, w := range t.dlFrom[m] {
		if !t.hasTTL(w) || t.fedByTTLOrDelay(w) || t.infra(w) {
			continue
		}
		if t.v.Queues[w].Consumers > 0 && t.terminalLike(m) {
			continue
		}
		// A TTL queue expiring into a queue named as a DLQ that goes
		// nowhere is a work queue shedding stale messages, workers or not.
		if !t.set[m].HasDeadLetterExchange && nameSays(t.v.Queues[m].Name, dlqWords) {
			continue
		}
		if len(t.dlFrom[w]) > 0 && !slices.Contains(t.dlFrom[w], m) {
			continue
		}
		out = append(out, w)
	}
	for _, w := range t.dl[m] {
		if t.brokenTier(w) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// mains marks the ladder mains by rules 1–9 of Discover.
func (t *discTopo) mains() []bool {
	n := len(t.v.Queues)
	main := make([]bool, n)
	for m := range n {
		if !t.canon[m] || t.infra(m) {
			continue
		}
		// 5. a quorum queue with built-in delayed retry (4.3) waits itself;
		// 6. a delay chain delivers into it.
		main[m] = len(t.delayedTo[m]) > 0 || len(t.tiers(m)) > 0 || t.set[m].DelayedRetry != nil || len(t.chainsInto(m)) > 0
	}
	out := slices.Clone(main)
	for m := range n {
		if out[m] || !t.canon[m] || t.infra(m) {
			continue
		}
		for _, w := range t.dlFrom[m] {
			if ok, _ := t.waitsFor(w, m); ok && !main[w] {
				out[m] = true
				break
			}
		}
	}
	// Queues that wait for a main (its tiers and wait queues) or that a
	// framework's workers hold its messages in are no mains of their own
	// by rules 7 and 8.
	waits := make([]bool, n)
	for m := range n {
		waits[m] = t.heldBy[m] >= 0 || t.sharedOf[m] >= 0
	}
	for m := range n {
		if !out[m] {
			continue
		}
		for _, w := range t.tiers(m) {
			waits[w] = true
		}
		for _, w := range t.dlFrom[m] {
			if ok, _ := t.waitsFor(w, m); ok && !main[w] {
				waits[w] = true
			}
		}
	}
	for m := range n {
		if out[m] || !t.canon[m] || waits[m] || t.inChain(m) {
			continue
		}
		// 7. a framework's naming gives it an error queue; 8. its dead
		// letters end in a dead end and it is not a stage on another
		// queue's dead-letter route (fed by dead letters alone).
		byRoute := t.set[m].HasDeadLetterExchange && t.dlq(m) != "" && (len(t.dlFrom[m]) == 0 || t.pubFed[m])
		out[m] = byRoute || len(t.namedErrorQueues(m)) > 0
	}
	// 9. messages in a queue nothing else explains failed in m.
	t.seenErr = t.seenErrorQueues(out, waits)
	for m := range t.seenErr {
		out[m] = true
	}
	// 10. a shared wait returns messages to m by header.
	for _, sw := range t.shared {
		for m := range sw.to {
			out[m] = true
		}
	}
	return out
}

// waitQueues are rule 4's queues of main m, sorted by name, and what the
// inference rested on.
func (t *discTopo) waitQueues(m int, mains []bool) (names, inferred []string) {
	for _, w := range t.dlFrom[m] {
		ok, why := t.waitsFor(w, m)
		if !ok || mains[w] || slices.Contains(names, t.v.Queues[w].Name) {
			continue
		}
		names = append(names, t.v.Queues[w].Name)
		inferred = append(inferred, why...)
	}
	slices.Sort(names)
	return names, inferred
}

// waitLike: a queue without a TTL that is a wait queue of some queue it
// dead-letters into (rule 4).
func (t *discTopo) waitLike(qi int) bool {
	for _, m := range t.dl[qi] {
		if ok, _ := t.waitsFor(qi, m); ok {
			return true
		}
	}
	return false
}

// waitsFor decides rule 4 for w dead-lettering into m: whether w is a wait
// queue of m (its messages wait there for their expiration, then go to m)
// rather than m being w's dead-letter queue. why says what decided, for
// Ladder.InferredFrom. Evidence comes in this order, the first that tells
// the sides apart decides:
//
//   - queue TTLs (a TTL side is a tier or a main, never a wait queue);
//   - what messages showed (Queue.Seen): a queue where messages expired, or
//     holding one with a per-message expiration, waits; one where they were
//     rejected is worked by a consumer;
//   - the graph: in a loop, the side publishers' exchanges feed is the work
//     queue; out of one, a queue that dead-letters onward, or that
//     publishers feed while w they do not, is not a DLQ;
//   - names: w reads as a wait queue (delay, wait, retry…), m as a DLQ
//     (dlq, dead, error…);
//   - nothing told them apart: out of a loop, a w with consumers is a work
//     queue (m its DLQ), else w is taken to wait for m (no TTL and no
//     consumer, so its messages leave by per-message expiration); in a loop the
//     queue whose name is the shorter (a prefix of the other's, say) is the
//     work queue, then the smaller name.
//
// Consumer counts decide nothing a rule above decided: a worker down or a
// consumer attached to a wait queue changes none of those (Findings reports
// the latter); they only confirm a guess out of a loop.
func (t *discTopo) waitsFor(w, m int) (ok bool, why []string) {
	if t.hasTTL(w) || w == m || t.fedByTTLOrDelay(w) || t.infra(w) || t.infra(m) {
		return false, nil
	}
	qw, qm := &t.v.Queues[w], &t.v.Queues[m]
	base := qw.Name + ": no queue TTL: messages leave it only by per-message expiration"
	says := func(s string) (bool, []string) { return true, []string{base, s} }
	if t.reaches(m, w) {
		// A loop: exactly one side waits, so each test compares both.
		sw, sm := qw.Seen, qm.Seen
		switch {
		case sw.Rejected != sm.Rejected:
			if sm.Rejected {
				return says("x-death: messages were rejected in " + qm.Name + ", not in " + qw.Name)
			}
			return false, nil
		case sw.Expiration != sm.Expiration:
			if sw.Expiration {
				return says("messages seen: per-message expiration in " + qw.Name + ", not in " + qm.Name)
			}
			return false, nil
		case t.pubFed[m] != t.pubFed[w]:
			if t.pubFed[m] {
				return says("a loop: publishers' exchanges feed " + qm.Name + ", not " + qw.Name)
			}
			return false, nil
		}
		nw, nm := nameWaits(qw.Name, qm.Name), nameWaits(qm.Name, qw.Name)
		if nw != nm {
			if nw {
				return says("names: " + qw.Name + " reads as a wait queue")
			}
			return false, nil
		}
		if loopWorkFirst(qm.Name, qw.Name) {
			by := "the shorter name"
			if len(qm.Name) == len(qw.Name) {
				by = "the first by name"
			}
			return says("a guess: nothing in the loop tells " + qm.Name + " and " + qw.Name + " apart; " + qm.Name + ", " + by + ", is taken as the work queue")
		}
		return false, nil
	}
	switch sw := qw.Seen; {
	case sw.Expiration && !sw.Rejected:
		return says("messages seen: per-message expiration in " + qw.Name)
	case sw.Rejected && !sw.Expiration:
		return false, nil // a consumer rejects there: m is its DLQ
	}
	// A framework's naming says which is which (Dramatiq's Q.XQ is Q's
	// error queue, Q.DQ its workers' delay queue), workers up or down.
	if t.heldBy[w] >= 0 || slices.ContainsFunc(t.namedErrorQueues(w), func(e namedErrorQueue) bool { return e.queue == m }) {
		return false, nil
	}
	switch {
	case !t.hasTTL(m) && t.set[m].HasDeadLetterExchange && len(t.dl[m]) > 0:
		return says(qm.Name + " dead-letters onward, so it is not " + qw.Name + "'s DLQ")
	case t.pubFed[m] && !t.pubFed[w]:
		return says("publishers' exchanges feed " + qm.Name + ", not " + qw.Name + ": it is a work queue, not " + qw.Name + "'s DLQ")
	case nameSaysApart(qw.Name, qm.Name, dlqWords) || nameSaysApart(qm.Name, qw.Name, dlqWords) || nameSaysApart(qm.Name, qw.Name, waitWords):
		return false, nil
	case nameSaysApart(qw.Name, qm.Name, waitWords):
		return says("names: " + qw.Name + " reads as a wait queue")
	}
	if !qw.ConsumersUnknown && qw.Consumers > 0 {
		// Nothing else tells: a consumed queue's messages do not wait for
		// expiration, so it is a work queue and m its DLQ (a plain
		// main → DLQ with a neutral DLQ name, its worker up). Only here do
		// consumers count, and only to confirm.
		return false, nil
	}
	return says("a guess: nothing tells " + qw.Name + " and " + qm.Name + " apart and nothing consumes " + qw.Name + "; it dead-letters into " + qm.Name + ", which does not send back, so it is taken as its wait queue")
}

// nameWaits: the name reads as a waiting place (a wait queue, or a DLQ a
// loop sends back from) rather than a work queue, by the words it does not
// share with other's.
func nameWaits(name, other string) bool {
	return nameSaysApart(name, other, waitWords) || nameSaysApart(name, other, dlqWords)
}

// loopWorkFirst decides a loop nothing else tells apart, the same way from
// either side: a is the work queue when its name is the shorter, then the
// smaller.
func loopWorkFirst(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

var (
	waitWords = []string{"delay", "delayed", "wait", "waiting", "retry", "retries", "later", "backoff", "defer", "deferred", "hold", "scheduled", "ttl"}
	dlqWords  = []string{"dlq", "dlx", "dead", "deadletter", "dl", "error", "errors", "failed", "failure", "failures", "parking", "parked", "poison", "graveyard", "undeliverable", "fatal",
		"rejected", "quarantine", "discarded", "invalid", "unprocessable", "bounced", "unroutable", "trash"}
)

// nameSays reports whether one of the name's words (split at . _ - : /) is
// in words.
func nameSays(name string, words []string) bool { return nameSaysApart(name, "", words) }

// nameSaysApart is nameSays of the words of name that other's name does not
// have: a word both share (a library's or an application's prefix,
// "retry-lib.orders" and "retry-lib.delay") tells neither side apart, so it
// never decides which one waits.
func nameSaysApart(name, other string, words []string) bool {
	theirs := nameWords(other)
	for _, f := range nameWords(name) {
		if slices.Contains(words, f) && !slices.Contains(theirs, f) {
			return true
		}
	}
	return false
}

func nameWords(name string) []string {
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return r == '.' || r == '_' || r == '-' || r == ':' || r == '/' || r == ' '
	})
}

func (t *discTopo) ladder(m int) retry.Ladder {
	v := t.v
	l := retry.Ladder{Main: v.Queues[m].Name}
	tiers := t.tiers(m)
	sort.Slice(tiers, func(i, j int) bool {
		a, b := tiers[i], tiers[j]
		if t.set[a].MessageTTL != t.set[b].MessageTTL {
			return t.set[a].MessageTTL < t.set[b].MessageTTL
		}
		return v.Queues[a].Name < v.Queues[b].Name
	})
	for _, w := range tiers {
		s := &t.set[w]
		l.Tiers = append(l.Tiers, retry.Tier{
			Queue:            v.Queues[w].Name,
			TTL:              s.MessageTTL,
			ReturnExchange:   s.DeadLetterExchange,
			ReturnRoutingKey: s.DeadLetterRoutingKey,
			KeepsRoutingKey:  !s.HasDeadLetterRoutingKey,
		})
	}
	for _, xi := range t.delayedTo[m] {
		x := &v.Exchanges[xi]
		l.DelayedExchanges = append(l.DelayedExchanges, retry.DelayedExchange{Name: x.Name, MessagesDelayed: x.MessagesDelayed})
	}
	slices.SortFunc(l.DelayedExchanges, func(a, b retry.DelayedExchange) int { return cmp.Compare(a.Name, b.Name) })
	l.DLQ = t.dlq(m)
	for _, e := range slices.Concat(t.namedErrorQueues(m), t.sharedErrorQueues(m), t.seenErr[m]) {
		name := v.Queues[e.queue].Name
		switch {
		case name == l.DLQ || slices.Contains(l.ErrorQueues, name) || slices.ContainsFunc(tiers, func(w int) bool { return w == e.queue }):
		case l.DLQ == "":
			l.DLQ, l.DLQFrom = name, e.from
		default:
			l.ErrorQueues = append(l.ErrorQueues, name)
		}
	}
	slices.Sort(l.ErrorQueues)
	for _, ci := range t.chainsInto(m) {
		d := t.delay(ci)
		d.Levels = t.levelsInto(ci, m)
		l.Delays = append(l.Delays, d)
	}
	l.Delays = append(l.Delays, t.sharedWaitsInto(m)...)
	for _, d := range t.heldDelayQueues(m) {
		n := v.Queues[d].Name
		l.Delays = append(l.Delays, retry.Delay{Name: n, Queues: []string{n}, HeldByConsumers: true})
	}
	l.DelayQueues = slices.Sorted(slices.Values(t.ownedInto[m]))
	l.DelayedRetry = t.set[m].DelayedRetry
	return l
}

// dlq finds main m's terminal queue (see Discover), breadth first.
func (t *discTopo) dlq(m int) string {
	v := t.v
	seen := map[int]bool{m: true}
	frontier := t.dl[m]
	for len(frontier) > 0 {
		best := -1
		var next []int
		for _, c := range frontier {
			if seen[c] || t.inChain(c) {
				continue
			}
			seen[c] = true
			if t.reaches(c, m) || t.brokenTier(c) {
				continue // a tier or a queue feeding back: not terminal
			}
			s := &t.set[c]
			if s.HasMessageTTL && s.HasDeadLetterExchange {
				next = append(next, t.dl[c]...) // waits, then forwards: look through
				continue
			}
			if best < 0 || dlqBetter(t, c, best) {
				best = c
			}
		}
		if best >= 0 {
			return v.Queues[best].Name
		}
		frontier = next
	}
	return ""
}

// dlqBetter prefers a queue without a TTL, then the smaller name.
func dlqBetter(t *discTopo, a, b int) bool {
	if t.hasTTL(a) != t.hasTTL(b) {
		return !t.hasTTL(a)
	}
	return t.v.Queues[a].Name < t.v.Queues[b].Name
}
