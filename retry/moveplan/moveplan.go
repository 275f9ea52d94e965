package moveplan

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
	"github.com/ladder-tui/ladder/retry/internal/words"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Headers ladder writes on every message it moves or replays.
const (
	// HeaderMovedFrom names the queue the message was moved from.
	HeaderMovedFrom = "x-ladder-moved-from"
	// HeaderOriginalExpiration keeps a message's expiration property when a
	// delayed route takes it off (it would cut the wait short).
	HeaderOriginalExpiration = "x-ladder-original-expiration"
	// HeaderMoves counts how often ladder moved or replayed the message:
	// +1 each time, in the type it has (the loop guard reads it).
	HeaderMoves = "x-ladder-moves"
	// HeaderOriginalExchange and HeaderOriginalRoutingKey keep the
	// exchange and routing key that first brought a message to the queue
	// it failed in, when --to origin publishes it to that queue directly
	// (that route reaches other queues too, or none any more).
	HeaderOriginalExchange   = "x-ladder-original-exchange"
	HeaderOriginalRoutingKey = "x-ladder-original-routing-key"
	// HeaderOriginalCC keeps a message's CC header when ladder takes it
	// off: the broker routes by CC on every publish, so a delayed message
	// (published into its wait and dead-lettered out of it) or one sent
	// straight back to the queue it failed in would reach more queues.
	HeaderOriginalCC = "x-ladder-original-cc"
	hdrXDelay        = "x-delay"
)

// TargetKind is where a move sends messages.
type TargetKind string

// Target kinds.
const (
	TargetQueue    TargetKind = "queue"
	TargetExchange TargetKind = "exchange"
	TargetOrigin   TargetKind = "origin"
	// TargetOriginal (replay only): the exchange and routing key each dumped
	// message was delivered with.
	TargetOriginal TargetKind = "original"
)

// Target is where moved messages go.
type Target struct {
	Kind       TargetKind
	Name       string // queue or exchange name
	RoutingKey string // for exchange targets
	// HasKey: RoutingKey was given; without it each message keeps its own.
	HasKey bool
}

// ParseTarget reads queue:NAME, exchange:NAME[:ROUTING_KEY] or origin.
func ParseTarget(s string) (Target, error) {
	switch {
	case s == string(TargetOrigin):
		return Target{Kind: TargetOrigin}, nil
	case s == string(TargetOriginal):
		return Target{Kind: TargetOriginal}, nil
	case strings.HasPrefix(s, "queue:") && len(s) > len("queue:"):
		return Target{Kind: TargetQueue, Name: s[len("queue:"):]}, nil
	case strings.HasPrefix(s, "exchange:"):
		name, key, hasKey := strings.Cut(s[len("exchange:"):], ":")
		if name == "" {
			return Target{}, fmt.Errorf("--to %q: exchange name is empty (the default exchange is reached with queue:NAME)", s)
		}
		return Target{Kind: TargetExchange, Name: name, RoutingKey: key, HasKey: hasKey}, nil
	}
	return Target{}, fmt.Errorf("--to %q: want queue:NAME, exchange:NAME[:ROUTING_KEY], origin or (replay) original", s)
}

// String is the target as the user writes it.
func (t Target) String() string {
	switch t.Kind {
	case TargetQueue:
		return "queue:" + t.Name
	case TargetExchange:
		if t.HasKey {
			return "exchange:" + t.Name + ":" + t.RoutingKey
		}
		return "exchange:" + t.Name
	}
	return string(t.Kind)
}

