package topology

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
)

// RouteResult is where a message published to an exchange ends up.
type RouteResult struct {
	// Queues reached, sorted by name, each once.
	Queues []string
	// ExchangeExists is false when the exchange the message was published to
	// is not in the vhost (the default exchange "" always exists).
	ExchangeExists bool
	// Approximate is true when some step could only say "may reach": an
	// exchange type ladder does not model (x-consistent-hash, x-random…), or a
	// routing key / headers that are not known (dead letters keep the
	// message's own). Queues then lists every queue the message may reach.
	Approximate bool
}

// Route applies RabbitMQ's routing rules to a message a client publishes to
// exchange with routingKey and headers: the message's CC and BCC headers add
// routing keys, as the broker's do (see PublishKeys; a malformed one is
// ignored here, PublishKeys says why the broker refuses it); default
// exchange by queue name; direct, fanout, topic and headers bindings; exchange-to-exchange bindings (each exchange
// visited once, so binding cycles terminate, as in the broker); an
// x-delayed-message exchange routes per its x-delayed-type (the delay itself
// is not modelled); an exchange whose own bindings match nothing hands the
// message to its alternate-exchange argument, as the broker does.
//
// Route indexes the vhost on every call; use NewRouter to route many messages.
func Route(v *Vhost, exchange, routingKey string, headers map[string]any) RouteResult {
	return NewRouter(v).Route(exchange, routingKey, headers)
}

// Router routes messages in one vhost. It indexes bindings by source exchange
// and queues and exchanges by name once. The vhost must not change while the
// Router is in use; a Router is safe for concurrent use.
type Router struct {
	v         *Vhost
	queues    map[string]int   // queue name → index in v.Queues
	exchanges map[string]int   // exchange name → index in v.Exchanges
	bySource  map[string][]int // source exchange → binding indices
	intoQueue map[string][]int // destination queue → binding indices
	// kinds[i] is exchange i's routing behaviour, resolved once
	// (x-delayed-message → its x-delayed-type).
	kinds []string
	// alt[i] is exchange i's alternate-exchange argument, if any.
	alt    []string
	hasAlt []bool
	// noDelayedExchange: PlanReplay never routes through a delayed-message
	// exchange (the broker has none, 4.3).
	noDelayedExchange bool
	// quorumDelayQueues: PlanReplay's wait queues are quorum queues that
	// dead-letter at least once (moveplan.Spec.QuorumDelayQueues).
	quorumDelayQueues bool
}

// NewRouter indexes v for routing.
// Conventions are the retry conventions of the router's vhost.
func (r *Router) Conventions() retry.Table { return r.v.Conventions }

func NewRouter(v *Vhost) *Router {
	r := &Router{
		v:         v,
		queues:    make(map[string]int, len(v.Queues)),
		exchanges: make(map[string]int, len(v.Exchanges)),
		bySource:  make(map[string][]int, len(v.Exchanges)),
		intoQueue: make(map[string][]int, len(v.Queues)),
		kinds:     make([]string, len(v.Exchanges)),
		alt:       make([]string, len(v.Exchanges)),
		hasAlt:    make([]bool, len(v.Exchanges)),
	}
	for i := range v.Queues {
		if _, dup := r.queues[v.Queues[i].Name]; !dup {
			r.queues[v.Queues[i].Name] = i
		}
	}
	for i := range v.Exchanges {
		x := &v.Exchanges[i]
		if _, dup := r.exchanges[x.Name]; !dup {
			r.exchanges[x.Name] = i
		}
		r.kinds[i] = x.Type
		if x.Type == ExchangeDelayed {
			// The plugin refuses to declare without x-delayed-type; an
			// unreadable one leaves the kind unknown ("may reach" all).
			t, _ := dlString(x.Arguments["x-delayed-type"])
			r.kinds[i] = t
		}
		if a, ok := dlString(x.Arguments["alternate-exchange"]); ok {
			r.alt[i], r.hasAlt[i] = a, true
		}
	}
	for i := range v.Bindings {
		b := &v.Bindings[i]
		r.bySource[b.Source] = append(r.bySource[b.Source], i)
		if b.DestinationType != "exchange" {
			r.intoQueue[b.Destination] = append(r.intoQueue[b.Destination], i)
		}
	}
	return r
}

// Route is Route on the indexed vhost.
func (r *Router) Route(exchange, routingKey string, headers map[string]any) RouteResult {
	extra, _ := PublishKeys(headers)
	return r.route(exchange, rtMsg{key: routingKey, extra: extra, headers: headers})
}

