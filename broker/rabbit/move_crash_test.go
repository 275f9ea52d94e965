package rabbit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// depthOrGone is a queue's ready count, 0 when it no longer exists.
func (f *fixture) depthOrGone(queue string) int {
	f.t.Helper()
	ch := f.channel()
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		if strings.Contains(err.Error(), "NOT_FOUND") {
			return 0
		}
		f.t.Fatalf("depth %s: %v", queue, err)
	}
	return q.Messages
}

// Issue 20, case 5: a delayed move, then kill -9 of the broker while
// ladder's wait queue dead-letters into the target. The wait queue is a
// quorum queue that dead-letters at least once (RabbitMQ 3.10+): after the
// restart every message reaches the target; none is lost. (A classic wait
// queue dead-letters at most once: 2,086 of 50,000 were lost so.) The
// messages are persistent, as they must be to outlive a restart in the
// classic target. LADDER_TEST_CRASH_N sets how many (default 10,000: the
// kill lands mid-dead-lettering all the same, in half the suite's time).
func TestDelayedMoveLosesNothingWhenTheBrokerIsKilledDuringTheWait(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	node := brokertest.RequireOwnNode(t)
	r := brokertest.OwnVhostOn(t, node.Resolved)
	f := fixtureOn(t, r)
	n := 10000
	if s := os.Getenv("LADDER_TEST_CRASH_N"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			n = v
		}
	}
	// Longer than the move takes, with room for a busy machine (20,000
	// took 21 s with both cores busy): the kill must land in the wait.
	delay := time.Duration(max(30, n/500)) * time.Second
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publishN(src, n, "m")

	l, err := rabbit.NewLive(r, "test crash")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := time.Now()
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Delay: delay}, nil)
	took := time.Since(start)
	if err != nil || rep.Moved != n || rep.Via[topology.ViaDelayQueue] != n || rep.DuplicatesPossible {
		t.Fatalf("move: %+v %v", rep, err)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), moveplan.AtLeastOnceNote) {
		t.Errorf("the report does not say a crash may deliver twice: %q", rep.Notes)
	}
	if took > delay {
		// The first messages moved are due before the last are: what
		// matters is that the kill lands while some still wait (checked
		// below, seen < n), not when the move ended.
		t.Logf("the move took %v, longer than its delay %v", took, delay)
	}
	l.Close()

	// Kill the node once the wait queue has dead-lettered some, not all.
	seen := 0
	if !brokertest.WaitFor(delay+2*time.Minute, func() bool { seen = f.depth(dst); return seen >= n/10 }) {
		t.Fatalf("nothing reached %s after the delay", dst)
	}
	node.Kill(t)
	node.Start(t)
	t.Logf("moved %d in %v with a %v delay; killed the broker with %d of %d in the target", n, took.Round(time.Millisecond), delay, seen, n)
	if seen >= n {
		t.Fatalf("every message had reached the target before the kill: the kill did not land during the wait")
	}

	f = fixtureOn(t, r)
	wait := retry.ReplayQueueName("", dst, delay.Milliseconds())
	brokertest.WaitFor(3*time.Minute, func() bool { return f.depth(dst) >= n && f.depthOrGone(wait) == 0 })
	got := f.countAll(dst, src)
	if left := f.depthOrGone(wait); left > 0 {
		for id, c := range f.countAll(wait) {
			got[id] += c
		}
	}
	missing, dups := 0, 0
	for i := range n {
		switch c := got["m-"+strconv.Itoa(i)]; {
		case c == 0:
			missing++
		case c > 1:
			dups += c - 1
		}
	}
	t.Logf("after the restart: %d of %d ids in the target, %d lost, %d delivered twice (at-least-once dead-lettering; the move reported duplicates_possible=%v, at most %d)",
		len(got), n, missing, dups, rep.DuplicatesPossible, rep.DuplicatesAtMost)
	if missing > 0 {
		t.Errorf("%d of %d lost", missing, n)
	}
}

// ladder's wait queue dead-letters at least once on 3.10 and 4.x: when its
// target is gone by the time the delay runs out, it keeps the messages
// (messages_dlx) rather than drop them, and delivers them once a queue
// takes them again (the broker retries within minutes: not waited for
// here). A classic wait queue would have dropped them.
func TestLadderWaitQueueKeepsDeadLettersItCannotDeliver(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newVhostFixture(t)
	src := f.queue("src", nil)
	dst := brokertest.Name(t, "dst")
	f.declareQueue(dst, nil)
	const n = 5
	f.publishN(src, n, "k")
	l := f.live(false)
	delay := 2 * time.Second
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Delay: delay}, nil)
	if err != nil || rep.Moved != n || len(rep.Routes) != 1 || rep.Routes[0].Via != topology.ViaDelayQueue {
		t.Fatalf("move %+v %v", rep, err)
	}
	wait := rep.Routes[0].Through
	f.deleteQueue(dst) // the target is gone when the delay runs out
	var held int
	ok := brokertest.WaitFor(60*time.Second, func() bool {
		var q struct {
			Type        string `json:"type"`
			MessagesDLX int    `json:"messages_dlx"`
		}
		req, _ := http.NewRequest(http.MethodGet, f.r.APIURL.String()+"/api/queues/"+url.PathEscape(f.r.Vhost)+"/"+url.PathEscape(wait), nil)
		if err := f.r.SetAPIAuth(req); err != nil {
			return false
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		if json.NewDecoder(resp.Body).Decode(&q) != nil || q.Type != "quorum" {
			return false
		}
		held = q.MessagesDLX
		return held == n
	})
	if !ok {
		t.Fatalf("%s holds %d dead letters awaiting delivery, want %d", wait, held, n)
	}
}
