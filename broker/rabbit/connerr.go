package rabbit

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/secret"
)

// connErr words a connection failure once (see broker.NewConnError).
func connErr(kind, cause error, format string, a ...any) *broker.ConnError {
	return broker.NewConnError(kind, cause, format, a...)
}

// parseFailure says whether a connection's close reason is amqp091's own
// refusal of a frame it could not parse. amqp091 reports every read error
// of its socket the same way (a FrameError that is not the server's): a
// parse failure, EOF, a reset and a missed heartbeat differ only in the
// reason, which is the read error's text.
func parseFailure(why *amqp.Error) bool {
	if why == nil || why.Server || (why.Code != amqp.FrameError && why.Code != amqp.SyntaxError) {
		return false
	}
	return strings.Contains(why.Reason, amqp.ErrSyntax.Reason) || strings.Contains(why.Reason, amqp.ErrFrame.Reason) ||
		strings.Contains(why.Reason, "Exception (50") // 501 frame, 502 syntax, 503 command, 505 unexpected frame
}

// amqpLost words why the connection to addr (host:port) or a channel on it
// ended: the broker's own close (its reason: CONNECTION_FORCED, a channel
// exception), a silence past the heartbeat, or the socket closed or reset
// under it. doing names the operation ("peek q"); the error's kind says
// which for errors.Is. A close ladder asked for is no loss: why is nil
// then and so is the result.
func amqpLost(addr, doing string, why *amqp.Error) error {
	if why == nil {
		return nil
	}
	reason := strings.TrimSpace(why.Reason)
	if why.Server {
		switch why.Code {
		case amqp.AccessRefused, amqp.NotFound, amqp.PreconditionFailed, amqp.ResourceLocked, amqp.NotAllowed:
			return amqpRefused(addr, doing, why)
		case amqp.ConnectionForced:
			return connErr(broker.ErrConnLost, why, "%s: RabbitMQ at %s closed the connection: %s", doing, addr, reason)
		}
		return connErr(broker.ErrConnLost, why, "%s: RabbitMQ at %s closed the connection: %s", doing, addr, reason)
	}
	switch {
	case parseFailure(why):
		return connErr(broker.ErrUnparsable, why, "%s: the AMQP client could not read a message from %s (%s) and dropped the connection", doing, addr, unparsedHint)
	case strings.Contains(reason, "i/o timeout") || strings.Contains(reason, "deadline exceeded"):
		return connErr(broker.ErrStalled, why, "%s: RabbitMQ at %s stopped answering (no heartbeat): connection dropped", doing, addr)
	case strings.HasSuffix(reason, "EOF"):
		return connErr(broker.ErrConnLost, why, "%s: connection to RabbitMQ at %s lost: closed by the other side (node stopped or killed?)", doing, addr)
	case strings.Contains(reason, "connection reset"):
		return connErr(broker.ErrConnLost, why, "%s: connection to RabbitMQ at %s lost: reset by the other side", doing, addr)
	case strings.Contains(reason, "broken pipe"):
		return connErr(broker.ErrConnLost, why, "%s: connection to RabbitMQ at %s lost: broken pipe", doing, addr)
	}
	return connErr(broker.ErrConnLost, why, "%s: connection to RabbitMQ at %s lost: %s", doing, addr, reason)
}

// amqpRefused words a channel the broker closed on an operation: the
// broker's own text, which names the object and the user
// ("ACCESS_REFUSED - write access to exchange 'x' in vhost 'v' refused for
// user 'u'"), with the refusal's kind.
func amqpRefused(addr, doing string, why *amqp.Error) error {
	reason := strings.TrimSpace(why.Reason)
	// The reason names the broker's object, vhost and user: it comes
	// before the address, which the line may lose to its bound.
	switch {
	case why.Code == amqp.AccessRefused:
		return connErr(broker.ErrAccessRefused, why, "%s refused: %s (RabbitMQ at %s)", doing, reason, addr)
	case refusedSize(why) > 0:
		return connErr(broker.ErrTooLarge, why, "%s refused, message too large: %s (RabbitMQ at %s)", doing, reason, addr)
	}
	return connErr(nil, why, "%s refused: %s (RabbitMQ at %s)", doing, reason, addr)
}

// heartbeat is ladder's AMQP heartbeat: amqp091 gives up on a connection
// silent for three of them (or the broker's, when it asks for less).
const heartbeat = 10 * time.Second

// connAddr is the host:port a connection reached ("RabbitMQ" when unknown).
func connAddr(conn *amqp.Connection) string {
	if conn == nil {
		return "?"
	}
	if a := conn.RemoteAddr(); a != nil {
		if host, port, err := net.SplitHostPort(a.String()); err == nil {
			return net.JoinHostPort(host, port)
		}
		return a.String()
	}
	return "?"
}

