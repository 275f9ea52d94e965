package broker

import (
	"encoding/hex"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Decoder decodes the messages of one queue with what the vhost tells
// about them: the x-death entries that count as retries (DeathQueues), the
// ladders' main queues, and where --to origin would send a message no
// record names an origin for (moveplan.FailedIn: a framework's naming,
// MassTransit's Q_skipped), so a peek shows the origin a move uses.
type Decoder struct {
	DeathQueues, Mains map[string]bool
	queue              string
	router             *topology.Router
	ladders            []retry.Ladder
}

// NewDecoder is the Decoder of queue in v, whose ladders are ladders.
func NewDecoder(v *topology.Vhost, ladders []retry.Ladder, queue string) *Decoder {
	return &Decoder{DeathQueues: retry.DeathQueuesOf(ladders, queue), Mains: retry.MainQueues(ladders),
		queue: queue, router: topology.NewRouter(v), ladders: ladders}
}

// Decode is DecodeMessage with d's vhost; a nil d decodes as DecodeMessage
// with nothing known.
func (d *Decoder) Decode(m *Message, body []byte, preview int) {
	if d == nil {
		DecodeMessage(m, body, preview, nil, nil)
		return
	}
	DecodeMessage(m, body, preview, d.DeathQueues, d.Mains)
	// Only a framework's message can have an origin by its naming: the
	// rest cost nothing more (a peek may read 100,000).
	if d.router != nil && m.Retry.Framework != "" {
		if f, ok := moveplan.FailedIn(d.router, d.ladders, d.queue, m.Headers); ok {
			m.FailedIn = f.Queue
			if m.Origin == nil {
				m.Origin = &retry.Origin{RoutingKey: f.Queue, By: f.By}
			}
		}
	}
}

// DecodeMessage fills what the retry engine reads from a message whose
// Headers (and properties) are set: retry state, x-death entries, origin,
// the best time known (Seen), and a bounded copy of the body. The live broker and the demo simulation
// decode through this one function (by Decoder.Decode).
func DecodeMessage(m *Message, body []byte, preview int, deathQueues, mains map[string]bool) {
	if m.Headers == nil {
		m.Headers = retry.Headers{}
	}
	m.Retry = retry.ReadState(m.Headers, deathQueues)
	xd := retry.DecodeXDeath(m.Headers)
	m.Deaths = xd.Deaths
	if m.Deaths == nil {
		m.Deaths = []retry.Death{}
	}
	m.DeathErrors = xd.Errors
	if o, ok := retry.OriginOf(xd, m.Retry, mains); ok {
		m.Origin = &o
	}
	m.Seen, m.SeenFrom = SeenTime(m.Properties.Timestamp, m.Deaths, m.Retry)
	m.BodySize = len(body)
	m.BodyDigest = moveplan.BodyDigest(body)
	n := len(body)
	if n > preview {
		n, m.BodyTruncated = preview, true
	}
	m.Body = append([]byte(nil), body[:n]...)
	m.BodyPreview = previewText(m.Body)
}

// previewText is the body as text when it is UTF-8, else a hex prefix.
func previewText(b []byte) string {
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
func AnnotateHoL(res *PeekResult, set topology.QueueSettings, now time.Time) {
	res.PeekedAt = now
	in := make([]topology.HoLInput, len(res.Messages))
	some := set.HasMessageTTL
	for i, m := range res.Messages {
		in[i].Expiration, in[i].HasExpiration, in[i].Stripped = messageTTL(m, set.HasDeadLetterExchange)
		some = some || in[i].HasExpiration
		in[i].Timestamp = enqueuedAt(m)
	}
	if !some || len(in) == 0 {
		res.noteLook(topology.LookOf(now, res.Ready, in, nil))
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
	res.noteLook(topology.LookOf(now, res.Ready, in, hr.Marks))
}

// noteLook keeps what the peek saw of its queue's expirations with the
// evidence it gathered (topology.Seen.Look): what the analysis weighs for
// head-of-line blocking and messages that never expire.
func (r *PeekResult) noteLook(l *topology.Look) {
	if l == nil {
		return
	}
	if r.seen == nil {
		r.seen = topology.Evidence{}
	}
	s := r.seen[r.Queue]
	s.Look = l
	r.seen[r.Queue] = s
}

// messageTTL is a message's per-message TTL: its expiration property, else,
// in a queue that forwards its dead letters (a wait queue, not a DLQ), the
// original-expiration of its latest death when that death was not the
// expiry itself — dead-lettering stripped a TTL that had not run out, and
// the due time then shows when the message was meant to leave (it never
// will without a queue TTL: the stuck finding says so).
func messageTTL(m Message, forwards bool) (ttl time.Duration, ok, stripped bool) {
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
func enqueuedAt(m Message) time.Time {
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