// RouteKeys routes a message with exactly these routing keys (at least
// one), whatever its headers say of CC and BCC: what the broker does with a
// dead letter (its dead-letter routing key, or the keys it was published
// with, CC included). headers matter to headers exchanges only.
func (r *Router) RouteKeys(exchange string, keys []string, headers map[string]any) RouteResult {
	if len(keys) == 0 {
		return RouteResult{ExchangeExists: r.ExchangeExists(exchange)}
	}
	return r.route(exchange, rtMsg{key: keys[0], extra: keys[1:], headers: headers})
}

func (r *Router) route(exchange string, m rtMsg) RouteResult {
	s := r.newScratch()
	res := r.routeInto(exchange, m, s)
	res.Queues = s.names(r.v)
	return res
}

// Headers the broker reads routing keys from (rabbit_basic header_routes).
const (
	HeaderCC  = "CC"
	HeaderBCC = "BCC"
)

// PublishKeys are the routing keys a message's CC and BCC headers add when
// a client publishes it: each header, when present, must be an array (the
// broker closes the channel otherwise: PRECONDITION_FAILED
// unacceptable_type_in_header, returned here as err, naming the header);
// its string elements are keys, anything else in it is ignored. The broker
// takes BCC off the message it stores; CC stays.
func PublishKeys(h map[string]any) (keys []string, err error) {
	for _, name := range []string{HeaderCC, HeaderBCC} {
		v, ok := h[name]
		if !ok {
			continue
		}
		arr, isArr := amqpfield.Array(v)
		if !isArr {
			if err == nil {
				err = fmt.Errorf("its %s header (%s) is not an array: the broker refuses to publish it", name, amqpfield.TypeName(v))
			}
			continue
		}
		for _, e := range arr {
			if s, ok := e.(string); ok {
				keys = append(keys, s)
			}
		}
	}
	return keys, err
}

// QueueIndex returns the index of the named queue in Vhost().Queues, or -1.
func (r *Router) QueueIndex(name string) int {
	if i, ok := r.queues[name]; ok {
		return i
	}
	return -1
}

// ExchangeExists reports whether the exchange exists; "" always does.
func (r *Router) ExchangeExists(name string) bool {
	if name == "" {
		return true
	}
	_, ok := r.exchanges[name]
	return ok
}

// rtMsg is what routing looks at. anyKey and anyHeaders mean "not known":
// every binding that could match is taken (a "may reach" answer). extra are
// more routing keys (CC, BCC, or a dead letter's other keys): a binding
// matches when it matches any key.
type rtMsg struct {
	key        string
	extra      []string
	anyKey     bool
	headers    map[string]any
	anyHeaders bool
}

// rtScratch collects one routing's result. Stamps avoid clearing per call,
// so discovery can reuse one scratch for thousands of routes.
type rtScratch struct {
	stamp  uint32
	qSeen  []uint32
	xSeen  []uint32
	queues []int
}

func (r *Router) newScratch() *rtScratch {
	return &rtScratch{
		qSeen: make([]uint32, len(r.v.Queues)),
		xSeen: make([]uint32, len(r.v.Exchanges)),
	}
}

func (s *rtScratch) reset() {
	s.stamp++
	if s.stamp == 0 { // wrapped: old stamps could collide
		clear(s.qSeen)
		clear(s.xSeen)
		s.stamp = 1
	}
	s.queues = s.queues[:0]
}

func (s *rtScratch) addQueue(i int) {
	if s.qSeen[i] != s.stamp {
		s.qSeen[i] = s.stamp
		s.queues = append(s.queues, i)
	}
}

func (s *rtScratch) names(v *Vhost) []string {
	out := make([]string, len(s.queues))
	for k, i := range s.queues {
		out[k] = v.Queues[i].Name
	}
	sort.Strings(out)
	return out
}

// routeInto resets s and routes m from exchange; the reached queue indices
// are in s.queues (unsorted). Queues and Approximate of the result are set
// by the caller from s.
func (r *Router) routeInto(exchange string, m rtMsg, s *rtScratch) RouteResult {
	s.reset()
	if exchange == "" {
		// The default exchange binds every queue by its name and nothing
		// else; it cannot be bound to or from. An unknown key here is the
		// caller's business (see deadLetterTargets).
		if !m.anyKey {
			if i := r.QueueIndex(m.key); i >= 0 {
				s.addQueue(i)
			}
			for _, k := range m.extra {
				if i := r.QueueIndex(k); i >= 0 {
					s.addQueue(i)
				}
			}
		}
		return RouteResult{ExchangeExists: true}
	}
	xi, ok := r.exchanges[exchange]
	if !ok {
		return RouteResult{}
	}
	approx := m.anyKey || m.anyHeaders
	if r.walk(xi, m, s) {
		approx = true
	}
	return RouteResult{ExchangeExists: true, Approximate: approx}
}

