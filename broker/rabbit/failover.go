package rabbit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// Move implements Client. A move whose connection is lost — its node
// stopped, the connection closed — goes on through another node of the
// addresses given (--amqp-url a,b,c), the first of the others that
// answers, as many times as there are nodes: nothing is lost (a message is
// acked in its source only after its target confirmed it), and the
// messages that may now be in both places are counted in
// DuplicatesAtMost, as for any lost channel. A move of chosen positions
// (a peek's, whose numbering the first part changed) or of a confirmed
// plan's picks stops instead, as with one node.
func (l *Live) Move(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	if progress != nil {
		// Across a reconnection the messages in flight are looked at
		// again: what is done never goes back.
		shown, report := 0, progress
		progress = func(p broker.MoveProgress) {
			p.Done = max(p.Done, shown)
			shown = p.Done
			report(p)
		}
	}
	rep, err := l.moveOn(ctx, req, progress)
	if len(l.r.Addresses) < 2 || req.DryRun || len(req.Positions) > 0 || req.Pick != nil {
		return rep, err
	}
	tried := map[string]bool{l.r.Address(): true}
	lost := l.r.Address()
	connLost := err != nil && (errors.Is(err, broker.ErrConnLost) || l.connClosed())
	for connLost && ctx.Err() == nil {
		next := l.nextNode(ctx, tried)
		if next == nil {
			rep.Note("no other node answered to go on through")
			break
		}
		tried[next.Address()] = true
		rest := req
		if req.Limit > 0 {
			if rest.Limit = req.Limit - rep.Moved; rest.Limit <= 0 {
				break
			}
		}
		other, nerr := NewLive(next, l.purpose)
		if nerr != nil {
			break
		}
		other.ShareMemory(l)
		if req.Limit == 0 {
			// "Every message ready now" must count those the lost
			// connection held: the broker returns them to the source
			// as it notices the loss.
			left := rep.Requested - rep.Moved - rep.Failed - rep.Returned - rep.Skipped - rep.Unmatched - rep.DuplicatesAtMost
			other.waitReturned(ctx, req.From, left)
		}
		before := *rep
		more, merr := other.moveOn(ctx, rest, func(p broker.MoveProgress) {
			if progress != nil {
				// What moved before counts; what was left is looked at again.
				p.Total = max(p.Total, before.Requested)
				p.Done += before.Moved
				p.Moved += before.Moved
				progress(p)
			}
		})
		connLost = merr != nil && (errors.Is(merr, broker.ErrConnLost) || other.connClosed())
		other.Close()
		rep.Add(more)
		rep.Note(fmt.Sprintf("the connection to %s was lost; the move went on through %s", lost, next.Address()))
		lost, err = next.Address(), merr
	}
	return rep, err
}

// connClosed: the client's connection is gone (an error's wording, "channel
// is not open", may not say the connection was lost; this does).
func (l *Live) connClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn != nil && l.conn.IsClosed()
}

// Failover implements broker.Failoverer: a client on the next of the
// addresses that answers (another than this one's).
func (l *Live) Failover(ctx context.Context) (broker.Client, string, error) {
	if len(l.r.Addresses) < 2 {
		return nil, "", fmt.Errorf("one address given: %w", broker.ErrNoFailover)
	}
	next := l.nextNode(ctx, map[string]bool{l.r.Address(): true})
	if next == nil {
		return nil, "", errors.New("no other node of those given answers")
	}
	o, err := NewLive(next, l.purpose)
	if err != nil {
		return nil, "", err
	}
	o.ShareMemory(l)
	return o, next.Address(), nil
}

// nextNode is the first of the addresses not tried yet whose AMQP port and
// management API answer (nil when none does).
func (l *Live) nextNode(ctx context.Context, tried map[string]bool) *Resolved {
	var rest []*Resolved
	for _, a := range l.r.Addresses {
		if !tried[a.Address()] {
			rest = append(rest, a)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	probe := *rest[0]
	probe.Addresses = rest
	next, _, err := Reach(ctx, &probe)
	if err != nil {
		return nil
	}
	out := *next
	out.Addresses = l.r.Addresses
	return &out
}

// requeueWait bounds waiting for a lost connection's deliveries to return
// to their queue.
const requeueWait = 15 * time.Second

// waitReturned waits (bounded by requeueWait) until queue holds at least
// want ready messages, or its depth stops changing for a second.
func (l *Live) waitReturned(ctx context.Context, queue string, want int) {
	deadline := time.Now().Add(requeueWait)
	last, same := int64(-1), 0
	for time.Now().Before(deadline) && ctx.Err() == nil {
		d, err := l.QueueDepths(ctx, []string{queue})
		n, ok := d[queue]
		if err != nil || !ok {
			return
		}
		if n >= int64(want) {
			return
		}
		if n == last {
			if same++; same >= 5 {
				return
			}
		} else {
			last, same = n, 0
		}
		time.Sleep(200 * time.Millisecond)
	}
}