// Spec is what the user asked of a move, everything but which messages.
type Spec struct {
	From         string
	To           Target
	Delay        time.Duration
	ResetRetries bool
	// Positions and PositionIDs: the message id the user saw at each
	// position ("" skips the check). A message found elsewhere is not moved.
	Positions   []int
	PositionIDs []string
	// Expect is the plan the user confirmed (a dry run's). A message whose
	// route is no longer the one shown stops with a note instead of taking
	// another way.
	Expect []Route
	// Where chooses the messages (--where); others are left alone, seen at
	// Now.
	Where Where
	Now   time.Time
	// MaxMoves (> 0) leaves a message ladder already moved that many times
	// in place (the loop guard), unless Force.
	MaxMoves int
	Force    bool
	// Replay plans messages read from a dump of queue From (which need not
	// exist any more), not taken from From.
	Replay bool
	// CarryDeaths moves a message's x-death into HeaderCarriedDeaths: for
	// brokers (4.x) that restart x-death on a re-published message.
	CarryDeaths bool
	// NoDelayedExchange: the broker has no delayed-message exchange (4.3),
	// so a delay waits in a tier or a per-delay queue.
	NoDelayedExchange bool
	// Pick, when set, chooses the messages one by one (ladder unblock: the
	// messages holding others back, in queue order), each with its own
	// delay; others are left alone, as --where leaves them. Expect is then
	// matched pick by pick, not by position: once a holder leaves, the
	// broker expires what was due behind it and positions shift.
	Pick []Pick
	// Clock, when set, is the time a message is planned at as it is
	// published (a pick's exact remaining delay); Now otherwise.
	Clock func() time.Time
	// QuorumDelayQueues: the broker has quorum queues that dead-letter at
	// least once (3.10+): ladder's wait queues are such queues, so a
	// broker crash during the wait loses nothing.
	QuorumDelayQueues bool
	// Ready, when set, is a queue's exact ready count, read when a length
	// limit of a queue the move reaches is first checked (the vhost's
	// counts may lag); the vhost's Ready otherwise. ok false: not known.
	Ready func(queue string) (n int64, ok bool)
	// Policy, when set, is the policy definition that applies to a queue
	// of that type now (EffectivePolicy of the policies as listed); ok
	// false keeps the vhost's. Only length limits are read from it.
	Policy func(queue, typ string) (def map[string]any, ok bool)
}

// Pick is one message a move takes by identity, as a peek saw it. Ids and
// bodies need not be unique (many publishers set no id), so a message is
// the pick only if every property that makes its due time matches and it
// is no further back in the queue than the peek saw it: messages leave a
// queue at its head only, so a message can move forward, never back.
type Pick struct {
	// Position is where the peek saw it.
	Position   int
	MessageID  string
	BodyDigest string
	Expiration string
	Timestamp  time.Time
	// DueAt is when its delay runs out. Delay is what remained of it at the
	// peek, rounded up to the second (what the preview shows): the wait
	// queue is chosen again from DueAt as the message is published.
	DueAt time.Time
	Delay time.Duration
}

// Is says whether m is this pick.
func (k Pick) Is(m Message) bool {
	return m.Position <= k.Position && m.MessageID == k.MessageID && m.BodyDigest == k.BodyDigest &&
		m.Expiration == k.Expiration && m.Timestamp.Unix() == k.Timestamp.Unix()
}

// Message is what the planner needs of one message: all of it that the
// route can depend on.
type Message struct {
	Position  int
	MessageID string
	// BodyDigest tells the message apart from another at the same
	// position when ids are missing or alike (BodyDigest of the body).
	BodyDigest string
	// Exchange and RoutingKey are those the message was delivered with.
	Exchange, RoutingKey string
	Headers              retry.Headers
	Expiration           string
	// Body and Timestamp are read by --where only.
	Body      []byte
	Timestamp time.Time
	// BodySize is the body's length (a target's x-max-length-bytes counts
	// it); 0 means len(Body).
	BodySize int
}