// walk routes m through exchange xi and everything it binds to. It reports
// whether an exchange of a kind ladder does not model was on the way.
func (r *Router) walk(xi int, m rtMsg, s *rtScratch) (unknownKind bool) {
	// Work list instead of recursion: e2e chains can be long, and each
	// exchange is taken once (the broker's SeenXs), which ends cycles.
	work := []int{xi}
	s.xSeen[xi] = s.stamp
	for len(work) > 0 {
		xi := work[len(work)-1]
		work = work[:len(work)-1]
		x := &r.v.Exchanges[xi]
		kind := r.kinds[xi]
		if !rtKnownKind(kind) {
			unknownKind = true
		}
		matched := 0
		for _, bi := range r.bySource[x.Name] {
			b := &r.v.Bindings[bi]
			if !rtBindingMatches(kind, b, m) {
				continue
			}
			matched++
			if b.DestinationType == "exchange" {
				if di, ok := r.exchanges[b.Destination]; ok && s.xSeen[di] != s.stamp {
					s.xSeen[di] = s.stamp
					work = append(work, di)
				}
				continue
			}
			if qi := r.QueueIndex(b.Destination); qi >= 0 {
				s.addQueue(qi)
			}
		}
		// The broker consults the alternate exchange when the exchange's own
		// bindings matched nothing (rabbit_exchange process_alternate).
		if matched == 0 && r.hasAlt[xi] {
			if ai, ok := r.exchanges[r.alt[xi]]; ok && s.xSeen[ai] != s.stamp {
				s.xSeen[ai] = s.stamp
				work = append(work, ai)
			}
		}
	}
	return unknownKind
}

func rtKnownKind(kind string) bool {
	switch kind {
	case ExchangeDirect, ExchangeFanout, ExchangeTopic, ExchangeHeaders:
		return true
	}
	return false
}

// rtBindingMatches decides one binding for an exchange of the given kind.
func rtBindingMatches(kind string, b *Binding, m rtMsg) bool {
	switch kind {
	case ExchangeDirect:
		return m.anyKey || b.RoutingKey == m.key || slices.Contains(m.extra, b.RoutingKey)
	case ExchangeFanout:
		return true
	case ExchangeTopic:
		if m.anyKey || topicMatch(b.RoutingKey, m.key) {
			return true
		}
		for _, k := range m.extra {
			if topicMatch(b.RoutingKey, k) {
				return true
			}
		}
		return false
	case ExchangeHeaders:
		return m.anyHeaders || headersMatch(b.Arguments, m.headers)
	default:
		// Consistent-hash, random and other plugin types pick among their
		// bindings in ways we do not model: the message may reach any.
		return true
	}
}

// topicMatch reports whether a topic binding pattern matches a routing key.
// Both are split into words at '.', as the broker does: "" is zero words,
// "a." is the two words "a" and "". A pattern word "*" matches exactly one
// word (possibly empty), "#" matches zero or more words; '*' and '#' inside a
// longer word are literal.
func topicMatch(pattern, key string) bool {
	// Greedy matching with backtracking to the last '#', as for glob '*':
	// '#' is the only variable-length token, so retrying from the latest one
	// is enough; O(len(pattern)·len(key)) at worst, no allocation.
	p, k := 0, 0 // byte offsets of the current word in pattern and key
	pDone, kDone := pattern == "", key == ""
	starP, starK := -1, -1 // pattern offset after the last '#', key offset it resumed at
	starKDone := false
	for {
		if !kDone {
			if !pDone {
				pw, pNext, pEnd := rtWord(pattern, p)
				kw, kNext, kEnd := rtWord(key, k)
				if pw == "#" {
					starP, starK, starKDone = pNext, k, false
					if pEnd {
						return true // trailing '#' takes the rest
					}
					p = pNext
					continue
				}
				if pw == "*" || pw == kw {
					p, pDone = pNext, pEnd
					k, kDone = kNext, kEnd
					continue
				}
			}
			// Mismatch: let the last '#' take one more word.
			if starP < 0 || starKDone {
				return false
			}
			_, kNext, kEnd := rtWord(key, starK)
			starK, starKDone = kNext, kEnd
			p, pDone = starP, false
			k, kDone = starK, starKDone
			continue
		}
		// Key used up: the rest of the pattern must be all '#'.
		for !pDone {
			pw, pNext, pEnd := rtWord(pattern, p)
			if pw != "#" {
				return false
			}
			p, pDone = pNext, pEnd
		}
		return true
	}
}

