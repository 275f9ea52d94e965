package usecase

import (
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
)

// RecordInput is what the planner reads of a dump line (line: its number,
// the position a replay plans it at).
func RecordInput(r *dumpfile.Record, line int) broker.MoveInput {
	p := RecordProperties(r)
	return broker.MoveInput{Position: line, MessageID: p.MessageID, Exchange: r.Exchange, RoutingKey: r.RoutingKey,
		Headers: r.Headers, Expiration: p.Expiration, Timestamp: p.Timestamp, Body: r.Body}
}

// RecordProperties are a dump record's properties as a Message has them.
func RecordProperties(r *dumpfile.Record) broker.Properties {
	p := r.Properties
	out := broker.Properties{ContentType: p.ContentType, ContentEncoding: p.ContentEncoding, DeliveryMode: p.DeliveryMode,
		Priority: p.Priority, CorrelationID: p.CorrelationID, ReplyTo: p.ReplyTo, Expiration: p.Expiration,
		MessageID: p.MessageID, Type: p.Type, UserID: p.UserID, AppID: p.AppID}
	if p.Timestamp != nil {
		t := time.Unix(*p.Timestamp, 0).UTC()
		out.Timestamp = &t
	}
	return out
}
