package topology

import (
	"cmp"
	"slices"
	"strings"

	"github.com/ladder-tui/ladder/retry"
)

// A delay chain is a delay infrastructure shared by many queues:
// NServiceBus's 28 levels nsb.v2.delay-level-NN, each a queue with a TTL of
// 2^NN s and no consumer, dead-lettering through topic exchanges into the
// next lower level or, at level 00, into nsb.v2.delay-delivery, which routes
// to each endpoint (Particular/NServiceBus.RabbitMQ:
// src/NServiceBus.Transport.RabbitMQ/DelayedDelivery/DelayInfrastructure.cs).
// Read queue by queue, each level is a "tier" of every level below it and of
// every endpoint, and each level a main: 28 ladders. Read as a whole, it is
// one delay mechanism attached to every queue it delivers into.
//
// A link is a TTL queue with a dead-letter exchange and no consumer whose
// dead letters may reach another such queue that does not send them back.
// A chain is a connected set of links with two in a row (a → b → c): one
// tier feeding a work queue that expires stale messages into its DLQ is a
// single link (a → b), and stays a tier and a main.
type delayChain struct {
	queues []int // sorted by name
	into   []int // the queues outside the chain its dead letters may reach
}

// findDelayChains sets t.chains and t.chainOf.
func (t *discTopo) findDelayChains() {
	n := len(t.v.Queues)
	t.chainOf = make([]int, n)
	for i := range t.chainOf {
		t.chainOf[i] = -1
	}
	cand := func(q int) bool {
		s := &t.set[q]
		return t.canon[q] && s.HasMessageTTL && s.HasDeadLetterExchange && t.v.Queues[q].Consumers == 0
	}
	out, in := make([]bool, n), make([]bool, n)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for a := range n {
		if !cand(a) {
			continue
		}
		for _, b := range t.dl[a] {
			if cand(b) && !t.reaches(b, a) {
				out[a], in[b] = true, true
				parent[find(a)] = find(b)
			}
		}
	}
	// A component is a chain when one of its queues has a link in and a link out.
	isChain := map[int]bool{}
	for q := range n {
		if in[q] && out[q] {
			isChain[find(q)] = true
		}
	}
	byRoot := map[int]int{}
	for q := range n {
		if !(in[q] || out[q]) || !isChain[find(q)] {
			continue
		}
		r := find(q)
		ci, ok := byRoot[r]
		if !ok {
			ci = len(t.chains)
			byRoot[r] = ci
			t.chains = append(t.chains, delayChain{})
		}
		t.chains[ci].queues = append(t.chains[ci].queues, q)
		t.chainOf[q] = ci
	}
	for ci := range t.chains {
		c := &t.chains[ci]
		slices.SortFunc(c.queues, func(a, b int) int { return strings.Compare(t.v.Queues[a].Name, t.v.Queues[b].Name) })
		for _, s := range c.queues {
			for _, to := range t.dl[s] {
				if t.chainOf[to] != ci && !slices.Contains(c.into, to) {
					c.into = append(c.into, to)
				}
			}
		}
	}
}

// inChain: qi is one of a delay chain's queues.
func (t *discTopo) inChain(qi int) bool { return t.chainOf[qi] >= 0 }

// chainsInto lists the chains that deliver into qi, in order.
func (t *discTopo) chainsInto(qi int) []int {
	var out []int
	for ci := range t.chains {
		if slices.Contains(t.chains[ci].into, qi) {
			out = append(out, ci)
		}
	}
	return out
}

// delay describes chain ci as a retry.Delay.
func (t *discTopo) delay(ci int) retry.Delay {
	c := &t.chains[ci]
	d := retry.Delay{}
	for i, q := range c.queues {
		d.Queues = append(d.Queues, t.v.Queues[q].Name)
		ttl := t.set[q].MessageTTL
		if i == 0 || ttl < d.MinTTL {
			d.MinTTL = ttl
		}
		if ttl > d.MaxTTL {
			d.MaxTTL = ttl
		}
	}
	d.Name = chainName(d.Queues)
	return d
}

// levelsInto are chain ci's queues whose dead letters reach m, down the
// chain or straight, each with its TTL, shortest first: the delays that
// can end in m.
func (t *discTopo) levelsInto(ci, m int) []retry.DelayLevel {
	reach := map[int]bool{}
	var todo []int
	for _, q := range t.chains[ci].queues {
		if t.reaches(q, m) {
			reach[q] = true
			todo = append(todo, q)
		}
	}
	for len(todo) > 0 {
		q := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, p := range t.dlFrom[q] {
			if t.chainOf[p] == ci && !reach[p] {
				reach[p] = true
				todo = append(todo, p)
			}
		}
	}
	var out []retry.DelayLevel
	for _, q := range t.chains[ci].queues {
		if reach[q] {
			out = append(out, retry.DelayLevel{Queue: t.v.Queues[q].Name, TTL: t.set[q].MessageTTL})
		}
	}
	slices.SortStableFunc(out, func(a, b retry.DelayLevel) int { return cmp.Compare(a.TTL, b.TTL) })
	return out
}

// chainName reads sorted names as one: their common prefix, then the first
// and last tails ("nsb.v2.delay-level-00…27").
func chainName(names []string) string {
	if len(names) == 0 {
		return ""
	}
	first, last := names[0], names[len(names)-1]
	p := 0
	for p < len(first) && p < len(last) && first[p] == last[p] {
		p++
	}
	// Cut at a rune boundary: names are UTF-8.
	for p > 0 && p < len(first) && first[p]&0xC0 == 0x80 {
		p--
	}
	if p == len(first) || p == len(last) {
		return first + "…" + last
	}
	return first + "…" + last[p:]
}
