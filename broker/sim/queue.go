package sim

import (
	"strconv"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// message is one message in one queue. Routing to several queues copies the
// struct; headers and body are shared between copies and never modified in
// place (every change clones the header table first).
type message struct {
	seq        uint64
	exchange   string // the exchange it was last published (or dead-lettered) to
	routingKey string
	// cc are the routing keys its CC header added when it was published:
	// a dead letter without a dead-letter routing key is routed by all of
	// them, and x-death records them (BCC keys route but are not kept).
	cc          []string
	props       broker.Properties
	headers     retry.Headers
	body        []byte
	redelivered bool
	// deliveryCount and acquiredCount are a quorum queue's counters
	// (x-delivery-count, x-acquired-count): only peeks move them here.
	deliveryCount, acquiredCount int64
	enqueued                     time.Time // when it entered this queue
	// ttl is the per-message TTL from props.Expiration.
	ttl    time.Duration
	hasTTL bool
}

// queue is a classic queue (or, declared so, a quorum queue, which only
// peeks tell apart): ready messages in FIFO order plus the count of
// messages delivered to the simulated worker and not yet settled.
type queue struct {
	name string
	typ  string // classic or quorum (x-queue-type)
	args map[string]any
	// policy is the effective policy definition (tests set it, as an
	// operator would on the broker).
	policy map[string]any
	set    topology.QueueSettings
	// dlx holds a quorum queue's dead letters awaiting at-least-once
	// delivery (no queue took them yet): the broker's messages_dlx.
	dlx       []deadLetter
	ready     []*message
	unacked   int64
	consumers int
	// lastUsed is when the queue was declared or last consumed from; with
	// x-expires the queue is deleted that long after, when unused.
	lastUsed time.Time
	// Cumulative counters; rates come from their samples (see rates.go).
	published, delivered, acked, redelivered int64
	samples                                  []sample
}

// parseExpiration reads the expiration property: a non-negative integer of
// milliseconds, as the broker demands (it refuses anything else).
func parseExpiration(s string) (time.Duration, bool, error) {
	if s == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, false, errInvalidExpiration(s)
	}
	return time.Duration(n) * time.Millisecond, true, nil
}

type errInvalidExpiration string

func (e errInvalidExpiration) Error() string {
	return "sim: PRECONDITION_FAILED - invalid expiration " + strconv.Quote(string(e))
}

// due is when m expires in q: the smaller of the queue TTL and the message's
// own, counted from when it entered q. ok is false when it never expires.
func (q *queue) due(m *message) (time.Time, bool) {
	ttl, ok := m.ttl, m.hasTTL
	if q.set.HasMessageTTL && (!ok || q.set.MessageTTL < ttl) {
		ttl, ok = q.set.MessageTTL, true
	}
	if !ok {
		return time.Time{}, false
	}
	return m.enqueued.Add(ttl), true
}

// headDue is when the head message expires. Only the head is checked, as in
// RabbitMQ: an expired message behind a longer-lived head waits for it.
func (q *queue) headDue() (time.Time, bool) {
	if len(q.ready) == 0 {
		return time.Time{}, false
	}
	return q.due(q.ready[0])
}

func (q *queue) push(m *message) {
	q.ready = append(q.ready, m)
}

func (q *queue) pop() *message {
	m := q.ready[0]
	q.ready[0] = nil
	q.ready = q.ready[1:]
	if len(q.ready) == 0 {
		q.ready = nil // let the backing array go
	}
	return m
}

// remove takes the given messages out of the ready list, keeping the order
// of the others; it returns those it found.
func (q *queue) remove(ms map[*message]bool) []*message {
	var out []*message
	kept := q.ready[:0]
	for _, m := range q.ready {
		if ms[m] {
			out = append(out, m)
			continue
		}
		kept = append(kept, m)
	}
	clear(q.ready[len(kept):])
	q.ready = kept
	return out
}

// expiresAt is when the unused queue will be deleted (x-expires).
func (q *queue) expiresAt() (time.Time, bool) {
	if !q.set.HasExpires || q.consumers > 0 {
		return time.Time{}, false
	}
	return q.lastUsed.Add(q.set.Expires), true
}

func (q *queue) info() topology.Queue {
	out := topology.Queue{
		Name:        q.name,
		Type:        q.typ,
		Arguments:   cloneTable(q.args),
		Policy:      cloneTable(q.policy),
		ReadyBytes:  q.readyBytes(),
		MessagesDLX: int64(len(q.dlx)),
		Consumers:   q.consumers,
		Ready:       int64(len(q.ready)),
		Unacked:     q.unacked,
	}
	out.Messages = out.Ready + out.Unacked
	if len(q.ready) > 0 && q.ready[0].props.Timestamp != nil {
		out.HeadMessageTimestamp = *q.ready[0].props.Timestamp
	}
	return out
}

// readyBytes is the body bytes of the ready messages (x-max-length-bytes).
func (q *queue) readyBytes() int64 {
	var n int64
	for _, m := range q.ready {
		n += int64(len(m.body))
	}
	return n
}

// settle reads the queue's effective settings from its arguments and
// policy.
func (q *queue) settle() {
	q.set = topology.EffectiveSettings(&topology.Queue{Name: q.name, Type: q.typ, Arguments: q.args, Policy: q.policy})
}

// full says whether one more message of size bytes exceeds a length limit
// (ready messages count).
func (q *queue) full(size int) bool {
	return (q.set.HasMaxLength && int64(len(q.ready))+1 > q.set.MaxLength) ||
		(q.set.HasMaxLengthBytes && q.readyBytes()+int64(size) > q.set.MaxLengthBytes)
}

// over says whether the queue holds more than a length limit allows.
func (q *queue) over() bool {
	return (q.set.HasMaxLength && int64(len(q.ready)) > q.set.MaxLength) ||
		(q.set.HasMaxLengthBytes && q.readyBytes() > q.set.MaxLengthBytes)
}

// atLeastOnce: a quorum queue that keeps its dead letters until a queue
// took them (x-dead-letter-strategy at-least-once wants x-overflow
// reject-publish; otherwise the broker falls back to at-most-once).
func (q *queue) atLeastOnce() bool {
	return q.typ == topology.QueueQuorum && q.set.DeadLetterStrategy == topology.DeadLetterAtLeastOnce && q.set.Overflow == topology.OverflowRejectPublish
}
