package sim

import (
	"context"
	"encoding/hex"
	"time"
	"unicode/utf8"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// Peek defaults, as the live client's.
const (
	defaultPeekLimit   = 100
	defaultBodyPreview = 4096
)

// peekSideEffects is what browsing a classic queue costs on the broker (a
// consume-and-close peek); the simulation sets the redelivered flags too.
var peekSideEffects = []string{
	"messages were delivered to ladder and returned: their redelivered flag is now set",
	"while ladder held them, these messages were invisible to other consumers",
}

// Peek browses the first ready messages of a queue without removing them.
// Like a real consume-and-close peek it sets their redelivered flag, so the
// next peek (and the worker) sees them redelivered. Peeks are not counted in
// the queue's rates.
func (s *Sim) Peek(ctx context.Context, name string, opt broker.PeekOptions) (*broker.PeekResult, error) {
	defer s.mu.Unlock() // enter locks, even when it fails
	if err := s.enter(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q := s.byName[name]
	if q == nil {
		return nil, s.errorf("peek %s: NOT_FOUND - no queue %q in vhost %q", name, name, VhostName)
	}
	if opt.Limit <= 0 {
		opt.Limit = defaultPeekLimit
	}
	if opt.BodyPreview <= 0 {
		opt.BodyPreview = defaultBodyPreview
	}
	info := q.info()
	res := &broker.PeekResult{
		Queue: name, Type: info.Type, Total: info.Messages, Ready: info.Ready,
		SideEffects: append([]string(nil), peekSideEffects...), Messages: []broker.Message{},
	}
	n := min(opt.Limit, len(q.ready))
	if n == 0 {
		res.SideEffects = []string{} // nothing delivered, nothing changed
		return res, nil
	}
	deathQueues := retry.DeathQueues(s.ladderOf(name))
	mains := retry.MainQueues(s.topology().ladders)
	for i, m := range q.ready[:n] {
		res.Messages = append(res.Messages, decode(m, i, opt.BodyPreview, deathQueues, mains))
		m.redelivered = true
	}
	annotateHoL(res, q, s.now)
	return res, nil
}

// decode turns a queued message into what a peek reports.
func decode(m *message, pos, preview int, deathQueues, mains map[string]bool) broker.Message {
	h := cloneHeaders(m.headers)
	out := broker.Message{
		Position:    pos,
		Exchange:    m.exchange,
		RoutingKey:  m.routingKey,
		Redelivered: m.redelivered,
		Properties:  m.props,
		Headers:     h,
		Retry:       retry.ReadState(h, deathQueues),
		BodySize:    len(m.body),
	}
	if m.props.Timestamp != nil {
		t := *m.props.Timestamp
		out.Properties.Timestamp = &t
	}
	xd := retry.DecodeXDeath(h)
	out.Deaths = xd.Deaths
	if out.Deaths == nil {
		out.Deaths = []retry.Death{}
	}
	out.DeathErrors = xd.Errors
	if o, ok := retry.OriginIn(xd, mains); ok {
		out.Origin = &o
	}
	k := len(m.body)
	if k > preview {
		k, out.BodyTruncated = preview, true
	}
	out.Body = append([]byte(nil), m.body[:k]...)
	out.BodyPreview = previewText(out.Body)
	return out
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

// annotateHoL marks head-of-line blocking when the queue has a TTL or some
// peeked message has one. A message's TTL is its expiration property, else
// the original-expiration of its latest death when that death was not the
// expiry itself: dead-lettering stripped a TTL that had not run out, and the
// due time shows when the message was meant to leave (see retry.HoLInput).
func annotateHoL(res *broker.PeekResult, q *queue, now time.Time) {
	in := make([]retry.HoLInput, len(res.Messages))
	some := q.set.HasMessageTTL
	for i, m := range res.Messages {
		in[i].Expiration, in[i].HasExpiration = messageTTL(m)
		some = some || in[i].HasExpiration
		if m.Properties.Timestamp != nil {
			in[i].Timestamp = *m.Properties.Timestamp
		}
	}
	if !some {
		return
	}
	var queueTTL time.Duration
	if q.set.HasMessageTTL {
		queueTTL = q.set.MessageTTL
	}
	hol := retry.HoL(in, queueTTL, now)
	for i := range res.Messages {
		mk := hol.Marks[i]
		res.Messages[i].HoL = &mk
	}
	res.HoLBasis = hol.Basis
}

func messageTTL(m broker.Message) (time.Duration, bool) {
	if d, ok, err := parseExpiration(m.Properties.Expiration); err == nil && ok {
		return d, true
	}
	if len(m.Deaths) > 0 && m.Deaths[0].Reason != retry.ReasonExpired && m.Deaths[0].HasOriginalExpiration {
		return m.Deaths[0].OriginalExpiration, true
	}
	return 0, false
}
