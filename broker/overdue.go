package broker

import (
	"errors"
	"slices"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// ErrPeekNeedsConsent is what every read refused for want of the user's
// yes matches: one that counts a delivery toward a delivery limit
// (ErrPeekCostsDelivery) or one that releases overdue messages
// (ErrPeekReleases). A face asks on it, then reads again with
// PeekOptions.Force (--force-peek, the terminal's yes).
var ErrPeekNeedsConsent = errors.New("the read needs consent")

// ErrPeekReleases refuses, unless forced, a read past the head of a queue
// whose messages carry their own TTLs: RabbitMQ expires only its head, so
// messages whose TTL ran out behind a longer-lived one wait, and leave at
// once — dead-lettered or dropped — when a reader uncovers them.
var ErrPeekReleases = errors.New("a read would release overdue messages")

// ownTTLs is at most how many overdue messages a read of q may release,
// known before the queue is touched (0: none). RabbitMQ expires only a
// queue's head, so a message whose own TTL (its expiration) ran out behind
// a longer-lived one waits, and leaves the moment a reader takes the
// message ahead of it; a read cannot see whether any is overdue without
// uncovering it. A queue's messages carry their own TTLs where the last
// look at it (q.Seen.Look, while it still holds what it saw) read messages
// carrying an expiration, where messages expired in it without a queue TTL
// (q.Seen.Expiration), or, with no look, where its role says so: a wait
// queue of a ladder, which has no queue TTL and relies on per-message
// expiration (a look that read every message and found none carrying its
// own TTL clears that). A queue TTL alone expires messages in order:
// nothing overdue waits behind the head. The bound is the ready count less
// the head (which leaves when due, read or not) and the messages the look
// saw that never expire.
func ownTTLs(q topology.Queue, v *topology.Vhost, ladders []retry.Ladder) int64 {
	if q.Type == topology.QueueStream || q.Ready <= 1 {
		return 0
	}
	look := q.Seen.Look
	if !look.Holds(&q) {
		look = nil
	}
	own := false
	switch {
	case look != nil && look.Expiring > 0:
		own = true
	case look != nil && int64(look.Read) >= look.Ready && q.Messages <= look.Ready:
		// It read them all, and none carried an expiration.
	case q.Seen.Expiration && !topology.EffectiveSettings(&q).HasMessageTTL:
		own = true
	default:
		own = slices.ContainsFunc(ladders, func(l retry.Ladder) bool { return slices.Contains(l.WaitQueues, q.Name) }) &&
			!fedByDeadLetters(v, q.Name)
	}
	if !own {
		return 0
	}
	n := q.Ready - 1
	if look != nil {
		n -= int64(look.Stripped + look.Never)
	}
	return max(n, 0)
}

// fedByDeadLetters says whether another queue of v dead-letters into queue.
func fedByDeadLetters(v *topology.Vhost, queue string) bool {
	if v == nil {
		return false
	}
	r := topology.NewRouter(v)
	for i := range v.Queues {
		from := &v.Queues[i]
		if from.Name == queue || !topology.EffectiveSettings(from).HasDeadLetterExchange {
			continue
		}
		if slices.Contains(r.DeadLetters(from.Name).Queues, queue) {
			return true
		}
	}
	return false
}

// WithReleases is c with what a read of q may release (ownTTLs) and where
// it goes: what the question before the read says.
func WithReleases(c PeekCost, q topology.Queue, v *topology.Vhost, ladders []retry.Ladder) PeekCost {
	if n := ownTTLs(q, v, ladders); n > 0 {
		c.Releases, c.ReleaseTo = n, ReleaseRoute(q)
	}
	return c
}

// ReadCostOf is what a read of q, as snap has it, costs: its version's
// rules and what it may release, known from the snapshot alone (the
// terminal UI asks with it before a read).
func ReadCostOf(snap *Snapshot, q topology.Queue) PeekCost {
	return WithReleases(PeekCostOf(q, snap.BrokerVersion), q, &snap.Topology, snap.Ladders)
}
