package rabbit

import (
	"context"
	"regexp"
	"strconv"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Default max_message_size: 128 MiB from 3.8 on, 16 MiB from 4.0.
const (
	defaultMaxMessageSize3 = 128 << 20
	defaultMaxMessageSize4 = 16 << 20
)

// PublishLimits implements broker.Publisher. The management API does not
// show max_message_size, so the limit is the version's default until the
// broker refuses a message and names its configured one (then that).
func (l *Live) PublishLimits(ctx context.Context) (broker.PublishLimits, error) {
	var lim broker.PublishLimits
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
