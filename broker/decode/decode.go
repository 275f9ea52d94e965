package decode

import (
	"encoding/hex"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Decoder decodes the messages of one queue with what the vhost tells
// about them: the x-death entries that count as retries (DeathQueues), the
// ladders' main queues, and where --to origin would send a message no
// record names an origin for (moveplan.FailedIn: a framework's naming,
// MassTransit's Q_skipped), so a peek shows the origin a move uses.
//
// A Decoder made by NewDecoder learns as it reads: a message that shows
// something of the vhost's queues their Seen does not hold yet (messages
// expired or were rejected in a queue, failed in one) is evidence the
// next topology read would weigh (Evidence). The Decoder weighs it at
// once: it derives the ladders again from the vhost and that evidence and
// decodes the message again, so the first read of a queue gives the
// count a read after it gives, and a streamed read (PeekOptions.Each)
// decodes right from its first message. That costs a discovery only when
// a message tells something new, at most maxRelearn times a read. Not
// safe for concurrent use: a read decodes in one goroutine.
type Decoder struct {
	DeathQueues, Mains map[string]bool
	queue              string
	router             *topology.Router
	ladders            []retry.Ladder
	// v is the vhost the ladders were derived from (nil: a Decoder that
	// does not learn); own says its Queues are the Decoder's own copy,
	// index finds a queue in it.
	v       *topology.Vhost
	own     bool
	index   map[string]int
	relearn int
	// bare are the death queues the topology alone gives (no evidence),
	// derived once when a count read from x-death needs its basis.
	bare    map[string]bool
	bareSet bool
	// settings caches the queues' dead-letter settings (Message.Reached).
	settings map[string]topology.QueueSettings
	// named caches namedAfter.
	named    string
	namedSet bool
}

// maxRelearn bounds how often one read derives the ladders again: the
// evidence a vhost can hold is bounded (two marks and at most 64
// failed-in queues a queue), this bounds the work a hostile queue can ask.
const maxRelearn = 64

// NewDecoder is the Decoder of queue in v, whose ladders are ladders
// (topology.Discover of v: its queues' Seen holds the evidence the client
// knew). v is not modified.
func NewDecoder(v *topology.Vhost, ladders []retry.Ladder, queue string) *Decoder {
	d := &Decoder{queue: queue, router: topology.NewRouter(v), v: v}
	d.derived(ladders)
	return d
}

// derived takes ladders as the Decoder's.
func (d *Decoder) derived(ladders []retry.Ladder) {
	d.ladders = ladders
	d.DeathQueues, d.Mains = retry.DeathQueuesOf(ladders, d.queue), retry.MainQueues(ladders)
}

// Decode is DecodeMessage with d's vhost; a nil d decodes as DecodeMessage
// with nothing known.
func (d *Decoder) Decode(m *broker.Message, body []byte, preview int) {
	if d == nil {
		DecodeMessage(m, body, preview, nil, nil)
		return
	}
	d.decode(m, body, preview)
	// What m shows may change the ladders (a queue it failed in, one it
	// expired in): decode it again with them. A second round covers what
	// the new ladders let m show (its failed-in queue by their naming).
	for range 2 {
		if !d.learn(m) {
			break
		}
		d.decode(m, body, preview)
	}
	d.countFrom(m)
}

func (d *Decoder) decode(m *broker.Message, body []byte, preview int) {
	m.FailedIn = ""
	var t retry.Table
	if d.v != nil {
		t = d.v.Conventions
	}
	decodeMessage(t, m, body, preview, d.DeathQueues, d.Mains)
	if d.v != nil {
		m.Reached, m.ReachedFrom = m.ReachedTime(d.settingsOf)
	}
	// Only a framework's message can have an origin by its naming, and one
	// that records nothing in a queue named after its work queue (Q.failure)
	// an origin inferred from that name: the rest cost nothing more (a peek
	// may read 100,000).
	if d.router != nil && (m.Retry.Framework != "" || m.Origin == nil && len(m.Deaths) == 0 && d.namedAfter() != "") {
		// Several candidate queues (an exchange routing to more than one)
		// are no origin: --to origin refuses those.
		if f, ok := moveplan.FailedIn(d.router, d.ladders, d.queue, m.Headers); ok && f.Queue != "" {
			if !f.Inferred {
				// A name is no evidence: what discovery learns from
				// messages (topology.Evidence) is what they record.
				m.FailedIn = f.Queue
			}
			if m.Origin == nil {
				m.Origin = &retry.Origin{RoutingKey: f.Queue, By: f.By}
			}
		}
	}
}

// namedAfter is the queue the Decoder's queue is named after as its dead
// end (moveplan.InferredWorkQueue), asked once.
func (d *Decoder) namedAfter() string {
	if !d.namedSet {
		d.named, d.namedSet = moveplan.InferredWorkQueue(d.router, d.queue), true
	}
	return d.named
}

// learn folds what m shows of the vhost's queues into the Decoder's copy
// of it and derives the ladders again, when that is new (and the bound
// allows); it reports whether it did.
func (d *Decoder) learn(m *broker.Message) bool {
	if d.v == nil || d.relearn >= maxRelearn {
		return false
	}
	d.indexed()
	e := topology.Evidence{}
	e.Observe(d.queue, m.Properties.Expiration != "", m.Deaths, m.FailedIn)
	news := false
	for q, s := range e {
		if i, ok := d.index[q]; ok {
			seen := d.v.Queues[i].Seen
			merged := topology.Evidence{q: seen}
			merged.Merge(topology.Evidence{q: s})
			if !merged[q].Equal(seen) {
				news = true
				break
			}
		}
	}
	if !news {
		return false
	}
	if !d.own {
		// The caller's vhost (a cache, a snapshot) stays as it was.
		cp := *d.v
		cp.Queues = slices.Clone(d.v.Queues)
		d.v, d.own = &cp, true
	}
	d.v.Apply(e)
	d.relearn++
	d.derived(topology.Discover(d.v))
	return true
}

// indexed builds the index of the vhost's queues by name, once.
func (d *Decoder) indexed() {
	if d.index != nil {
		return
	}
	d.index = make(map[string]int, len(d.v.Queues))
	for i := range d.v.Queues {
		if _, dup := d.index[d.v.Queues[i].Name]; !dup {
			d.index[d.v.Queues[i].Name] = i
		}
	}
}

// settingsOf is queue's effective settings (false: not in the vhost).
func (d *Decoder) settingsOf(queue string) (topology.QueueSettings, bool) {
	if s, ok := d.settings[queue]; ok {
		return s, true
	}
	d.indexed()
	i, ok := d.index[queue]
	if !ok {
		return topology.QueueSettings{}, false
	}
	if d.settings == nil {
		d.settings = map[string]topology.QueueSettings{}
	}
	s := topology.EffectiveSettings(&d.v.Queues[i])
	d.settings[queue] = s
	return s, true
}

// countFrom sets what made the queues a count read from x-death sums the
// ones that count (RetryState.CountFrom): the topology alone, what
// messages showed, or the queue itself being in no ladder.
func (d *Decoder) countFrom(m *broker.Message) {
	if m.Retry.Source != retry.SourceXDeath || d.v == nil {
		return
	}
	if !slices.ContainsFunc(d.ladders, func(l retry.Ladder) bool { return l.Has(d.queue) }) {
		m.Retry.CountFrom = retry.CountFromQueue
		return
	}
	if !d.bareSet {
		bare := *d.v
		bare.Queues = slices.Clone(d.v.Queues)
		for i := range bare.Queues {
			bare.Queues[i].Seen = topology.Seen{}
		}
		d.bare, d.bareSet = retry.DeathQueuesOf(topology.Discover(&bare), d.queue), true
	}
	var sum int64
	matched := false
	for _, x := range m.Deaths {
		if d.bare[x.Queue] {
			sum, matched = sum+x.Count, true
		}
	}
	if matched && sum == m.Retry.Count {
		m.Retry.CountFrom = retry.CountFromTopology
	} else {
		m.Retry.CountFrom = retry.CountFromMessages
	}
}

// DecodeMessage fills what the retry engine reads from a message whose
// Headers (and properties) are set: retry state, x-death entries, origin,
// the best time known (Seen), and a bounded copy of the body. The live broker and the demo simulation
// decode through this one function (by Decoder.Decode).
func DecodeMessage(m *broker.Message, body []byte, preview int, deathQueues, mains map[string]bool) {
	decodeMessage(retry.Table{}, m, body, preview, deathQueues, mains)
}

// decodeMessage is DecodeMessage reading by the conventions of t.
func decodeMessage(t retry.Table, m *broker.Message, body []byte, preview int, deathQueues, mains map[string]bool) {
	if m.Headers == nil {
		m.Headers = retry.Headers{}
	}
	m.Retry = t.ReadMessage(m.Headers, body, deathQueues)
	xd := retry.DecodeXDeath(m.Headers)
	m.Deaths = xd.Deaths
	if m.Deaths == nil {
		m.Deaths = []retry.Death{}
	}
	m.DeathErrors = xd.Errors
	if o, ok := retry.OriginOf(xd, m.Retry, mains); ok {
		m.Origin = &o
	}
	m.SeenFrom = "" // read afresh
	m.Seen, m.SeenFrom = m.BestTime()
	m.Reached, m.ReachedFrom = m.ReachedTime(nil)
	m.BodySize = len(body)
	m.BodyDigest = moveplan.BodyDigest(body)
	n := len(body)
	if n > preview {
		n, m.BodyTruncated = preview, true
	}
	m.Body = append([]byte(nil), body[:n]...)
	m.BodyPreview = PreviewText(m.Body)
}

// PreviewText is a body as text when it is UTF-8, else a hex prefix.
func PreviewText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	const maxHex = 256
	if len(b) > maxHex {
		b = b[:maxHex]
	}
	return "hex:" + hex.EncodeToString(b)
}

