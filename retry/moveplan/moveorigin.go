package moveplan

import (
	"errors"
	"fmt"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/internal/words"
	"github.com/ladder-tui/ladder/retry/topology"
	"slices"
	"strings"
)

// originChoice is where --to origin sends messages that failed in one
// queue by the same recorded routes: cached per failure (and routing
// headers), since many messages share one.
type originChoice struct {
	exchange, key string
	// original is the recorded route kept in headers when the message is
	// published to the queue directly (nil otherwise).
	original *retry.Origin
	dropCC   bool
	note     string
}

// origin is --to origin for one message: the queue it failed in (failedIn)
// and only that queue. The recorded exchange and key are used when they
// reach that queue alone, with the headers the message is published with
// (CC included); else another recorded key that does; else the message is
// published to the queue directly (default exchange), keeping the recorded
// exchange and key in x-ladder-original-exchange and
// x-ladder-original-routing-key, and the note says why.
func (p *Planner) origin(m Message, r *Route) (exchange, key string, err error) {
	f, ok := failedIn(p.router, p.ladders, p.spec.From, m.Headers)
	if !ok {
		return "", "", errors.New("nothing says where it failed (no x-death, no framework header that records it): left in " + p.left())
	}
	if f.Queue == "" {
		// Several queues it may have failed in: publishing to all would
		// deliver it to consumers that never had it.
		return "", "", fmt.Errorf("%s: ladder cannot tell which of them it failed in, so it publishes to none; choose one with --to queue:NAME: left in %s",
			f.By, p.left())
	}
	if p.router.QueueIndex(f.Queue) < 0 {
		return "", "", fmt.Errorf("it failed in queue %q, which does not exist: left in %s", f.Queue, p.left())
	}
	ck := ""
	if len(p.routedBy) == 0 {
		// Routes depend on the routes tried and the CC keys only.
		cc, _ := topology.PublishKeys(routingHeaders(m.Headers, r.DropHeaders))
		var b strings.Builder
		b.WriteString(f.Queue)
		for _, o := range f.Routes {
			b.WriteString("\x00" + o.Exchange + "\x01" + o.RoutingKey)
		}
		b.WriteString("\x00\x00" + strings.Join(cc, "\x01"))
		ck = b.String()
	}
	c, cached := p.origins[ck]
	if !cached || ck == "" {
		c = p.chooseOrigin(f, r.Apply(m.Headers))
		if ck != "" && len(p.origins) < maxOriginChoices {
			p.origins[ck] = c
		}
	}
	if c.original != nil {
		r.SetHeaders[HeaderOriginalExchange] = c.original.Exchange
		r.SetHeaders[HeaderOriginalRoutingKey] = c.original.RoutingKey
	}
	if c.dropCC {
		if cc, ok := m.Headers[topology.HeaderCC]; ok {
			r.SetHeaders[HeaderOriginalCC] = cc
			r.DropHeaders = addDrop(r.DropHeaders, topology.HeaderCC)
		}
		if _, ok := m.Headers[topology.HeaderBCC]; ok {
			r.DropHeaders = addDrop(r.DropHeaders, topology.HeaderBCC)
		}
	}
	r.Note = joinNotes(joinNotes(r.Note, f.Note), c.note)
	return c.exchange, c.key, nil
}

// maxOriginChoices bounds the cached origin choices of one move.
const maxOriginChoices = 4096

func (p *Planner) chooseOrigin(f Failure, h retry.Headers) originChoice {
	only := []string{f.Queue}
	for _, o := range f.Routes {
		if res := p.router.Route(o.Exchange, o.RoutingKey, h); !res.Approximate && slices.Equal(res.Queues, only) {
			return originChoice{exchange: o.Exchange, key: o.RoutingKey}
		}
	}
	c := originChoice{key: f.Queue}
	why := "nothing recorded how it reached " + f.Queue
	if len(f.Routes) > 0 {
		o := f.Routes[0]
		c.original = &o
		why = routeMisses(p.router.Route(o.Exchange, o.RoutingKey, h), o, f.Queue)
	}
	if res := p.router.Route("", f.Queue, h); !slices.Equal(res.Queues, only) {
		// Its CC header names other queues, which the default exchange
		// would fill too.
		c.dropCC = true
		why += "; its CC header is kept in " + HeaderOriginalCC
	}
	c.note = fmt.Sprintf("%s: published to %s directly, that route kept in %s and %s", why, f.Queue, HeaderOriginalExchange, HeaderOriginalRoutingKey)
	return c
}

