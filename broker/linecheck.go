package broker

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/ladder-tui/ladder/retry/topology"
	amqp "github.com/rabbitmq/amqp091-go"
)

// A replay checks every line before it publishes anything: a message the
// broker refuses closes the channel it came on (a body over the maximum
// message size) or the whole connection (properties and headers over one
// frame), and with it every valid message published after it.

// PublishLimits are the sizes a broker takes in one published message.
type PublishLimits struct {
	// MaxMessageSize bounds a body, as the broker counts it (its
	// max_message_size); 0: none known.
	MaxMessageSize int
	// Source says where MaxMessageSize comes from, for the skip reason.
	Source string
	// FrameMax bounds one frame (as negotiated): a message's properties and
	// headers travel in one. 0: none known.
	FrameMax int
}

// publishLimiter is a client that knows its broker's limits.
type publishLimiter interface {
	PublishLimits(ctx context.Context) (PublishLimits, error)
}

// limitsOf asks c for its limits; a client that cannot tell has none.
func limitsOf(ctx context.Context, c Client) (PublishLimits, error) {
	if l, ok := c.(publishLimiter); ok {
		return l.PublishLimits(ctx)
	}
	return PublishLimits{}, nil
}

// Default max_message_size: 128 MiB from 3.8 on, 16 MiB from 4.0.
const (
	defaultMaxMessageSize3 = 128 << 20
	defaultMaxMessageSize4 = 16 << 20
)

// PublishLimits implements publishLimiter. The management API does not
// show max_message_size, so the limit is the version's default until the
// broker refuses a message and names its configured one (then that).
func (l *Live) PublishLimits(ctx context.Context) (PublishLimits, error) {
	var lim PublishLimits
	if n := l.maxMsg.Load(); n > 0 {
		lim.MaxMessageSize, lim.Source = int(n), "the broker's configured max_message_size"
	} else {
		v, err := l.mgmt.BrokerVersion(ctx)
		if err != nil {
			return lim, err
		}
		lim.MaxMessageSize, lim.Source = defaultMaxMessageSize3, "RabbitMQ 3.x's default max_message_size"
		if topology.VersionAtLeast(v, 4, 0) {
			lim.MaxMessageSize, lim.Source = defaultMaxMessageSize4, "RabbitMQ 4.x's default max_message_size"
		}
	}
	conn, err := l.connection(ctx)
	if err != nil {
		return lim, err
	}
	lim.FrameMax = conn.Config.FrameSize
	return lim, nil
}

// sizeRefused reads the broker's refusal of a body over its maximum:
// "message size 17000000 is larger than configured max size 16777216", or
// "… is larger than max size 536870912" when the limit is at its ceiling.
// The one parser of it: amqpRefused classifies by it (ErrTooLarge), a
// publish learns the limit from it.
var sizeRefused = regexp.MustCompile(`message size (\d+) is larger than (?:configured )?max size (\d+)`)

// refusedSize is the maximum a 406 refusal of a message's size names, or
// 0 when e is no such refusal.
func refusedSize(e *amqp.Error) int64 {
	if e == nil || e.Code != amqp.PreconditionFailed {
		return 0
	}
	m := sizeRefused.FindStringSubmatch(e.Reason)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[2], 10, 64)
	return n
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
func checkLine(r *DumpRecord, lim PublishLimits) string {
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
	if err := ValidHeaders(r.Headers); err != nil {
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
		pub := publishingOf(Outgoing{Properties: r.MessageProperties(), Headers: r.Headers})
		// The frame's 8 bytes of framing, the properties, and room for
		// what ladder adds; a carried x-death may be written twice.
		n := 8 + propertiesSize(pub) + headerAllowance
		if d, ok := r.Headers["x-death"]; ok {
			n += fieldSize(toValue(d))
		}
		if n > lim.FrameMax {
			return fmt.Sprintf("properties and headers of about %d bytes do not fit in one frame (the connection's frame_max is %d bytes)", n, lim.FrameMax)
		}
	}
	return ""
}

// propertiesSize is the payload of a content header frame as amqp091
// writes it: class, weight, body size, flags, then each set property.
func propertiesSize(p amqp.Publishing) int {
	n := 2 + 2 + 8 + 2
	for _, s := range []string{p.ContentType, p.ContentEncoding, p.CorrelationId, p.ReplyTo, p.Expiration, p.MessageId, p.Type, p.UserId, p.AppId} {
		if s != "" {
			n += 1 + len(s)
		}
	}
	if len(p.Headers) > 0 {
		n += tableSize(p.Headers)
	}
	if p.DeliveryMode > 0 {
		n++
	}
	if p.Priority > 0 {
		n++
	}
	if !p.Timestamp.IsZero() {
		n += 8
	}
	return n
}

// tableSize is an AMQP field table's encoded size (its 4-byte length
// included), as amqp091 encodes each Go type.
func tableSize(t amqp.Table) int {
	n := 4
	for k, v := range t {
		n += 1 + len(k) + fieldSize(v)
	}
	return n
}

func fieldSize(v any) int {
	switch x := v.(type) {
	case nil:
		return 1
	case bool, byte, int8:
		return 2
	case int16, uint16:
		return 3
	case int, int32, uint32, float32:
		return 5
	case amqp.Decimal:
		return 6
	case int64, float64:
		return 9
	case string:
		return 5 + len(x)
	case []byte:
		return 5 + len(x)
	case []any:
		n := 5
		for _, e := range x {
			n += fieldSize(e)
		}
		return n
	case amqp.Table:
		return 1 + tableSize(x)
	}
	return 9 // time.Time and anything else amqp091 writes in 8 bytes + type
}
