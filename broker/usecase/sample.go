package usecase

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Sampling: a shared error queue, fed by publishing and named by
// configuration (Watermill's poison queue, Moleculer's FAILED_MESSAGES),
// is tied to its endpoints only by what its messages say (topology's rule
// 9). Discovery reads no message on its own: a peek may cost something
// (on 3.x it marks what it read redelivered), so sampling is asked for
// (topology --sample), and it peeks only the queues no ladder explains
// and nothing consumes, and those whose role discovery inferred (a wait
// queue without a TTL, rule 4, and the main it makes one) that nothing
// consumes: their messages may name queues the graph cannot see them
// return to (amqplib-retry's one shared wait queue and its ready queue,
// whose router sends each message back by header: topology's rule 10).
// The peek's own refusals hold: a wait queue whose read would release
// overdue messages is skipped, saying why. Where the browse costs nothing
// (a stream, a quorum queue on 4.3+ over AMQP 1.0: broker.PeekFree),
// topology samples such queues by default (SampleFree). The client
// remembers what it read
// (Evidence): the snapshot taken next shows the links, and so do the
// plans of every action on that client.

// MaxSampledQueues bounds the queues one sample peeks.
const MaxSampledQueues = 50

// sampleDeadline bounds each queue's peek: a sample never waits long on
// one queue.
const sampleDeadline = 10 * time.Second

// Sampler reads a vhost and peeks its queues.
type Sampler interface {
	broker.Snapshotter
	broker.Peeker
}

// SampledQueue is what sampling read of one queue.
type SampledQueue struct {
	Queue string `json:"queue"`
	Read  int    `json:"read"`
	// FailedIn are the queues its messages failed in, by their
	// framework's headers: the endpoints it is an error queue of.
	FailedIn    []string `json:"failed_in"`
	SideEffects []string `json:"side_effects"`
	// Skipped says why it was not read ("" when it was).
	Skipped string `json:"skipped,omitempty"`
}

// SampleReport is what Sample read.
type SampleReport struct {
	PerQueue int            `json:"per_queue"`
	Queues   []SampledQueue `json:"queues"`
	// Left counts the candidates past MaxSampledQueues, not read.
	Left int `json:"left,omitempty"`
	// Free: sampled unasked (SampleFree), because each browse was free
	// on this broker.
	Free bool `json:"free,omitempty"`
}

// Unasked sampling's bounds (SampleFree): a topology that was not asked
// to read messages reads a few, of a few queues.
const (
	FreePerQueue  = 20
	MaxFreeQueues = 10
)

// SampleFree is Sample unasked: it peeks only the queues whose browse
// costs nothing on snap's broker (broker.PeekFree) and that hold messages
// no earlier peek has told of (a queue whose evidence is remembered is
// not read again), at most FreePerQueue messages of MaxFreeQueues queues.
// nil when there was none to read.
func SampleFree(ctx context.Context, c Sampler, snap *broker.Snapshot) (*SampleReport, error) {
	cand := candidates(snap, func(q topology.Queue) bool {
		return broker.PeekFree(q, snap.BrokerVersion) && q.Messages > 0 && len(q.Seen.FailedIn) == 0 && q.Seen.Look == nil
	})
	if len(cand) == 0 {
		return nil, nil
	}
	rep, err := sample(ctx, c, cand, FreePerQueue, MaxFreeQueues)
	if rep != nil {
		rep.Free = true
	}
	return rep, err
}

// Sample peeks up to perQueue messages of each queue of snap that no
// ladder explains, or whose role discovery inferred, and no consumer works (at most MaxSampledQueues, deepest
// first), so that c learns where its messages failed.
// A peek the broker refuses (a quorum queue near its delivery limit) is
// skipped with its reason; any other failure ends the sample.
func Sample(ctx context.Context, c Sampler, snap *broker.Snapshot, perQueue int) (*SampleReport, error) {
	return sample(ctx, c, candidates(snap, func(topology.Queue) bool { return true }), perQueue, MaxSampledQueues)
}

// candidates are the queues of snap that no ladder explains and nothing
// consumes, and that pass, deepest first.
func candidates(snap *broker.Snapshot, pass func(topology.Queue) bool) []topology.Queue {
	var cand []topology.Queue
	for _, q := range snap.Topology.Queues {
		// A queue whose role discovery inferred is read too: a wait queue
		// without a TTL (the peek is refused, and says so, where reading
		// past its head would release overdue messages) and a main that
		// only such a guess makes one (a shared ready queue).
		explained := slices.ContainsFunc(snap.Ladders, func(l retry.Ladder) bool {
			inferred := slices.Contains(l.WaitQueues, q.Name) || l.Main == q.Name && len(l.InferredFrom) > 0
			return l.Explains(q.Name) && !inferred
		})
		// The API's depths lag publishes by seconds: an empty-looking queue
		// is read too (a peek of an empty queue touches nothing), after
		// the deeper ones.
		if !explained && !retry.OwnedByLadder(q.Name) && (q.ConsumersUnknown || q.Consumers == 0) && pass(q) {
			cand = append(cand, q)
		}
	}
	slices.SortStableFunc(cand, func(a, b topology.Queue) int { return int(min(max(b.Ready-a.Ready, -1), 1)) })
	return cand
}

// sample peeks up to perQueue messages of the first maxQueues of cand.
func sample(ctx context.Context, c Sampler, cand []topology.Queue, perQueue, maxQueues int) (*SampleReport, error) {
	rep := &SampleReport{PerQueue: perQueue, Queues: []SampledQueue{}}
	if len(cand) > maxQueues {
		rep.Left = len(cand) - maxQueues
		cand = cand[:maxQueues]
	}
	for _, q := range cand {
		s := SampledQueue{Queue: q.Name, FailedIn: []string{}, SideEffects: []string{}}
		res, err := c.Peek(ctx, q.Name, broker.PeekOptions{Limit: perQueue, Deadline: sampleDeadline, Each: func(m *broker.Message) error {
			if m.FailedIn != "" && !slices.Contains(s.FailedIn, m.FailedIn) {
				s.FailedIn = append(s.FailedIn, m.FailedIn)
			}
			return nil
		}})
		var refused *broker.PeekRefused
		switch {
		case errors.As(err, &refused):
			s.Skipped = refused.Why
		case errors.Is(err, broker.ErrNotFound):
			s.Skipped = "deleted since the read"
		case err != nil:
			return rep, fmt.Errorf("sample %s: %w", q.Name, err)
		default:
			s.Read = res.Read()
			s.SideEffects = append(s.SideEffects, res.SideEffects...)
		}
		slices.Sort(s.FailedIn)
		rep.Queues = append(rep.Queues, s)
	}
	return rep, nil
}
