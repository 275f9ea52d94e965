package broker

import (
	"errors"
	"fmt"
)

// What became of an AMQP connection or channel that ended mid-operation,
// for errors.Is: each is classified once, in amqpLost or amqpRefused.
var (
	// ErrConnLost: the connection ended under ladder (the node stopped or
	// was killed, the network dropped it, the broker closed it).
	ErrConnLost = errors.New("connection lost")
	// ErrStalled: the peer stopped answering: no heartbeat (AMQP) or no
	// answer within the deadline (the management API, --api-timeout).
	ErrStalled = errors.New("no answer in time")
	// ErrAPISlow is ErrStalled of the management API: slow, not down (a
	// UI keeps what AMQP can tell meanwhile).
	ErrAPISlow = fmt.Errorf("management API slow: %w", ErrStalled)
	// ErrAccessRefused: the broker refused an operation (ACCESS_REFUSED:
	// the user lacks a permission on a queue or exchange).
	ErrAccessRefused = errors.New("access refused")
	// ErrTooLarge: the broker refused a message larger than its
	// max_message_size (see refusedSize: the one reading of its words).
	ErrTooLarge = errors.New("message too large")
	// ErrUnparsable: the AMQP client (amqp091-go) could not parse a frame
	// the broker sent (headers nested more than 32 deep, a table of more
	// than 8192 fields) and dropped the connection.
	ErrUnparsable = errors.New("the AMQP client could not read a frame")
)

// What a connection failure was, for errors.Is: each is classified once,
// in amqpDialError or APIError, and carried by a *ConnError.
var (
	// ErrUnreachable: nothing answered at the broker's address.
	ErrUnreachable = errors.New("broker unreachable")
	// ErrLoginRefused: the broker refused the user or password.
	ErrLoginRefused = errors.New("login refused")
	// ErrVhostNotFound: the vhost does not exist.
	ErrVhostNotFound = errors.New("vhost not found")
	// ErrNoAccess: the user may not use the vhost (or the management API).
	ErrNoAccess = errors.New("no access")
	// ErrNotAMQP: something answered that does not speak the protocol
	// asked for (an AMQP URL at the management port, http:// at AMQP).
	ErrNotAMQP = errors.New("wrong protocol at this port")
	// ErrTLS: the TLS handshake failed: the server's certificate did not
	// verify (an unknown CA, another host's name, expired) or the server
	// refused the handshake.
	ErrTLS = errors.New("TLS handshake failed")
)

// ConnError is a failure to reach or log in to the broker, worded once for
// the operator: "login refused for user guest at 127.0.0.1:5672". Its text
// is the whole story; the cause stays in the chain for errors.Is/As only
// (amqp091's "Exception (403) Reason: …" or Go's "Get \"…?columns=…\"" are
// not repeated).
type ConnError struct {
	Msg  string
	Kind error // one of the Err… above, or nil
	Err  error // the cause, passwords redacted
	// whole is Msg before it was bounded, so redaction sees every
	// password whole (a cut one no longer matches).
	whole string
}

func (e *ConnError) Error() string { return e.Msg }

func (e *ConnError) Unwrap() []error {
	var out []error
	for _, err := range []error{e.Kind, e.Err} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// maxErrLine bounds a connection error's text, so that "ladder: " and it
// stay within 200 characters on the terminal whatever a host or a broker's
// reason is.
const maxErrLine = 190

// NewConnError is a *ConnError worded by format, bounded to maxErrLine.
func NewConnError(kind, cause error, format string, a ...any) *ConnError {
	whole := fmt.Sprintf(format, a...)
	return &ConnError{Msg: bound(whole, maxErrLine), Kind: kind, Err: cause, whole: whole}
}

// RedactWith rewrites the error's text through redact (hiding passwords),
// on the whole text before it is bounded: a password cut by the bound
// would no longer match.
func (e *ConnError) RedactWith(redact func(string) string) {
	if e.whole != "" {
		e.whole = redact(e.whole)
		e.Msg = bound(e.whole, maxErrLine)
	}
}

// bound cuts s to n runes (the last one "…"); the messages name the
// host:port before any cause, so the cut falls in the cause.
func bound(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Describe is the line to show for err. A connection failure is shown as
// itself: "peek: queue \"q\" in vhost /: " before "login refused for user
// guest at …" says nothing more. A partial run keeps its whole text (it
// says how far it got).
func Describe(err error) string {
	if err == nil {
		return ""
	}
	var ce *ConnError
	if errors.As(err, &ce) && !errors.Is(err, ErrPartial) {
		return ce.Msg
	}
	return err.Error()
}

// WaitsForUser is true for a failure that retrying unchanged will not
// mend (a refused login, a missing vhost, the wrong port): a UI should
// stop polling and let the user retry.
func WaitsForUser(err error) bool {
	return errors.Is(err, ErrLoginRefused) || errors.Is(err, ErrVhostNotFound) ||
		errors.Is(err, ErrNoAccess) || errors.Is(err, ErrNotAMQP) || errors.Is(err, ErrTLS) ||
		errors.Is(err, ErrTwoBrokers)
}

// ErrReadOnly refuses a mutation under --read-only.
var ErrReadOnly = errors.New("read-only mode: ladder changes nothing on the broker")

// ErrPartial marks a move that left messages in the source.
var ErrPartial = errors.New("some messages were not moved")

// ErrUnaudited refuses an action tried outside the gate: a client that
// is not behind internal/gate audits nothing, so it acts on nothing
// (Publish and Drain pass the gate only inside an audited action).
var ErrUnaudited = errors.New("not audited: actions pass the gate (internal/gate), which writes the audit trail")

// ErrNotFound marks a queue or exchange that does not exist.
var ErrNotFound = errors.New("not found")

// ErrTwoBrokers: the AMQP URL and the management API reach different
// clusters (an --api-url left at its default beside an --amqp-url of
// another broker): every figure read from one would be applied to the
// other.
var ErrTwoBrokers = errors.New("AMQP and the management API reach different brokers")

// ErrNotReached: a message of the batch the broker never took: it closed
// the channel at an earlier one (and ignores what follows a channel.close),
// or the channel had closed before it was sent. Nothing of it is on the
// broker. A message refused as too large is ErrTooLarge (amqpRefused).
var ErrNotReached = errors.New("not published: the broker closed the channel at an earlier message of the batch")
