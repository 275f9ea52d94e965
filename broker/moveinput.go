package broker

import (
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// MoveInput is what the move planner reads of one message, in plain
// fields every source has: a delivery or a peeked message on the live
// broker, a simulated message, a line of a dump. Each source fills it from
// its own type; Message turns it into the planner's input by one rule, so
// a live move, the simulation and a replay plan from the same values.
type MoveInput struct {
	Position             int
	MessageID            string
	Exchange, RoutingKey string
	Headers              retry.Headers
	Expiration           string
	// Timestamp is the message's timestamp property (nil or zero: none).
	Timestamp *time.Time
	// Body is what was read of the body: the whole of it, or a preview
	// when BodySize says the whole is longer (a peek).
	Body     []byte
	BodySize int
	// BodyDigest is the whole body's digest when the source worked it out
	// already (a peek, which may keep only a preview of the body).
	BodyDigest string
}

// Message is the planner's input. The timestamp is cut to whole seconds
// in UTC, as AMQP carries it (a dump keeps seconds; the simulation could
// hold finer ones). The body's digest, when not known, is worked out from
// the whole body only when it is read: digest (a plan checked against a
// preview or picking by identity, and every plan a preview shows), or a
// message without an id, which the report names by it. Hashing every body
// of a large move costs a tenth of its CPU; Book works out the digest of
// a message that stays. A preview's body is never taken for the whole.
func (in MoveInput) Message(digest bool) moveplan.Message {
	m := moveplan.Message{Position: in.Position, MessageID: in.MessageID, BodyDigest: in.BodyDigest,
		Exchange: in.Exchange, RoutingKey: in.RoutingKey, Headers: in.Headers, Expiration: in.Expiration,
		Body: in.Body, BodySize: in.BodySize}
	if t := in.Timestamp; t != nil && !t.IsZero() {
		m.Timestamp = time.Unix(t.Unix(), 0).UTC()
	}
	if m.BodySize == 0 {
		m.BodySize = len(in.Body)
	}
	if m.BodyDigest == "" && (digest || in.MessageID == "") && len(in.Body) == m.BodySize {
		m.BodyDigest = moveplan.BodyDigest(in.Body)
	}
	return m
}

// MoveInput is what the planner reads of a peeked message (a dry run's
// browse): its digest is the peek's, of the whole body.
func (m *Message) MoveInput() MoveInput {
	return MoveInput{Position: m.Position, MessageID: m.Properties.MessageID, Exchange: m.Exchange, RoutingKey: m.RoutingKey,
		Headers: m.Headers, Expiration: m.Properties.Expiration, Timestamp: m.Properties.Timestamp,
		Body: m.Body, BodySize: m.BodySize, BodyDigest: m.BodyDigest}
}
