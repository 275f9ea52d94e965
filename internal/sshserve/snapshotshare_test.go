package sshserve

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// countingReader is a reader whose reads are counted and, while gate is
// not nil, held until it is closed.
type countingReader struct {
	reads atomic.Int32
	gate  chan struct{}
	err   error
	ctxs  chan context.Context
}

func (r *countingReader) Snapshot(ctx context.Context) (*broker.Snapshot, error) {
	n := r.reads.Add(1)
	if r.ctxs != nil {
		r.ctxs <- ctx
	}
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return &broker.Snapshot{Vhost: "v", BrokerVersion: string(rune('0' + n))}, nil
}

// viewerClient is a session's own client: only its vhost and mutations
// are asked of it.
type viewerClient struct {
	broker.Client
	vhost string
}

func (c *viewerClient) Vhost() string { return c.vhost }
func (c *viewerClient) Snapshot(context.Context) (*broker.Snapshot, error) {
	return nil, errors.New("a viewer's own client was read")
}

// Twenty viewers asking at once, and again within the refresh, cost one
// read; the reader's result is what each of them gets.
func TestSnapshotShareReadsOnceForManyViewers(t *testing.T) {
	r := &countingReader{gate: make(chan struct{})}
	s := NewSnapshotShare(context.Background(), r, "v", time.Hour)
	var wg sync.WaitGroup
	got := make([]*broker.Snapshot, 20)
	for i := range got {
		v := s.Viewer(&viewerClient{vhost: "v"})
		wg.Go(func() {
			snap, err := v.Snapshot(context.Background())
			if err != nil {
				t.Error(err)
			}
			got[i] = snap
		})
	}
	for s.Reads() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(r.gate)
	wg.Wait()
	for i, g := range got {
		if g != got[0] || g == nil {
			t.Fatalf("viewer %d got %p, viewer 0 %p", i, g, got[0])
		}
	}
	again, _ := s.Viewer(&viewerClient{vhost: "v"}).Snapshot(context.Background())
	if again != got[0] || r.reads.Load() != 1 || s.Reads() != 1 {
		t.Fatalf("%d reads for 21 asks within a refresh (want 1)", r.reads.Load())
	}
}

// A read older than most of a refresh is read again.
func TestSnapshotShareReadsAgainOnceStale(t *testing.T) {
	r := &countingReader{}
	s := NewSnapshotShare(context.Background(), r, "v", 20*time.Millisecond)
	v := s.Viewer(&viewerClient{vhost: "v"})
	first, _ := v.Snapshot(context.Background())
	time.Sleep(20 * time.Millisecond)
	second, _ := v.Snapshot(context.Background())
	if first == second || r.reads.Load() != 2 {
		t.Fatalf("%d reads a refresh apart (want 2)", r.reads.Load())
	}
}

// An action's end (the gate's Changed hook: Invalidate) makes every
// viewer's next snapshot a new read, and a read begun before it is not
// served after it.
func TestSnapshotShareMutationsMakeTheNextReadNew(t *testing.T) {
	r := &countingReader{}
	s := NewSnapshotShare(context.Background(), r, "v", time.Hour)
	mover, other := s.Viewer(&viewerClient{vhost: "v"}), s.Viewer(&viewerClient{vhost: "v"})
	before, _ := other.Snapshot(context.Background())
	if same, _ := other.Snapshot(context.Background()); same != before {
		t.Fatal("a second look made a new read")
	}
	s.Invalidate()
	after, _ := other.Snapshot(context.Background())
	if after == before || r.reads.Load() != 2 {
		t.Fatalf("after an action: %d reads", r.reads.Load())
	}

	// A read under way when the move ends is not joined.
	r.gate = make(chan struct{})
	s.Invalidate()
	old := make(chan *broker.Snapshot)
	go func() { snap, _ := other.Snapshot(context.Background()); old <- snap }()
	for r.reads.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	s.Invalidate()
	fresh := make(chan *broker.Snapshot)
	go func() { snap, _ := mover.Snapshot(context.Background()); fresh <- snap }()
	for r.reads.Load() < 4 {
		time.Sleep(time.Millisecond)
	}
	close(r.gate)
	o, f := <-old, <-fresh
	if o == f || f.BrokerVersion != "4" {
		t.Fatalf("after the mutation a viewer got read %s (want the 4th)", f.BrokerVersion)
	}
	if last, _ := other.Snapshot(context.Background()); last != f {
		t.Fatalf("the share kept read %s, not the one begun after the mutation", last.BrokerVersion)
	}
}

