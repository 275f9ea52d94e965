package broker

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Peek defaults.
const (
	DefaultPeekLimit   = 100
	DefaultBodyPreview = 4096
	// defaultDeliveryLimit4 is RabbitMQ 4.0–4.2's default quorum delivery limit.
	defaultDeliveryLimit4 = 20
)

// ReleaseRoute says where a queue's expired messages go: its dead-letter
// route, or nowhere.
func ReleaseRoute(q topology.Queue) string {
	t, route := moveplan.DeadLetterTarget(topology.EffectiveSettings(&q))
	switch {
	case route == moveplan.DeadLettersDropped:
		return "nowhere (dropped: no dead-letter exchange)"
	case route == moveplan.DeadLettersOwnKeysDefault:
		return "the default exchange with their own keys"
	case t.Kind == moveplan.TargetQueue:
		return "queue " + t.Name
	case t.HasKey:
		return "exchange " + t.Name + " with key " + t.RoutingKey
	}
	return "exchange " + t.Name + " with their own keys"
}

// PeekMode is how a peek browses a queue.
type PeekMode int

// PeekModeOf is how q is browsed on a broker of brokerVersion when AMQP 1.0
// answers. Measured (TestPeekQuorumByVersion): on 4.3.6 an AMQP 1.0
// released outcome leaves x-delivery-count alone; on 4.0.5 it counts a
// delivery like any return (4.1 and 4.2 are taken to be as 4.0: 4.3 is
// where returns without a failure stopped counting). Classic queues stay on
// 0-9-1: over AMQP 1.0 they keep the same order and get the same
// redelivered flag (seen on 4.0.5 and 4.3.6), and RabbitMQ's conversion to
// AMQP 1.0 drops some 0-9-1 headers (see amqp1_message.go).
func PeekModeOf(q topology.Queue, brokerVersion string) PeekMode {
	switch {
	case q.Type == topology.QueueStream:
		return PeekByOffset
	case q.Type == topology.QueueQuorum && topology.VersionAtLeast(brokerVersion, 4, 3):
		return PeekReleased
	}
	return PeekConsumeClose
}

// PeekFree reports whether browsing q on a broker of brokerVersion costs
// nothing that counts: a stream is read by offset, a quorum queue on
// 4.3+ is browsed over AMQP 1.0 and released, its delivery count
// untouched. Where AMQP 1.0 then fails, the costly browse's refusals
// apply (PeekRefusal: a quorum queue's delivery limit needs consent).
// What topology may read unasked.
func PeekFree(q topology.Queue, brokerVersion string) bool {
	m := PeekModeOf(q, brokerVersion)
	return m == PeekByOffset || m == PeekReleased
}

// ConsumeMode is how an AMQP 0-9-1 peek reads q: streams by offset, the
// rest by consume and close.
func ConsumeMode(q topology.Queue) PeekMode {
	if q.Type == topology.QueueStream {
		return PeekByOffset
	}
	return PeekConsumeClose
}

// PeekSideEffectsVia says what a peek by mode costs. Seen here: a
// consume-and-close peek raises x-delivery-count on 3.10, 4.0 and 4.3 (and
// x-acquired-count on 4.3); from 4.0 a quorum queue has a delivery limit
// of 20 unless set; an AMQP 1.0 browse released on 4.3 raises only
// x-acquired-count, and later consumers see the messages redelivered.
func PeekSideEffectsVia(mode PeekMode, queueType, brokerVersion string) []string {
	const hidden = "while ladder held them, these messages were invisible to other consumers"
	switch {
	case mode == PeekByOffset:
		return []string{}
	case mode == PeekReleased:
		return []string{
			"quorum queue browsed over AMQP 1.0 and released: x-delivery-count and the delivery limit are untouched; each peek raises x-acquired-count by one, and later consumers see these messages as redelivered",
			hidden,
		}
	case queueType == topology.QueueQuorum:
		count := "quorum queue: each peek increments x-delivery-count, which counts toward the queue's delivery limit if it has one"
		switch v := brokerVersion; {
		case topology.VersionAtLeast(v, 4, 3):
			count = "quorum queue, browsed over AMQP 0-9-1 (AMQP 1.0 was not available): each peek increments x-delivery-count and x-acquired-count; the delivery count counts toward the delivery limit (20 unless set)"
		case topology.VersionAtLeast(v, 4, 0):
			count = "quorum queue: each peek increments x-delivery-count, which counts toward the delivery limit (20 unless set)"
		}
		return []string{
			"ladder's peek returned these messages: their redelivered flag is now set",
			count,
			hidden,
		}
	default:
		return []string{
			"ladder's peek returned these messages: their redelivered flag is now set",
			hidden,
		}
	}
}