// Route is one message's plan: where it ends up, what it is published
// with, the way it takes and the header edits to make. The live mover, the
// simulation, the dry run and the UI all read this same value. JSON field
// names are a contract (`ladder move -o json`, "planned").
type Route struct {
	Position   int    `json:"position"`
	MessageID  string `json:"message_id"`
	BodyDigest string `json:"body_sha256,omitempty"`
	// TargetExchange and TargetRoutingKey are where the message ends up;
	// Exchange and RoutingKey are what it is published with.
	TargetExchange   string       `json:"target_exchange"`
	TargetRoutingKey string       `json:"target_routing_key"`
	Exchange         string       `json:"exchange"`
	RoutingKey       string       `json:"routing_key"`
	Via              topology.Via `json:"via,omitempty"`
	// Queue is the tier or ladder wait queue the message waits in.
	Queue string `json:"queue,omitempty"`
	// WaitQueueArgs declare Queue first (delay_queue only).
	WaitQueueArgs retry.Headers `json:"wait_queue_args,omitempty"`
	Mandatory     bool          `json:"mandatory"`
	// SetHeaders and DropHeaders are the edits to the message's headers;
	// every other header is published as it came, with its type.
	SetHeaders  retry.Headers `json:"set_headers,omitempty"`
	DropHeaders []string      `json:"drop_headers,omitempty"`
	// Expiration is the expiration property to publish with.
	Expiration string `json:"expiration,omitempty"`
	// Reaches are the queues the message lands in at the end (after its
	// delay): every one, CC header and alternate exchanges included.
	Reaches []string `json:"reaches,omitempty"`
	// CrashRisk, when set, says why a broker crash while the message waits
	// (in a tier, a delayed exchange, or a wait queue that dead-letters at
	// most once) can lose it.
	CrashRisk string `json:"crash_risk,omitempty"`
	// Skip, when set, says why the message is not moved (it stays in the
	// source); Note is anything else worth knowing.
	Skip string `json:"skip,omitempty"`
	Note string `json:"note,omitempty"`
	// Unmatched: --where did not choose the message; it is left alone and
	// is not part of the move.
	Unmatched bool `json:"unmatched,omitempty"`
	// Pick is 1 + the index of the Spec.Pick the message was taken
	// as (0: none): a confirmed plan is held to pick by pick.
	Pick int `json:"-"`
	// Stop: the message stays because a queue it would reach is full
	// (Skip says which): a running move stops here, leaving it and every
	// message after it in the source.
	Stop bool `json:"-"`
}

// Moves reports whether the plan moves the message.
func (r Route) Moves() bool { return r.Skip == "" }

// Skipped is the plan turned into "stays in the source, because why":
// nothing is published, so it carries no way and no edits.
func (r Route) Skipped(why string) Route {
	return Route{Position: r.Position, MessageID: r.MessageID, BodyDigest: r.BodyDigest,
		TargetExchange: r.TargetExchange, TargetRoutingKey: r.TargetRoutingKey, Skip: why, Pick: r.Pick}
}

// BodyDigest identifies a body: the first 8 bytes of its SHA-256, in hex.
func BodyDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:8])
}

// Apply returns the headers to publish: h with the route's edits. h is not
// changed.
func (r Route) Apply(h retry.Headers) retry.Headers {
	out := h.Clone()
	for _, k := range r.DropHeaders {
		delete(out, k)
	}
	for k, v := range r.SetHeaders {
		out[k] = v
	}
	return out
}

// Planner plans moves in one vhost: one planner for the live broker,
// the simulation, the dry run and the UI, so the preview is the plan that
// runs. It is not safe for concurrent use (it caches routes).
type Planner struct {
	spec    Spec
	router  *topology.Router
	ladders []retry.Ladder
	mains   map[string]bool
	deaths  map[string]bool
	// routedBy are the header names some headers binding looks at: a cached
	// route is kept with their values and used only for equal ones.
	routedBy []string
	cache    map[routeKey][]cachedRoute
	ids      map[int]string
	expect   map[int]Route
	// expectPick[i] is the confirmed route of spec.Pick[i]; picked[i] says
	// a message was taken as pick i, nextPick is the first pick not yet
	// taken (picks are met in queue order).
	expectPick map[int]Route
	picked     []bool
	nextPick   int
	// rooms are the length limits of the queues moves reach, with what
	// the plan put there so far (nil: the queue has no limit).
	rooms map[string]*room
	// reached lists the queues routes reached, in order of first use (a
	// long move reads their limits again: ReachedQueues).
	reached    []string
	reachedSet map[string]bool
	// stopped, once a message found a queue full, is why every later one
	// stays: a move stops there.
	stopped string
	// origins caches --to origin's choices (see origin).
	origins map[string]originChoice
	// sentBytes are the body bytes planned into each reached queue.
	sentBytes map[string]int64
}

// routeKey is what a cached route is planned from besides the headers.
type routeKey struct {
	exchange, key string
	delay         time.Duration
}

type cachedRoute struct {
	// routing is the message's headers among routedBy, compared in full
	// (type and value) before the route is used again.
	routing   map[string]any
	rt        topology.ReplayRoute
	reaches   []string
	note      string
	crashRisk string
	err       error
}

