package usecase

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/wire"
)

// A replay checks every line before it publishes anything: a message the
// broker refuses closes the channel it came on (a body over the maximum
// message size) or the whole connection (properties and headers over one
// frame), and with it every valid message published after it.

// limitsOf asks c for its limits: part of the Publisher role, so no
// wrapper (the gate) can hide them.
func limitsOf(ctx context.Context, c broker.Publisher) (broker.PublishLimits, error) {
	return c.PublishLimits(ctx)
}

// headerAllowance is room left in the properties' frame for the headers a
// replay adds to a line (moved-from, moves, move id, an original
// expiration, reset counts): they are decided after the check.
const headerAllowance = 1024

// isolateAbove: a body larger than this is published in a batch of its own,
// so a broker configured below its version's default refuses that line
// alone (and names its limit), not the lines after it.
const isolateAbove = 1 << 20

// checkLine says why a dump line cannot be published as it is, or "".
func checkLine(r *dumpfile.Record, lim broker.PublishLimits) string {
	p := r.Properties
	for _, f := range []struct{ name, v string }{
		{"exchange", r.Exchange}, {"routing key", r.RoutingKey}, {"content_type", p.ContentType},
		{"content_encoding", p.ContentEncoding}, {"correlation_id", p.CorrelationID}, {"reply_to", p.ReplyTo},
		{"expiration", p.Expiration}, {"message_id", p.MessageID}, {"type", p.Type}, {"user_id", p.UserID}, {"app_id", p.AppID},
	} {
		if len(f.v) > 255 {
			return fmt.Sprintf("%s is %d bytes, more than AMQP's 255", f.name, len(f.v))
		}
	}
	if e := p.Expiration; e != "" && strings.Trim(e, "0123456789") != "" {
		// RabbitMQ closes the channel on it, and every line after it in
		// the batch with it.
		return fmt.Sprintf("expiration %q is not a whole number of milliseconds (RabbitMQ refuses it)", e)
	}
	if err := wire.ValidHeaders(r.Headers); err != nil {
		return fmt.Sprintf("headers AMQP cannot carry: %v", err)
	}
	for k := range r.Headers {
		switch {
		case len(k) > 255:
			return fmt.Sprintf("header name of %d bytes, more than AMQP's 255", len(k))
		case !utf8.ValidString(k):
			// Quoted: its bytes never reach a terminal as they are.
			return fmt.Sprintf("header name %q is not valid UTF-8", k)
		}
	}
	if lim.MaxMessageSize > 0 && len(r.Body) > lim.MaxMessageSize {
		return fmt.Sprintf("body of %d bytes is over the broker's maximum message size (%d bytes, %s)", len(r.Body), lim.MaxMessageSize, lim.Source)
	}
	if lim.FrameMax > 0 {
		// The frame's 8 bytes of framing, the properties, and room for
		// what ladder adds; a carried x-death may be written twice.
		n := 8 + wire.PropertiesSize(RecordProperties(r), r.Headers) + headerAllowance
		if d, ok := r.Headers["x-death"]; ok {
			n += wire.FieldSize(d)
		}
		if n > lim.FrameMax {
			return fmt.Sprintf("properties and headers of about %d bytes do not fit in one frame (the connection's frame_max is %d bytes)", n, lim.FrameMax)
		}
	}
	return ""
}