// A viewer leaving mid-read does not fail the others' wait; the read runs
// under the share's context with the deadline of the viewer that began it.
func TestSnapshotShareViewerLeavingMidRead(t *testing.T) {
	r := &countingReader{gate: make(chan struct{}), ctxs: make(chan context.Context, 1)}
	base, stop := context.WithCancel(context.Background())
	defer stop()
	s := NewSnapshotShare(base, r, "v", time.Hour)
	leaving, leave := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	errc := make(chan error, 1)
	go func() { _, err := s.Snapshot(leaving); errc <- err }()
	rctx := <-r.ctxs
	if d, ok := rctx.Deadline(); !ok || !d.Equal(func() time.Time { d, _ := leaving.Deadline(); return d }()) {
		t.Errorf("the read's deadline %v %v, not the viewer's", d, ok)
	}
	staying := make(chan *broker.Snapshot)
	go func() { snap, _ := s.Snapshot(context.Background()); staying <- snap }()
	leave()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the leaving viewer: %v", err)
	}
	if rctx.Err() != nil {
		t.Fatal("the read stopped when the viewer that began it left")
	}
	close(r.gate)
	if snap := <-staying; snap == nil || r.reads.Load() != 1 {
		t.Fatalf("the staying viewer got %v after %d reads", snap, r.reads.Load())
	}
	stop()
}

// An error is shared as a snapshot is: the broker is not asked again by
// each viewer.
func TestSnapshotShareSharesErrors(t *testing.T) {
	r := &countingReader{err: errors.New("api down")}
	s := NewSnapshotShare(context.Background(), r, "v", time.Hour)
	for range 5 {
		if _, err := s.Snapshot(context.Background()); err == nil || err.Error() != "api down" {
			t.Fatalf("err %v", err)
		}
	}
	if r.reads.Load() != 1 {
		t.Fatalf("%d reads of a failing broker", r.reads.Load())
	}
}

// A client of another vhost is not a viewer.
func TestSnapshotShareLeavesOtherVhostsAlone(t *testing.T) {
	s := NewSnapshotShare(context.Background(), &countingReader{}, "v", time.Hour)
	c := &viewerClient{vhost: "w"}
	if s.Viewer(c) != broker.Client(c) {
		t.Fatal("a client of another vhost was given the share's snapshots")
	}
}

// Stats count the share's reads as the metrics report them: begun, ended,
// failed, their time, and when the last good one ended.
func TestSnapshotShareStats(t *testing.T) {
	r := &countingReader{err: errors.New("api down")}
	s := NewSnapshotShare(context.Background(), r, "v", time.Hour)
	_, _ = s.Snapshot(context.Background())
	if st := s.Stats(); st.Reads != 1 || st.Done != 1 || st.Errors != 1 || !st.LastGood.IsZero() {
		t.Fatalf("after a failed read: %+v", st)
	}
	r.err = nil
	s.Invalidate()
	before := time.Now()
	if _, err := s.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _ = s.Snapshot(context.Background()) // fresh: shared, not read
	if st := s.Stats(); st.Reads != 2 || st.Done != 2 || st.Errors != 1 || st.LastGood.Before(before) || st.Seconds <= 0 {
		t.Fatalf("after a good read: %+v", st)
	}
}