// PeekCost is what a peek of a queue would cost, known before it runs (the
// terminal UI asks first when it matters), by the rules PeekSideEffects and
// the refusals follow.
type PeekCost struct {
	// Consumers would not see the peeked messages while ladder holds them;
	// ConsumersUnknown: the broker did not say, so there may be some.
	Consumers        int
	ConsumersUnknown bool
	// Redelivered: every peeked message comes back with redelivered set
	// (all but streams, which are read by offset).
	Redelivered bool
	// Acquired: browsed over AMQP 1.0 and released (a quorum queue on
	// 4.3+): x-acquired-count rises, the delivery count does not.
	Acquired bool
	// Counted: each peek raises x-delivery-count (a quorum queue with no
	// costless browse). Limited: toward DeliveryLimit, past which the
	// peek's return dead-letters or drops a message; DefaultLimit when that
	// limit is the broker's default (none set).
	Counted       bool
	Limited       bool
	DeliveryLimit int64
	DefaultLimit  bool
	// Releases is at most how many overdue messages the read may release
	// (ownTTLs: the queue's messages carry their own TTLs, and only its
	// head expires), and ReleaseTo where they go (ReleaseRoute).
	Releases  int64
	ReleaseTo string
}

// PeekCostOf is the cost of peeking q on a broker of brokerVersion, browsed
// the way PeekModeOf chooses. A stream costs nothing: it is read by offset,
// hidden from no one.
func PeekCostOf(q topology.Queue, brokerVersion string) PeekCost {
	return PeekCostVia(q, brokerVersion, PeekModeOf(q, brokerVersion))
}

func PeekCostVia(q topology.Queue, brokerVersion string, mode PeekMode) PeekCost {
	if mode == PeekByOffset {
		return PeekCost{}
	}
	c := PeekCost{Consumers: q.Consumers, ConsumersUnknown: q.ConsumersUnknown, Redelivered: true}
	switch {
	case mode == PeekReleased:
		c.Acquired = true
	case q.Type == topology.QueueQuorum:
		c.Counted = true
		if limit, ok := DeliveryLimit(q, brokerVersion); ok {
			c.Limited, c.DeliveryLimit = true, limit
			c.DefaultLimit = !topology.EffectiveSettings(&q).HasDeliveryLimit
		}
	}
	return c
}

// Felt says whether someone else pays for the peek: consumers that lose
// sight of the messages (or may: unknown), or a delivery limit it counts
// toward. A peek of an unconsumed queue without a limit only sets the
// redelivered flag (and raises a quorum count).
func (c PeekCost) Felt() bool {
	return c.Consumers > 0 || c.ConsumersUnknown || c.Limited || c.Releases > 0
}

// CountsDelivery: the peek raises x-delivery-count, a change read-only
// mode refuses.
func (c PeekCost) CountsDelivery() bool { return c.Counted }

// NeedsConsent: the peek counts toward a delivery limit, and how near the
// messages are cannot be seen without spending a delivery, or it may
// release overdue messages: it is refused unless forced (--force-peek;
// the terminal UI's yes).
func (c PeekCost) NeedsConsent() bool { return c.Limited || c.Releases > 0 }

// Changes: the read may change the queue beyond flags and counters (it
// counts a delivery, or releases overdue messages): read-only mode
// refuses it.
func (c PeekCost) Changes() bool { return c.Counted || c.Releases > 0 }

// ErrPeekCostsDelivery refuses, unless forced, a peek that counts a
// delivery toward a quorum queue's delivery limit.
var ErrPeekCostsDelivery = errors.New("a peek would count a delivery toward the delivery limit")

// PeekRefused is a peek refused before it touched the queue: under
// read-only mode (Kind ErrReadOnly) because it would raise the delivery
// count, or (Kind ErrPeekCostsDelivery) because it would count toward a
// delivery limit and was not forced. Cost is what it would have cost, Ready
// the queue's ready messages as the management API last said, Limit the
// most it would have read (0: not known), so that a question can say how
// many it reads.
type PeekRefused struct {
	Queue string
	Ready int64
	Limit int
	Cost  PeekCost
	Kind  error
	Why   string
}

func (e *PeekRefused) Error() string { return "peek " + e.Queue + ": " + e.Why }

func (e *PeekRefused) Unwrap() []error {
	if e.Kind == ErrReadOnly {
		return []error{e.Kind}
	}
	return []error{e.Kind, ErrPeekNeedsConsent}
}