// NewPlanner checks the spec against the vhost — the source exists and
// is not a stream, the target exists and is not the source, the delay is
// not negative — and returns a planner for its messages. Errors name the
// queue, exchange or flag at fault.
func NewPlanner(v *topology.Vhost, ladders []retry.Ladder, spec Spec) (*Planner, error) {
	r := topology.NewRouter(v)
	src := r.QueueIndex(spec.From)
	switch {
	case spec.Replay:
	case spec.From == "":
		return nil, errors.New("move: no source queue")
	case src < 0:
		return nil, fmt.Errorf("move: source queue %q does not exist in vhost %s", spec.From, v.Name)
	case v.Queues[src].Type == topology.QueueStream:
		return nil, fmt.Errorf("move from %s: a stream cannot give messages up (read it with peek)", spec.From)
	}
	if spec.Delay < 0 {
		return nil, fmt.Errorf("move from %s: --delay %v is negative", spec.From, spec.Delay)
	}
	t := spec.To
	switch t.Kind {
	case TargetQueue:
		if r.QueueIndex(t.Name) < 0 {
			return nil, fmt.Errorf("move: target queue %q does not exist in vhost %s", t.Name, v.Name)
		}
		// A replay reads a file, not the queue it was dumped from:
		// restoring that queue (after a purge) is what a dump is for.
		if t.Name == spec.From && !spec.Replay {
			return nil, fmt.Errorf("move: target queue %q is the source", t.Name)
		}
	case TargetExchange:
		if t.Name == "" || !r.ExchangeExists(t.Name) {
			return nil, fmt.Errorf("move: target exchange %q does not exist in vhost %s", t.Name, v.Name)
		}
	case TargetOrigin:
	case TargetOriginal:
		if !spec.Replay {
			return nil, errors.New("--to original is for replay (a queue's messages were last published to whatever put them there): use origin")
		}
	default:
		return nil, fmt.Errorf("move: unknown target %q (want queue:NAME, exchange:NAME[:KEY] or origin)", t.Kind)
	}
	r.SetReplayWaits(spec.NoDelayedExchange, spec.QuorumDelayQueues)
	p := &Planner{
		spec: spec, router: r, ladders: ladders, mains: retry.MainQueues(ladders),
		cache: map[routeKey][]cachedRoute{}, ids: map[int]string{}, expect: map[int]Route{}, expectPick: map[int]Route{},
		picked: make([]bool, len(spec.Pick)),
		rooms:  map[string]*room{}, reachedSet: map[string]bool{}, origins: map[string]originChoice{}, sentBytes: map[string]int64{},
	}
	p.deaths = retry.DeathQueuesOf(ladders, spec.From)
	for i, pos := range spec.Positions {
		if i < len(spec.PositionIDs) && spec.PositionIDs[i] != "" {
			p.ids[pos] = spec.PositionIDs[i]
		}
	}
	for _, e := range spec.Expect {
		if spec.Pick != nil {
			if e.Pick > 0 {
				p.expectPick[e.Pick-1] = e
			}
		} else {
			p.expect[e.Position] = e
		}
	}
	p.routedBy = headerNamesRoutedBy(v)
	return p, nil
}