// rtWord returns the word starting at offset i, the offset of the next word,
// and whether this word was the last.
func rtWord(s string, i int) (word string, next int, last bool) {
	if j := strings.IndexByte(s[i:], '.'); j >= 0 {
		return s[i : i+j], i + j + 1, false
	}
	return s[i:], len(s), true
}

// headersMatch applies a headers-exchange binding's arguments to message
// headers. x-match is "all" (default), "any", "all-with-x" or "any-with-x";
// without "-with-x", binding arguments starting with "x-" are ignored. A
// binding argument with a nil (void) value asks only for the header's
// presence. Values compare by kind: any two numbers by value (management JSON
// gives float64 where AMQP gave an int), string and []byte by bytes.
func headersMatch(bindingArgs, headers map[string]any) bool {
	mode, _ := dlString(bindingArgs["x-match"])
	matchAny, withX := false, false
	switch mode {
	case "any":
		matchAny = true
	case "any-with-x":
		matchAny, withX = true, true
	case "all-with-x":
		withX = true
	}
	for k, want := range bindingArgs {
		if k == "x-match" || (!withX && strings.HasPrefix(k, "x-")) {
			continue
		}
		got, present := headers[k]
		ok := present && (want == nil || rtValueEqual(want, got))
		if matchAny && ok {
			return true
		}
		if !matchAny && !ok {
			return false
		}
	}
	// "any" needs one match; "all" over zero arguments matches, as in the broker.
	return !matchAny
}

// rtValueEqual compares two field values the way a headers exchange would,
// tolerating the integer/float split between AMQP and management JSON.
func rtValueEqual(a, b any) bool {
	if ai, aok := dlExactInt(a); aok {
		if bi, bok := dlExactInt(b); bok {
			return ai == bi
		}
	}
	if af, aok := dlFloat(a); aok {
		if bf, bok := dlFloat(b); bok {
			return af == bf
		}
		return false
	}
	if as, aok := rtBytes(a); aok {
		if bs, bok := rtBytes(b); bok {
			return bytes.Equal(as, bs)
		}
		return false
	}
	if at, aok := a.(time.Time); aok {
		if bt, bok := b.(time.Time); bok {
			return at.Equal(bt)
		}
		return false
	}
	return reflect.DeepEqual(a, b)
}

func rtBytes(v any) ([]byte, bool) {
	switch s := v.(type) {
	case string:
		return []byte(s), true
	case []byte:
		return s, true
	}
	return nil, false
}

// dlExactInt returns v as an int64 when it is an integer value (including a
// whole float that fits).
func dlExactInt(v any) (int64, bool) {
	switch n := v.(type) {
	case float32:
		f := float64(n)
		if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return int64(f), true
		}
		return 0, false
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<63 {
			return int64(n), true
		}
		return 0, false
	}
	return dlInt(v)
}

// UsesHeaders reports whether routing from exchange can depend on message
// headers: it, or an exchange bound from it, routes by headers (or is of a
// kind ladder does not model). Such routes must be decided per message.
func (r *Router) UsesHeaders(exchange string) bool {
	seen := map[string]bool{}
	var visit func(string) bool
	visit = func(x string) bool {
		if x == "" || seen[x] {
			return false
		}
		seen[x] = true
		xi, ok := r.exchanges[x]
		if !ok {
			return false
		}
		switch r.kinds[xi] {
		case ExchangeDirect, ExchangeFanout, ExchangeTopic:
		default:
			return true
		}
		for _, bi := range r.bySource[x] {
			b := &r.v.Bindings[bi]
			if b.DestinationType == "exchange" && visit(b.Destination) {
				return true
			}
		}
		if r.hasAlt[xi] {
			return visit(r.alt[xi])
		}
		return false
	}
	return visit(exchange)
}

// Vhost is the description r indexes.
func (r *Router) Vhost() *Vhost { return r.v }

// SetReplayWaits says what PlanReplay may wait in on this broker: never a
// delayed-message exchange (noDelayedExchange, RabbitMQ 4.3), and quorum
// wait queues that dead-letter at least once (quorum, 3.10+).
func (r *Router) SetReplayWaits(noDelayedExchange, quorum bool) {
	r.noDelayedExchange, r.quorumDelayQueues = noDelayedExchange, quorum
}
