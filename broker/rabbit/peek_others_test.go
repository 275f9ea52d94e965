package rabbit_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ladder-tui/ladder/broker"
)

// Two ladders peek the same 2,000-message DLQ (no dead-letter exchange) at
// once, as two people on `ladder serve` do. The broker keeps every message
// throughout; each reader's consumer holds, unseen by the other, what it
// was delivered. Neither may say messages were dropped or released: what
// left the queue during a peek is what the other reader took, and a view
// that missed some names the other reader and says it is partial (its
// positions count among what was ready to it). Every message is reported
// by one of them.
func TestTwoPeeksAtOnceReportNoLoss(t *testing.T) {
	t.Parallel() // on names of its own
	f := newFixture(t)
	q := f.queue("dlq", nil)
	const n = 2000
	f.publishN(q, n, "m")
	a, b := f.live(true), f.live(true)
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		results [2]*broker.PeekResult
		errs    [2]error
	)
	for i, l := range []interface {
		Peek(context.Context, string, broker.PeekOptions) (*broker.PeekResult, error)
	}{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = l.Peek(context.Background(), q, broker.PeekOptions{Limit: n, BodyPreview: 1})
		}()
	}
	close(start)
	wg.Wait()
	seen := map[string]bool{}
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("reader %d: %v", i, errs[i])
		}
		effects := strings.Join(res.SideEffects, " | ")
		if res.Released != 0 || res.ReleasedTo != "" || strings.Contains(effects, "dropped") {
			t.Errorf("reader %d claims a loss: released %d to %q; side effects: %s", i, res.Released, res.ReleasedTo, effects)
		}
		whole := len(res.Messages) == n
		for j, m := range res.Messages {
			seen[m.Properties.MessageID] = true
			if whole && m.Properties.MessageID != "m-"+itoa(j) {
				whole = false
			}
		}
		if whole {
			continue // it saw the whole queue from its head
		}
		// It missed some: the other reader held them, and it says so.
		if res.Others == nil {
			t.Errorf("reader %d saw %d of %d (from %v) without naming the other reader: others %+v; side effects: %s",
				i, len(res.Messages), n, firstID(res), res.Others, effects)
		}
		if !strings.Contains(strings.Join(res.Partial, " "), "another reader") {
			t.Errorf("reader %d: partial %q does not say another reader held messages", i, res.Partial)
		}
	}
	if len(seen) != n {
		t.Errorf("the two peeks reported %d distinct messages of %d", len(seen), n)
	}
	if d := f.depth(q); d != n {
		t.Errorf("depth %d after the peeks, want %d", d, n)
	}
}

func firstID(res *broker.PeekResult) string {
	if len(res.Messages) == 0 {
		return "nothing"
	}
	return res.Messages[0].Properties.MessageID
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{digits[i%10]}, b...)
	}
	return string(b)
}