// AMQPFailure words an error an amqp091 call returned during doing: a
// channel or connection exception by its cause (see amqpLost), amqp091's
// "channel/connection is not open" by the close that caused it when watch
// saw one. Anything else comes back as it was, wrapped with doing.
func AMQPFailure(conn *amqp.Connection, doing string, err error, watch *CloseWatch) error {
	if err == nil {
		return nil
	}
	var ce *broker.ConnError
	if errors.As(err, &ce) {
		return err // classified already
	}
	var ae *amqp.Error
	if errors.As(err, &ae) && ae != amqp.ErrClosed && (ae.Server || ae.Code == amqp.FrameError || ae.Code == amqp.SyntaxError) {
		return amqpLost(connAddr(conn), doing, ae)
	}
	// A write can fail on the socket (reset, broken pipe) before the
	// client has read the broker's close frame: wait for its reason as
	// for a closed channel, else word the socket's failure as a loss.
	var netErr *net.OpError
	if errors.Is(err, amqp.ErrClosed) || errors.As(err, &netErr) {
		if why := watch.Reason(time.Second); why != nil {
			return amqpLost(connAddr(conn), doing, why)
		}
		if why := connClosed(conn); why != nil {
			return amqpLost(connAddr(conn), doing, why)
		}
		if netErr != nil {
			return amqpLost(connAddr(conn), doing, &amqp.Error{Reason: err.Error()})
		}
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// CloseWatch keeps the reason a channel or connection was closed with:
// amqp091 tells it once, through NotifyClose, while every later call only
// says "channel/connection is not open".
type CloseWatch struct {
	c   chan *amqp.Error
	mu  sync.Mutex
	why *amqp.Error
}

// WatchChannel watches ch.
func WatchChannel(ch *amqp.Channel) *CloseWatch {
	return &CloseWatch{c: ch.NotifyClose(make(chan *amqp.Error, 1))}
}

// Reason is the close reason, waiting up to wait for it: nil while open
// (or closed by ladder). A nil watch has none.
func (w *CloseWatch) Reason(wait time.Duration) *amqp.Error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.why == nil {
		select {
		case why, ok := <-w.c:
			if ok {
				w.why = why
			}
		case <-time.After(wait):
		}
	}
	return w.why
}

// connWatches keeps each connection DialAMQP opened's close reason (see
// connClosed).
var connWatches sync.Map // *amqp.Connection → *connWatch

type connWatch struct {
	done chan struct{}
	why  *amqp.Error
}

// watchConn records conn's close reason as amqp091 tells it.
func watchConn(conn *amqp.Connection) {
	w := &connWatch{done: make(chan struct{})}
	connWatches.Store(conn, w)
	c := conn.NotifyClose(make(chan *amqp.Error, 1))
	go func() {
		w.why = <-c
		close(w.done)
		// Kept a while for the calls failing on it, then forgotten.
		time.AfterFunc(time.Minute, func() { connWatches.Delete(conn) })
	}()
}

// connClosed is why conn closed, waiting a little for amqp091 to tell it:
// nil while it is open or when ladder closed it.
func connClosed(conn *amqp.Connection) *amqp.Error {
	if conn == nil {
		return nil
	}
	v, ok := connWatches.Load(conn)
	if !ok {
		return nil
	}
	w := v.(*connWatch)
	if !conn.IsClosed() {
		return nil
	}
	select {
	case <-w.done:
		return w.why
	case <-time.After(time.Second):
		return nil
	}
}

// stillAnswers checks, when deliveries stop before the count said they
// would, that the connection still answers (a passive declare of queue on
// a channel of its own): a stalled peer looks like an emptied queue until
// the heartbeat gives up. nil when it answered within wait.
func stillAnswers(conn *amqp.Connection, doing, queue string, wait time.Duration) error {
	done := make(chan error, 1)
	go func() {
		ch, err := conn.Channel()
		if err == nil {
			_, err = ch.QueueDeclarePassive(queue, false, false, false, false, nil)
			ch.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		var ae *amqp.Error
		if err != nil && (errors.Is(err, amqp.ErrClosed) || errors.As(err, &ae) && !ae.Server) {
			return AMQPFailure(conn, doing, err, nil)
		}
		return nil // answered (a missing queue is an answer)
	case <-time.After(wait):
		return connErr(broker.ErrStalled, nil, "%s: RabbitMQ at %s stopped answering (nothing in %s)", doing, connAddr(conn), wait)
	}
}

// stallCheck bounds stillAnswers.
const stallCheck = 5 * time.Second

// declareError words a refused queue.declare of name: an existing queue
// with other arguments (PRECONDITION_FAILED) says so, a refusal for want
// of a permission is the broker's own text, never a guess.
func declareError(conn *amqp.Connection, name string, err error) error {
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Server && ae.Code == amqp.PreconditionFailed {
		return secret.Reworded(fmt.Sprintf("declare wait queue %s: a queue of that name exists with other arguments (%s): it must expire or be deleted first", name, strings.TrimSpace(ae.Reason)), err)
	}
	return AMQPFailure(conn, "declare wait queue "+name, err, nil)
}