// AnnotateHoL marks head-of-line blocking when the queue's messages can
// expire at all (a queue TTL, or a per-message TTL on some message).
func AnnotateHoL(res *broker.PeekResult, set topology.QueueSettings, now time.Time) {
	res.PeekedAt = now
	in := make([]topology.HoLInput, len(res.Messages))
	some := set.HasMessageTTL
	for i, m := range res.Messages {
		in[i].Expiration, in[i].HasExpiration, in[i].Stripped = messageTTL(m, set.HasDeadLetterExchange)
		some = some || in[i].HasExpiration
		in[i].Timestamp = enqueuedAt(m)
	}
	if !some || len(in) == 0 {
		res.NoteLook(topology.LookOf(now, res.Ready, in, nil))
		return
	}
	var ttl time.Duration
	if set.HasMessageTTL {
		ttl = set.MessageTTL
	}
	hr := topology.HoL(in, ttl, now)
	for i := range res.Messages {
		mark := hr.Marks[i]
		res.Messages[i].HoL = &mark
	}
	res.HoLBasis = hr.Basis
	res.NoteLook(topology.LookOf(now, res.Ready, in, hr.Marks))
}

// messageTTL is a message's per-message TTL: its expiration property, else,
// in a queue that forwards its dead letters (a wait queue, not a DLQ), the
// original-expiration of its latest death when that death was not the
// expiry itself — dead-lettering stripped a TTL that had not run out, and
// the due time then shows when the message was meant to leave (it never
// will without a queue TTL: the stuck finding says so).
func messageTTL(m broker.Message, forwards bool) (ttl time.Duration, ok, stripped bool) {
	if ms, err := strconv.ParseInt(m.Properties.Expiration, 10, 64); err == nil && ms >= 0 {
		return time.Duration(ms) * time.Millisecond, true, false
	}
	if forwards && len(m.Deaths) > 0 && m.Deaths[0].Reason != retry.ReasonExpired && m.Deaths[0].HasOriginalExpiration {
		return m.Deaths[0].OriginalExpiration, true, true
	}
	return 0, false, false
}

// enqueuedAt estimates when a message entered its current queue: its
// publish timestamp, or later a dead-lettering it went through (a retried
// message was re-published after it). An x-death time is the first death
// for its {queue, reason}, so only entries with count 1 are exact.
func enqueuedAt(m broker.Message) time.Time {
	var t time.Time
	if m.Properties.Timestamp != nil {
		t = *m.Properties.Timestamp
	}
	for _, d := range m.Deaths {
		if d.Count == 1 && d.Time.After(t) {
			t = d.Time
		}
	}
	return t
}
