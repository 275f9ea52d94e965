package rabbit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// Two first peeks of a client at once share its one AMQP 1.0 session: the
// second to open one does not close the first's under its browse (which
// then ended, its messages returned as after a crash, a delivery counted
// each). Five times over, on a fresh client each.
func TestConcurrentFirstAMQP1PeeksShareTheSession(t *testing.T) {
	f := on43(t)
	var qs []string
	for _, name := range []string{"a", "b"} {
		q := f.queue("qq-"+name, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3)})
		f.seedSmall(q, 300, "m")
		f.waitDepth(q, 300)
		qs = append(qs, q)
	}
	for round := 0; round < 5; round++ {
		l := f.live(true)
		var wg sync.WaitGroup
		results := make([]*broker.PeekResult, len(qs))
		errs := make([]error, len(qs))
		for i, q := range qs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = l.Peek(context.Background(), q, broker.PeekOptions{Limit: 300, BodyPreview: 1})
			}()
		}
		wg.Wait()
		for i, q := range qs {
			if errs[i] != nil {
				t.Fatalf("round %d, %s: %v", round, q, errs[i])
			}
			if res := results[i]; len(res.Messages) != 300 || res.Incomplete != "" {
				t.Fatalf("round %d, %s: %d messages, incomplete %q", round, q, len(res.Messages), res.Incomplete)
			}
		}
		for _, q := range qs {
			uncounted(t, f, q, "m", 300)
		}
	}
}

// A browse whose link the broker refuses (its queue is gone) leaves the
// session alone: another browse on it goes on to the end, counting
// nothing (the session used to be closed under it).
func TestARefusedAMQP1LinkLeavesTheSessionAlone(t *testing.T) {
	f := on43(t)
	q := f.queue("qq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3)})
	f.seedSmall(q, 300, "m")
	f.waitDepth(q, 300)
	l := f.live(true)
	started := make(chan struct{})
	type result struct {
		res *broker.PeekResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		read := 0
		res, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: 300, BodyPreview: 1, Each: func(*broker.Message) error {
			if read++; read == 1 {
				close(started)
			}
			time.Sleep(2 * time.Millisecond) // still reading while the other link is refused
			return nil
		}})
		done <- result{res, err}
	}()
	<-started
	if err := rabbit.AttachBrowseForTest(context.Background(), l, brokertest.Name(t, "missing")); err == nil {
		t.Fatal("a browse of a missing queue was attached")
	}
	r := <-done
	if r.err != nil || r.res.Read() != 300 || r.res.Incomplete != "" {
		t.Fatalf("the other browse: %v, read %d, incomplete %q", r.err, r.res.Read(), r.res.Incomplete)
	}
	uncounted(t, f, q, "m", 300)
}