// routeMisses says how route o (what reached failed) reaches more or other
// queues than failed alone.
func routeMisses(res topology.RouteResult, o retry.Origin, failed string) string {
	x := words.Target(o.Exchange, o.RoutingKey)
	switch {
	case !res.ExchangeExists:
		return fmt.Sprintf("it failed in %s, but exchange %q no longer exists", failed, o.Exchange)
	case res.Approximate:
		return fmt.Sprintf("it failed in %s, and ladder cannot tell which queues %s reaches", failed, x)
	case len(res.Queues) == 0:
		return fmt.Sprintf("it failed in %s, and %s now routes to no queue", failed, x)
	}
	others := slices.DeleteFunc(slices.Clone(res.Queues), func(q string) bool { return q == failed })
	if len(others) < len(res.Queues) {
		return fmt.Sprintf("it failed in %s, and %s routes to %s too", failed, x, strings.Join(others, ", "))
	}
	return fmt.Sprintf("it failed in %s, and %s now routes to %s instead", failed, x, strings.Join(others, ", "))
}

// AtLeastOnceNote is what a move through ladder's quorum wait queues says
// of a broker crash during the wait: the queue keeps each message until
// the target confirmed it, so a crash loses none, and the ones in flight
// then are delivered again.
const AtLeastOnceNote = "a broker crash during the wait loses nothing (ladder's wait queues are quorum queues that dead-letter at least once) but may deliver a message twice: x-ladder-move-id tells the copies apart"

// crashRisk says why a broker crash while a message waits on rt's way can
// lose it ("" when it cannot): only a quorum queue that dead-letters at
// least once keeps a message until its target has it.
func (p *Planner) crashRisk(rt topology.ReplayRoute) string {
	switch rt.Via {
	case topology.ViaDelayQueue:
		if atLeastOnceArgs(rt.QueueArgs) {
			return ""
		}
		return "a broker crash while it waits can lose it: ladder's wait queue dead-letters at most once on this broker (quorum queues do better from RabbitMQ 3.10)"
	case topology.ViaTier:
		qi := p.router.QueueIndex(rt.Queue)
		if qi >= 0 {
			q := &p.router.Vhost().Queues[qi]
			set := topology.EffectiveSettings(q)
			if q.Type == topology.QueueQuorum && set.DeadLetterStrategy == topology.DeadLetterAtLeastOnce && set.Overflow == topology.OverflowRejectPublish {
				return ""
			}
		}
		return "a broker crash while it waits in tier " + rt.Queue + " can lose it: the tier dead-letters at most once (only a quorum queue with x-dead-letter-strategy at-least-once and x-overflow reject-publish does not)"
	case topology.ViaDelayedExchange:
		return "a broker crash while it waits in delayed exchange " + rt.Exchange + " can lose it: the plugin keeps delayed messages on one node"
	}
	return ""
}

func atLeastOnceArgs(a retry.Headers) bool {
	return a["x-queue-type"] == topology.QueueQuorum && a["x-dead-letter-strategy"] == topology.DeadLetterAtLeastOnce
}

// routingHeaders are the CC and BCC headers of h that a publish keeps
// (those not in drop), the only ones PublishKeys reads: no copy of the
// whole table per message.
func routingHeaders(h retry.Headers, drop []string) retry.Headers {
	var out retry.Headers
	for _, n := range []string{topology.HeaderCC, topology.HeaderBCC} {
		if v, ok := h[n]; ok && !slices.Contains(drop, n) {
			if out == nil {
				out = retry.Headers{}
			}
			out[n] = v
		}
	}
	return out
}

// addDrop adds a header to drop, once, keeping the list sorted.
func addDrop(drop []string, name string) []string {
	if slices.Contains(drop, name) {
		return drop
	}
	drop = append(drop, name)
	slices.Sort(drop)
	return drop
}

// joinNotes joins non-empty notes with "; ".
func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || a == b:
		return a
	}
	return a + "; " + b
}
