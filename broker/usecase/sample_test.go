package usecase

import (
	"context"
	"slices"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/topology"
)

// peekRecorder is a Sampler that records which queues were peeked.
type peekRecorder struct {
	broker.Snapshotter
	peeked []string
}

func (p *peekRecorder) Peek(_ context.Context, queue string, _ broker.PeekOptions) (*broker.PeekResult, error) {
	p.peeked = append(p.peeked, queue)
	return &broker.PeekResult{Queue: queue, SideEffects: []string{}}, nil
}

// Unasked, only the queues whose browse is free on the broker are read
// (streams; quorum queues from 4.3), and of them only those holding
// messages that no earlier peek told of.
func TestSampleFreeReadsOnlyFreeUnexplainedQueues(t *testing.T) {
	snap := func(version string) *broker.Snapshot {
		return &broker.Snapshot{BrokerVersion: version, Topology: topology.Vhost{Queues: []topology.Queue{
			{Name: "classic", Type: topology.QueueClassic, Messages: 5, Ready: 5},
			{Name: "quorum", Type: topology.QueueQuorum, Messages: 4, Ready: 4},
			{Name: "stream", Type: topology.QueueStream, Messages: 3, Ready: 3},
			{Name: "empty-stream", Type: topology.QueueStream},
			{Name: "consumed", Type: topology.QueueStream, Messages: 3, Ready: 3, Consumers: 1},
			{Name: "known", Type: topology.QueueQuorum, Messages: 3, Ready: 3, Seen: topology.Seen{FailedIn: []string{"orders"}}},
			{Name: "looked", Type: topology.QueueQuorum, Messages: 3, Ready: 3, Seen: topology.Seen{Look: &topology.Look{Read: 3}}},
		}}}
	}
	for _, tt := range []struct {
		version string
		want    []string
	}{
		{"4.3.6", []string{"quorum", "stream"}},
		{"4.0.5", []string{"stream"}},
		{"3.10.25", []string{"stream"}},
	} {
		p := &peekRecorder{}
		rep, err := SampleFree(context.Background(), p, snap(tt.version))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.peeked, tt.want) {
			t.Errorf("%s: peeked %q, want %q", tt.version, p.peeked, tt.want)
		}
		if rep == nil || !rep.Free || rep.PerQueue != FreePerQueue || len(rep.Queues) != len(tt.want) {
			t.Errorf("%s: report %+v", tt.version, rep)
		}
	}
	// Nothing free to read: no report, no peek.
	p := &peekRecorder{}
	only := &broker.Snapshot{BrokerVersion: "3.10.25", Topology: topology.Vhost{Queues: []topology.Queue{{Name: "classic", Messages: 5, Ready: 5}}}}
	if rep, err := SampleFree(context.Background(), p, only); rep != nil || err != nil || len(p.peeked) != 0 {
		t.Errorf("3.10 classic only: %+v %v, peeked %q", rep, err, p.peeked)
	}
}
