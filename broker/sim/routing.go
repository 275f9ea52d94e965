package sim

import (
	"reflect"
	"slices"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// topoCache is what routing and discovery need, rebuilt when the topology
// (or a consumer count, which discovery reads) changes.
type topoCache struct {
	vhost   topology.Vhost
	router  *topology.Router
	ladders []retry.Ladder
}

// topology returns the cached routing view. Callers hold mu.
func (s *Sim) topology() *topoCache {
	if s.topo != nil {
		return s.topo
	}
	v := topology.Vhost{Name: VhostName}
	for _, q := range s.queues {
		v.Queues = append(v.Queues, topology.Queue{Name: q.name, Type: q.typ, Arguments: q.args, Policy: q.policy, Consumers: q.consumers})
	}
	v.Exchanges = slices.Clone(s.exchanges)
	v.Bindings = slices.Clone(s.bindings)
	s.evidence.Apply(&v)
	s.topo = &topoCache{vhost: v, router: topology.NewRouter(&v), ladders: topology.Discover(&v)}
	return s.topo
}

// ladderOf returns the discovered ladder whose main, tier, DLQ or error
// queue is queue.
func (s *Sim) ladderOf(queue string) *retry.Ladder {
	ls := s.topology().ladders
	for i := range ls {
		if ls[i].Main == queue {
			return &ls[i]
		}
	}
	for i := range ls {
		l := &ls[i]
		if l.DLQ == queue || slices.Contains(l.ErrorQueues, queue) || slices.ContainsFunc(l.Tiers, func(t retry.Tier) bool { return t.Queue == queue }) {
			return l
		}
	}
	return nil
}

// declareQueue declares a queue, classic unless x-queue-type says quorum.
// Redeclaring with the same arguments renews x-expires, as on the broker;
// other arguments are refused (PRECONDITION_FAILED, inequivalent arg).
func (s *Sim) declareQueue(name string, args map[string]any) error {
	if q, ok := s.byName[name]; ok {
		if !reflect.DeepEqual(q.args, args) {
			return s.errorf("PRECONDITION_FAILED - inequivalent arguments for queue %q", name)
		}
		q.lastUsed = s.now
		return nil
	}
	typ := topology.QueueClassic
	if t, ok := args["x-queue-type"].(string); ok && t == topology.QueueQuorum {
		typ = t
	}
	q := &queue{name: name, typ: typ, args: args, lastUsed: s.now}
	q.settle()
	s.queues = append(s.queues, q)
	s.byName[name] = q
	s.topo = nil
	return nil
}

// deleteQueue removes q with its messages, as x-expires does.
func (s *Sim) deleteQueue(q *queue) {
	s.queues = slices.DeleteFunc(s.queues, func(x *queue) bool { return x == q })
	delete(s.byName, q.name)
	s.bindings = slices.DeleteFunc(s.bindings, func(b topology.Binding) bool {
		return b.DestinationType == "queue" && b.Destination == q.name
	})
	s.topo = nil
}

func (s *Sim) declareExchange(name, kind string, args map[string]any) {
	s.exchanges = append(s.exchanges, topology.Exchange{Name: name, Type: kind, Arguments: args, MessagesDelayed: -1})
	s.topo = nil
}

func (s *Sim) bind(exchange, queue, key string, args map[string]any) {
	s.bindings = append(s.bindings, topology.Binding{Source: exchange, Destination: queue, DestinationType: "queue", RoutingKey: key, Arguments: args})
	s.topo = nil
}

func (s *Sim) exchangeExists(name string) bool {
	return name == "" || slices.ContainsFunc(s.exchanges, func(x topology.Exchange) bool { return x.Name == name })
}

// route lists the queues a message published to exchange reaches.
func (s *Sim) route(exchange, key string, h retry.Headers) []string {
	return s.topology().router.Route(exchange, key, h).Queues
}

// publish is a client's basic.publish: route by the routing key and the
// CC and BCC headers, then enqueue a copy in every queue reached (BCC taken
// off). It returns the queues that took it; an unknown exchange, an invalid
// expiration or a CC header that is not an array is an error, as the broker
// closes the channel for them. A full queue that refuses it (x-overflow
// reject-publish) makes the publish an errRefused: the publisher gets a
// basic.nack, while the other queues keep their copy.
func (s *Sim) publish(exchange, key string, props broker.Properties, h retry.Headers, body []byte) ([]string, error) {
	if !s.exchangeExists(exchange) {
		return nil, s.errorf("NOT_FOUND - no exchange %q in vhost %q", exchange, VhostName)
	}
	ttl, hasTTL, err := parseExpiration(props.Expiration)
	if err != nil {
		return nil, err
	}
	extra, err := topology.PublishKeys(h)
	if err != nil {
		return nil, s.errorf("PRECONDITION_FAILED - invalid message: %v", err)
	}
	var cc []string
	if _, ok := h[topology.HeaderCC]; ok {
		cc, _ = topology.PublishKeys(retry.Headers{topology.HeaderCC: h[topology.HeaderCC]})
	}
	if _, ok := h[topology.HeaderBCC]; ok {
		h = h.Clone()
		delete(h, topology.HeaderBCC)
	}
	s.seq++
	m := &message{seq: s.seq, exchange: exchange, routingKey: key, cc: cc, props: props, headers: h, body: body, ttl: ttl, hasTTL: hasTTL}
	qs := s.topology().router.RouteKeys(exchange, append([]string{key}, extra...), h).Queues
	s.stats.Published++
	if len(qs) == 0 {
		s.stats.Unroutable++
	}
	took, refused := s.deliverTo(qs, m, true)
	if len(refused) > 0 {
		return took, errRefused(refused)
	}
	return took, nil
}

// errRefused names the full queues that refused a publish (x-overflow
// reject-publish or reject-publish-dlx): the broker nacks it.
type errRefused []string

// Error is what the live client says of a nack.
func (e errRefused) Error() string { return "the broker nacked it" }

// deliverTo enqueues a copy of m in each named queue, as the broker does
// with length limits: a full reject-publish queue refuses it (a
// reject-publish-dlx one dead-letters the refused copy), a drop-head queue
// takes it and drops (dead-letters) its head until it fits again. It
// returns the queues that took it and those that refused it. published
// says whether a client published it (counted in the queues' publish
// rates, as the broker counts publishes) or it was dead-lettered (not).
func (s *Sim) deliverTo(queues []string, m *message, published bool) (took, refused []string) {
	for _, name := range queues {
		q := s.byName[name]
		if q == nil {
			continue
		}
		c := *m
		c.enqueued = s.now
		c.redelivered = false
		mode := q.set.Overflow
		if (mode == topology.OverflowRejectPublish || mode == topology.OverflowRejectPublishDLX) && q.full(len(m.body)) {
			refused = append(refused, name)
			s.stats.Refused++
			if mode == topology.OverflowRejectPublishDLX {
				s.deadLetter(q, &c, retry.ReasonMaxlen)
			}
			continue
		}
		q.push(&c)
		took = append(took, name)
		if published {
			q.published++
		}
		for q.over() && len(q.ready) > 0 {
			s.stats.MaxLenDrops++
			s.deadLetter(q, q.pop(), retry.ReasonMaxlen)
		}
	}
	return took, refused
}

// setPolicy applies a policy definition to queue (an operator's policy on
// the broker): its limits and dead-letter settings follow, and a queue over
// a new length limit drops its head at once, as the broker does.
func (s *Sim) setPolicy(queue string, def map[string]any) {
	q := s.byName[queue]
	if q == nil {
		return
	}
	q.policy = def
	q.settle()
	s.topo = nil
	for q.over() && len(q.ready) > 0 && q.set.Overflow != topology.OverflowRejectPublish && q.set.Overflow != topology.OverflowRejectPublishDLX {
		s.stats.MaxLenDrops++
		s.deadLetter(q, q.pop(), retry.ReasonMaxlen)
	}
}

// intoQueue finds how to publish a message with routing key key so that it
// lands in queue alone with that key kept: a tier that keeps routing keys
// returns its dead letters with the key they entered with, so the default
// exchange (key = queue name) would lose it. It tries the exchanges bound to
// queue: a headers binding (its arguments are added to the headers), a
// direct or topic binding matching key. ok is false when none works; then
// only the default exchange reaches the queue, without the key.
func (s *Sim) intoQueue(queue, key string, h retry.Headers) (exchange string, out retry.Headers, ok bool) {
	for _, b := range s.bindings {
		if b.Destination != queue || b.DestinationType != "queue" {
			continue
		}
		try := h
		if s.exchangeKind(b.Source) == topology.ExchangeHeaders {
			try = h.Clone()
			for k, v := range b.Arguments {
				if k != "x-match" {
					try[k] = v
				}
			}
		}
		if qs := s.route(b.Source, key, try); len(qs) == 1 && qs[0] == queue {
			return b.Source, try, true
		}
	}
	return "", h, false
}

func (s *Sim) exchangeKind(name string) string {
	for _, x := range s.exchanges {
		if x.Name == name {
			return x.Type
		}
	}
	return ""
}