// headerNamesRoutedBy lists the header names any headers binding of v
// matches on (delayed exchanges of headers type included), sorted.
func headerNamesRoutedBy(v *topology.Vhost) []string {
	kinds := map[string]string{}
	for _, x := range v.Exchanges {
		k := x.Type
		if k == topology.ExchangeDelayed {
			k, _ = x.Arguments["x-delayed-type"].(string)
		}
		kinds[x.Name] = k
	}
	set := map[string]bool{}
	for _, b := range v.Bindings {
		if kinds[b.Source] == topology.ExchangeHeaders {
			for k := range b.Arguments {
				if k != "x-match" {
					set[k] = true
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ReadsDigest says whether plans depend on Message.BodyDigest (a pick
// by identity, or a preview's plan to hold to). Otherwise it is only
// carried into the route.
func (p *Planner) ReadsDigest() bool {
	return p.spec.Pick != nil || len(p.spec.Expect) > 0
}

// Plan decides one message's route. It never fails: a message that cannot
// be moved gets a route with Skip saying why.
func (p *Planner) Plan(m Message) Route {
	r := p.plan(m)
	if r.Unmatched {
		return r
	}
	if !r.Moves() {
		return r.Skipped(r.Skip)
	}
	size := int64(m.BodySize)
	if size == 0 {
		size = int64(len(m.Body))
	}
	if p.stopped != "" {
		// The move stops at the first message a full queue could not
		// take: nothing after it moves either (counted where it would go).
		for _, q := range checked(&r) {
			if rm := p.roomOf(q); rm != nil {
				rm.over++
			}
		}
		s := r.Skipped(p.stopped)
		s.Stop = true
		return s
	}
	if why, stop := p.overflow(&r, size); stop {
		p.stopped = fmt.Sprintf("the move stops at message #%d (%s): left in %s", r.Position, firstClause(why), p.left())
		s := r.Skipped(why)
		s.Stop = true
		return s
	}
	r = p.held(r)
	if r.Moves() {
		p.book(&r, size)
	}
	return r
}

// held holds r to the confirmed plan, if there is one.
func (p *Planner) held(r Route) Route {
	if p.spec.Pick != nil {
		if e, ok := p.expectPick[r.Pick-1]; ok {
			// Positions shift as due messages leave, and the remaining
			// delay (its expiration and wait queue) shrinks while the user
			// confirms: the same way to the same target is the plan.
			e.Position, e.Expiration = r.Position, r.Expiration
			if e.Via == topology.ViaDelayQueue && r.Via == topology.ViaDelayQueue {
				e.Queue, e.RoutingKey = r.Queue, r.RoutingKey
			}
			if !sameRoute(e, r) {
				return r.Skipped("the plan changed since the preview (" + routeText(e) + ", now " + routeText(r) + "): left in " + p.left())
			}
			return r
		}
		if len(p.spec.Expect) > 0 {
			return r.Skipped("it was not part of the confirmed plan: left in " + p.left())
		}
	}
	if e, ok := p.expect[r.Position]; ok && !sameRoute(e, r) {
		if e.MessageID != r.MessageID || e.BodyDigest != r.BodyDigest {
			return r.Skipped(fmt.Sprintf("the plan changed since the preview: another message is at position %d (was %s, now %s): left in %s",
				r.Position, messageName(e), messageName(r), p.left()))
		}
		return r.Skipped("the plan changed since the preview (" + routeText(e) + ", now " + routeText(r) + "): left in " + p.left())
	}
	return r
}

func (p *Planner) plan(m Message) Route {
	r := Route{Position: m.Position, MessageID: m.MessageID, BodyDigest: m.BodyDigest}
	if !p.spec.Where.Empty() {
		s := SubjectOf(p.router.Conventions(), m.Headers, p.deaths, p.mains, m.Body, m.Timestamp)
		if !p.spec.Where.Match(s, p.spec.Now) {
			r.Unmatched, r.Skip = true, "not chosen by --where"
			return r
		}
		// A guess never chooses a message unsaid.
		r.Note = joinNotes(r.Note, p.spec.Where.Guesses(s))
	}
	delay := p.spec.Delay
	pick, left := -1, time.Duration(0)
	if p.spec.Pick != nil {
		if pick = p.takePick(m); pick < 0 {
			r.Unmatched, r.Skip = true, "not holding others back"
			return r
		}
		r.Pick = pick + 1
		left = p.spec.Pick[pick].DueAt.Sub(p.now())
		delay = pickQueueDelay(left)
	}
	if want, ok := p.ids[m.Position]; ok && want != m.MessageID {
		r.Skip = fmt.Sprintf("expected message %q at position %d, found %q: the queue changed since it was browsed", want, m.Position, m.MessageID)
		return r
	}
	set := retry.Headers{HeaderMovedFrom: p.spec.From}
	var drop []string
	if p.spec.ResetRetries {
		reset := retry.ResetCount(m.Headers, p.router.Conventions().ReadMessage(m.Headers, nil, p.deaths))
		for k, v := range reset {
			if old, ok := m.Headers[k]; !ok || !sameHeader(old, v) {
				set[k] = v
			}
		}
		for k := range m.Headers {
			if _, ok := reset[k]; !ok {
				drop = append(drop, k)
			}
		}
		sort.Strings(drop)
	}
	moves, kind := int64(0), "int32"
	if v, ok := m.Headers[HeaderMoves]; ok {
		if n, k, err := amqpfield.Count(v); err == nil {
			moves, kind = n, k
		}
	}
	if p.spec.MaxMoves > 0 && moves >= int64(p.spec.MaxMoves) && !p.spec.Force {
		r.Skip = fmt.Sprintf("ladder moved it %d times already (--max-moves %d): a loop? left in %s; --force moves it anyway", moves, p.spec.MaxMoves, p.left())
		return r
	}
	set[HeaderMoves] = amqpfield.EncodeCount(kind, moves+1)
	if delay > 0 {
		// The broker routes by CC and BCC on every publish: into the wait
		// and, for a tier that keeps keys, out of it again. A delayed
		// message goes by its routing key alone.
		if cc, ok := m.Headers[topology.HeaderCC]; ok {
			set[HeaderOriginalCC] = cc
			drop = addDrop(drop, topology.HeaderCC)
		}
		if _, ok := m.Headers[topology.HeaderBCC]; ok {
			drop = addDrop(drop, topology.HeaderBCC)
		}
	}
	switch {
	case p.spec.ResetRetries:
		if _, ok := m.Headers[retry.HeaderCarriedDeaths]; ok {
			drop = append(drop, retry.HeaderCarriedDeaths) // a reset forgets the history
		}
	case p.spec.CarryDeaths:
		// 4.x brokers restart x-death on a re-published message: carry the
		// history on (and out of x-death, so nothing counts twice).
		if carry, ok := retry.CarryDeaths(m.Headers); ok {
			set[retry.HeaderCarriedDeaths] = carry
			if _, ok := m.Headers[hdrXDeath]; ok {
				drop = append(drop, hdrXDeath)
			}
		}
	}
	r.SetHeaders, r.DropHeaders = set, drop
	if _, err := topology.PublishKeys(routingHeaders(m.Headers, drop)); err != nil {
		r.Skip = err.Error() + ": left in " + p.left()
		return r
	}
	ex, key, err := p.destination(m, &r)
	if err != nil {
		r.Skip = err.Error()
		return r
	}
	r.TargetExchange, r.TargetRoutingKey = ex, key
	c := p.route(ex, key, func() retry.Headers { return r.Apply(m.Headers) }, delay)
	if c.err != nil {
		r.Skip = c.err.Error() + ": left in " + p.left()
		return r
	}
	rt := c.rt
	for k, v := range rt.SetHeaders {
		set[k] = v
	}
	r.Via, r.Exchange, r.RoutingKey, r.Mandatory, r.Queue = rt.Via, rt.Exchange, rt.RoutingKey, rt.Mandatory, rt.Queue
	r.WaitQueueArgs, r.Reaches, r.CrashRisk = rt.QueueArgs, c.reaches, c.crashRisk
	r.Note = joinNotes(r.Note, c.note)
	if rt.Via == topology.ViaDelayedExchange {
		set[hdrXDelay] = rt.XDelay
	}
	r.Expiration = m.Expiration
	if rt.Via != topology.ViaDirect && m.Expiration != "" {
		// A per-message TTL would cut the wait short (a queue expires a
		// message at the smaller of its own and the message's TTL).
		set[HeaderOriginalExpiration] = m.Expiration
		r.Expiration = ""
	}
	if pick >= 0 && rt.Via == topology.ViaDelayQueue {
		// Exact and loss-free: the message's own expiration is what
		// remains of its delay as it is published (the time spent
		// confirming adds no lateness), in the wait queue of that delay
		// rounded up to the second (pickQueueDelay). A queue expires a
		// message at the smaller of the two TTLs, and dead-letters it even
		// when it is already due ("0": at once).
		ms := max(0, int64((left+time.Millisecond-1)/time.Millisecond))
		r.Expiration = strconv.FormatInt(min(ms, delay.Milliseconds()), 10)
	}
	return r
}

// pickQueueDelay is the wait queue of a pick with left to wait: one queue
// per second of delay. Only a queue's head expires, but all it holds was
// published with a TTL within its last second (a plain delayed move's with
// the whole of it), so no message waits behind another for as much as a
// second more. An overdue pick takes the 1 s queue, expiring at once.
func pickQueueDelay(left time.Duration) time.Duration {
	if r := left % time.Second; r > 0 {
		left += time.Second - r
	}
	return max(time.Second, left)
}

// now is the time a message is planned at.
func (p *Planner) now() time.Time {
	if p.spec.Clock != nil {
		return p.spec.Clock()
	}
	return p.spec.Now
}

// takePick finds the pick m is, takes it and returns its index, or -1.
// Picks are met in queue order; one passed by (it left the queue, or was
// changed) is not looked for again.
func (p *Planner) takePick(m Message) int {
	for i := p.nextPick; i < len(p.spec.Pick); i++ {
		if !p.picked[i] && p.spec.Pick[i].Is(m) {
			p.picked[i], p.nextPick = true, i+1
			return i
		}
	}
	return -1
}

// PicksGoneNote says that n picks were not found.
func PicksGoneNote(n int) string {
	return fmt.Sprintf("%s of the plan not found as the peek saw %s (gone from the queue, or changed): not moved",
		topology.Plural(n, "message", "messages"), words.Plural(int64(n), "it", "them"))
}

// PicksMissed counts the picks no message was taken as (so far).
func (p *Planner) PicksMissed() int {
	n := 0
	for _, ok := range p.picked {
		if !ok {
			n++
		}
	}
	return n
}

// left is where a message the plan does not move stays.
func (p *Planner) left() string {
	if p.spec.Replay {
		return "the dump file (not published)"
	}
	return p.spec.From
}

// destination is where the message goes before any delay. Origin may add
// header edits and a note to r.
func (p *Planner) destination(m Message, r *Route) (exchange, key string, err error) {
	t := p.spec.To
	switch t.Kind {
	case TargetQueue:
		return "", t.Name, nil
	case TargetExchange:
		if t.HasKey {
			return t.Name, t.RoutingKey, nil
		}
		return t.Name, m.RoutingKey, nil
	case TargetOriginal:
		return m.Exchange, m.RoutingKey, nil
	}
	return p.origin(m, r)
}

// route plans exchange/key after the spec's delay, cached under everything
// it depends on: exchange, key and the headers some binding matches on
// (kept and compared in full, so no two values can share a route).
// headers are the message's as published, worked out only when a binding
// matches on headers or the route is not cached yet.
func (p *Planner) route(exchange, key string, headers func() retry.Headers, delay time.Duration) cachedRoute {
	k := routeKey{exchange: exchange, key: key, delay: delay}
	var h retry.Headers
	var routing map[string]any
	if len(p.routedBy) > 0 {
		h = headers()
		for _, n := range p.routedBy {
			if v, ok := h[n]; ok {
				if routing == nil {
					routing = map[string]any{}
				}
				routing[n] = v
			}
		}
	}
	for _, c := range p.cache[k] {
		if len(c.routing) == 0 && len(routing) == 0 || reflect.DeepEqual(c.routing, routing) {
			return c
		}
	}
	if h == nil {
		h = headers()
	}
	c := p.routeFresh(exchange, key, h, delay)
	c.routing = routing
	if len(p.cache[k]) < maxRoutesPerTarget {
		p.cache[k] = append(p.cache[k], c)
	}
	return c
}

// maxRoutesPerTarget bounds the cached routes of one exchange and key (one
// per distinct routing-header value); past it, routes are planned afresh.
const maxRoutesPerTarget = 64

// sameHeader compares header values, NaN equal to NaN (a reset must not
// count an unchanged NaN header as an edit).
func sameHeader(a, b any) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.IsNaN(x) && math.IsNaN(y)
	case float32:
		y, ok := b.(float32)
		return ok && x != x && y != y
	}
	return false
}

func (p *Planner) routeFresh(exchange, key string, h retry.Headers, delay time.Duration) cachedRoute {
	res := p.router.Route(exchange, key, h)
	if !res.ExchangeExists {
		return cachedRoute{err: fmt.Errorf("exchange %q does not exist", exchange)}
	}
	if delay > 0 {
		ladders := p.ladders
		if p.spec.Pick != nil {
			// A pick waits in a ladder wait queue of its own delay: a tier
			// is shared with messages of its whole TTL, and a delayed
			// exchange would carry the pick's exact expiration on into the
			// target. (PlanReplay tries both only for known ladders.)
			ladders = nil
		}
		rt, err := topology.PlanReplay(p.router, ladders, exchange, key, h, delay)
		if err == nil && len(rt.SetHeaders) > 0 {
			// Where it lands with the headers it will carry.
			h = h.Clone()
			for k, v := range rt.SetHeaders {
				h[k] = v
			}
			res = p.router.Route(exchange, key, h)
		}
		return cachedRoute{rt: rt, reaches: res.Queues, note: rt.Note, crashRisk: p.crashRisk(rt), err: err}
	}
	c := cachedRoute{rt: topology.ReplayRoute{Via: topology.ViaDirect, Exchange: exchange, RoutingKey: key, Mandatory: true}, reaches: res.Queues}
	switch {
	case res.Approximate:
		c.note = "ladder cannot tell which queues " + words.Target(exchange, key) + " reaches; a message the broker returns stays in the source"
	case len(res.Queues) == 0:
		c.err = fmt.Errorf("%s routes to no queue", words.Target(exchange, key))
	default:
		// A worker that republishes retries makes its retry exchange the
		// origin x-death records: moved there, the message waits in a tier.
		for _, q := range res.Queues {
			for _, l := range p.ladders {
				for _, t := range l.Tiers {
					if t.Queue == q {
						c.note = fmt.Sprintf("%s routes it into wait tier %s: it reaches %s only after %s", words.Target(exchange, key), t.Queue, l.Main, retry.FormatDelay(t.TTL))
						return c
					}
				}
			}
		}
	}
	return c
}

// sameRoute: the same message takes the same way to the same queues, with
// the same edits.
func sameRoute(a, b Route) bool {
	return a.Moves() == b.Moves() && a.MessageID == b.MessageID && a.BodyDigest == b.BodyDigest && a.Via == b.Via &&
		a.Exchange == b.Exchange && a.RoutingKey == b.RoutingKey && a.Queue == b.Queue &&
		a.TargetExchange == b.TargetExchange && a.TargetRoutingKey == b.TargetRoutingKey &&
		a.Mandatory == b.Mandatory && a.Expiration == b.Expiration &&
		slices.Equal(a.Reaches, b.Reaches) && slices.Equal(a.DropHeaders, b.DropHeaders) &&
		headersEqual(a.SetHeaders, b.SetHeaders)
}

func headersEqual(a, b retry.Headers) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !sameHeader(v, w) {
			return false
		}
	}
	return true
}

// messageName is a message's id, else its body digest.
func messageName(r Route) string {
	if r.MessageID != "" {
		return strconv.Quote(r.MessageID)
	}
	return "body sha256 " + r.BodyDigest
}

// routeText is a route in a few words, for notes.
func routeText(r Route) string {
	if !r.Moves() {
		return "not moved"
	}
	s := "via " + string(r.Via)
	if r.Queue != "" {
		s += " " + r.Queue
	} else if r.Via == topology.ViaDelayedExchange {
		s += " " + r.Exchange
	}
	return s + " to " + words.Target(r.TargetExchange, r.TargetRoutingKey)
}

// RouteCount is how many messages take one way: a via and the tier, wait
// queue or delayed exchange it passes through.
type RouteCount struct {
	Via topology.Via `json:"via"`
	// Through is the tier or wait queue (or delayed exchange) passed.
	Through string `json:"through,omitempty"`
	Count   int    `json:"count"`
}

// CountRoutes groups the moving routes by way, in order of first use.
func CountRoutes(routes []Route) []RouteCount {
	var out []RouteCount
	for _, r := range routes {
		if !r.Moves() {
			continue
		}
		out = AddRoute(out, r)
	}
	return out
}

// AddRoute counts one more message on r's way.
func AddRoute(counts []RouteCount, r Route) []RouteCount {
	through := r.Queue
	if r.Via == topology.ViaDelayedExchange {
		through = r.Exchange
	}
	for i := range counts {
		if counts[i].Via == r.Via && counts[i].Through == through {
			counts[i].Count++
			return counts
		}
	}
	return append(counts, RouteCount{Via: r.Via, Through: through, Count: 1})
}

// ForBroker sets what the broker's version decides about a move.
func (s *Spec) ForBroker(version string) {
	s.CarryDeaths = topology.CarriesDeaths(version)
	s.NoDelayedExchange = topology.DelayedExchangesGone(version)
	s.QuorumDelayQueues = topology.AtLeastOnceDeadLetters(version)
}

// hdrXDeath is the broker's own death record header.
const hdrXDeath = "x-death"

// IDOf names a message in reports and the audit log: its id, or
// sha256:<digest> of its body for one without.
func IDOf(id, digest string) string {
	if id != "" {
		return id
	}
	return "sha256:" + digest
}