// PeekRefusal decides from what is known before the queue is touched —
// its type, limit and the broker's version, never a delivery — whether a
// peek costing c may run. because says why no costless browse exists
// ("" for the version's rule).
func PeekRefusal(q topology.Queue, brokerVersion string, c PeekCost, readOnly, force bool, because string) *PeekRefused {
	if !c.Changes() || (!readOnly && (force || !c.NeedsConsent())) {
		return nil
	}
	var parts []string
	if c.Counted {
		if because == "" {
			because = "RabbitMQ " + brokerVersion + " has no peek that leaves it unchanged; 4.3 has"
		}
		what := "a peek of this quorum queue counts a delivery (x-delivery-count +1)"
		if c.Limited {
			what += fmt.Sprintf(" toward its %s of %d", limitName(c), c.DeliveryLimit)
		}
		switch {
		case readOnly:
			parts = append(parts, what+"; "+because)
		case c.Limited:
			parts = append(parts, fmt.Sprintf(
				"%s, and a message already delivered %d times would be %s; how near they are cannot be seen without spending one (%s)",
				what, c.DeliveryLimit, deadLetteredTo(q), because))
		}
	}
	if c.Releases > 0 {
		parts = append(parts, releaseWarning(c))
	}
	why := strings.Join(parts, "; and ")
	switch {
	case readOnly:
		return &PeekRefused{Queue: q.Name, Ready: q.Ready, Cost: c, Kind: ErrReadOnly, Why: "read-only: " + why}
	case c.Limited:
		return &PeekRefused{Queue: q.Name, Ready: q.Ready, Cost: c, Kind: ErrPeekCostsDelivery, Why: why}
	}
	return &PeekRefused{Queue: q.Name, Ready: q.Ready, Cost: c, Kind: ErrPeekReleases, Why: why}
}

// releaseWarning says what reading past the head of a queue whose
// messages carry their own TTLs may do (c.Releases > 0).
func releaseWarning(c PeekCost) string {
	return fmt.Sprintf("its messages carry their own TTLs and only the head expires: reading past the head releases at once the overdue ones it uncovers, at most %s, to %s",
		topology.Plural(int(c.Releases), "message", "messages"), c.ReleaseTo)
}

func limitName(c PeekCost) string {
	if c.DefaultLimit {
		return "default delivery limit"
	}
	return "delivery limit"
}

// deadLetteredTo says where a message past its delivery limit goes.
func deadLetteredTo(q topology.Queue) string {
	if r := ReleaseRoute(q); !strings.HasPrefix(r, "nowhere") {
		return "dead-lettered to " + r
	}
	return "dropped (no dead-letter exchange)"
}

// NoteDeadLettered reports the messages a peek's return pushed past their
// delivery limit: each return raised x-delivery-count by one, and a quorum
// queue dead-letters (or drops) a message returned once it had been
// delivered limit times before. Counted from each message's
// x-delivery-count as delivered (exact; no waiting on a quorum queue's
// asynchronous returns), on what the peek itself read.
func NoteDeadLettered(res *PeekResult, q topology.Queue, brokerVersion string) {
	limit, ok := DeliveryLimit(q, brokerVersion)
	if !ok {
		return
	}
	var gone []string
	for _, c := range res.deliveryCounts() {
		if c.count >= limit {
			gone = append(gone, strconv.Itoa(c.position))
		}
	}
	if len(gone) == 0 {
		return
	}
	at := time.Now()
	res.Released += int64(len(gone))
	res.ReleasedTo, res.ReleasedAt = ReleaseRoute(q), &at
	res.SideEffects = append(res.SideEffects, fmt.Sprintf(
		"%s by this peek (position %s): delivered %d times before, the return passed the delivery limit of %d",
		topology.Plural(len(gone), "message was "+deadLetteredTo(q), "messages were "+deadLetteredTo(q)), strings.Join(gone, ", "), limit, limit))
}

// RepeekDeadLetters counts the messages of prev, a consume-and-close peek
// of q, that another such peek would dead-letter: read from the counts
// prev saw, which its own return raised by one. The terminal UI refuses a
// re-peek that would, without spending a delivery to find out.
func RepeekDeadLetters(prev *PeekResult, q topology.Queue, brokerVersion string) int {
	c := PeekCostOf(q, brokerVersion)
	if prev == nil || !c.Limited {
		return 0
	}
	n := 0
	for _, m := range prev.Messages {
		seen, _ := retry.HeaderInt(m.Headers["x-delivery-count"])
		if seen+1 >= c.DeliveryLimit {
			n++
		}
	}
	return n
}

// DeliveryLimit is the quorum queue's effective limit; RabbitMQ 4.0–4.2
// apply 20 when none is set (4.3 no longer counts returns the same way, but
// a conservative limit is still right for a peek).
func DeliveryLimit(q topology.Queue, brokerVersion string) (int64, bool) {
	if q.Type != topology.QueueQuorum {
		return 0, false
	}
	s := topology.EffectiveSettings(&q)
	if s.HasDeliveryLimit {
		return s.DeliveryLimit, s.DeliveryLimit >= 0
	}
	if topology.VersionAtLeast(brokerVersion, 4, 0) {
		return defaultDeliveryLimit4, true
	}
	return 0, false
}

const (
	// PeekConsumeClose: consume over AMQP 0-9-1 with manual ack, then close
	// the channel, which returns every message in order with redelivered
	// set. On a quorum queue the return counts a delivery.
	PeekConsumeClose PeekMode = iota
	// PeekReleased: a quorum queue on RabbitMQ 4.3+, browsed over AMQP 1.0
	// and settled with the released outcome: the delivery count and the
	// delivery limit are untouched, only x-acquired-count rises.
	PeekReleased
	// PeekByOffset: a stream, read by offset, which changes nothing.
	PeekByOffset
)
