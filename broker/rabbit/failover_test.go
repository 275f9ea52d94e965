package rabbit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// A move whose node goes away (its connections closed, nothing listening
// there any more: a killed node) goes on through the next address given
// and finishes: every message in the target, none lost, duplicates no more
// than the report says, the reconnection in its notes. The first address
// is a proxy to the test broker, the second the broker itself: one broker
// playing two nodes.
func TestMoveGoesOnThroughAnotherNode(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	const n = 5000
	f.publishN(src, n, "f")
	p, l := twoNodes(t, f)
	direct := *f.r
	killed := false
	var maxDone int
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}},
		func(pr broker.MoveProgress) {
			if !killed && pr.Moved > 500 {
				killed = true
				p.StopListening()
				p.Close() // the node is gone: FIN on every connection
			}
			if killed && pr.Done < maxDone {
				t.Errorf("progress went back from %d to %d done across the reconnection", maxDone, pr.Done)
			}
			maxDone = max(maxDone, pr.Done)
		})
	if !killed {
		t.Fatalf("the move ended before the node could go: %+v %v", rep, err)
	}
	if err != nil {
		t.Fatalf("move: %v (notes %q)", err, rep.Notes)
	}
	want := "the move went on through " + direct.AMQP.Host
	if !strings.Contains(strings.Join(rep.Notes, "\n"), want) {
		t.Errorf("notes %q, want %q", rep.Notes, want)
	}
	f.waitStable(src)
	inDst := idsOf(f.drain(dst, time.Second))
	left := idsOf(f.drain(src, time.Second))
	missing, dups := 0, 0
	for i := range n {
		id := fmt.Sprintf("f-%d", i)
		switch c := inDst[id]; {
		case c == 0 && left[id] == 0:
			missing++
		case c == 0:
			t.Errorf("%s left in the source", id)
		default:
			dups += c - 1 + left[id]
		}
	}
	t.Logf("moved %d, %d duplicates, at most %d reported", rep.Moved, dups, rep.DuplicatesAtMost)
	if missing > 0 {
		t.Fatalf("%d messages lost", missing)
	}
	if dups > rep.DuplicatesAtMost {
		t.Errorf("%d duplicates, the report says at most %d", dups, rep.DuplicatesAtMost)
	}
}

// twoNodes is a live client given two addresses: a proxy to the test
// broker first (the node a test kills), the broker itself second.
func twoNodes(t *testing.T, f *fixture) (*brokertest.Proxy, *rabbit.Live) {
	t.Helper()
	p := brokertest.NewProxy(t, f.r.AMQP.Host)
	user, pass := brokertest.AMQPLogin(t, f.r)
	apiUser, apiPass := brokertest.APILogin(t, f.r)
	cfg := rabbit.Config{
		AMQPURL: fmt.Sprintf("amqp://%s:%s@%s/,amqp://%s:%s@%s/", user, pass, p.Addr(), user, pass, f.r.AMQP.Host),
		APIURL:  strings.Replace(f.r.APIURL.String(), "://", "://"+apiUser+":"+apiPass+"@", 1),
		Vhost:   f.r.Vhost,
	}
	r, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if r.Address() != p.Addr() || len(r.Addresses) != 2 {
		t.Fatalf("addresses %v, want the proxy first", r.Addresses)
	}
	l, err := rabbit.NewLive(r, "test failover")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return p, l
}

// A replay whose node goes away goes on through the next address: every
// line published, duplicates no more than the report says, the
// reconnection in its notes.
func TestReplayGoesOnThroughAnotherNode(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dst := f.queue("dst", nil)
	const n = 5000
	file := writeDump(t, n, "fo", nil)
	p, l := twoNodes(t, f)
	killed := false
	rep, err := usecase.Replay(context.Background(), gate.New(l, gate.Options{}), usecase.ReplayRequest{File: file, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}},
		func(pr broker.MoveProgress) {
			if !killed && pr.Moved > 500 {
				// In the middle of the next batch's confirms: lines
				// published but unconfirmed are in doubt.
				killed = true
				p.After(100, func() { p.StopListening(); p.Close() })
			}
		})
	if !killed {
		t.Fatalf("the replay ended before the node could go: %+v %v", rep, err)
	}
	if err != nil {
		t.Fatalf("replay: %v (notes %q)", err, rep.Notes)
	}
	if want := "the replay went on through " + f.r.AMQP.Host; !strings.Contains(strings.Join(rep.Notes, "\n"), want) {
		t.Errorf("notes %q, want %q", rep.Notes, want)
	}
	got := idsOf(f.drain(dst, time.Second))
	missing, dups := 0, 0
	for i := range n {
		c := got[fmt.Sprintf("fo-%d", i)]
		if c == 0 {
			missing++
		}
		dups += max(0, c-1)
	}
	t.Logf("published %d of %d, %d duplicates, at most %d reported", rep.Moved, rep.Requested, dups, rep.DuplicatesAtMost)
	if missing > 0 {
		t.Fatalf("%d lines not published", missing)
	}
	if dups > rep.DuplicatesAtMost || rep.Moved < n {
		t.Errorf("%d duplicates (at most %d reported), %d published of %d", dups, rep.DuplicatesAtMost, rep.Moved, n)
	}
}
