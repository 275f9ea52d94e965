package rabbit

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// A browse starved of CPU (a loaded machine: two cores, a CPU burner and
// the whole suite beside it) reads every message all the same. Its last
// consumer is given the rest of the queue at once, so the broker has
// nothing ready while the deliveries still wait in the AMQP client's own
// buffer, unread; each pause of the browse longer than peekIdle lets its
// timers fire with those deliveries waiting. Such a pause once ended the
// browse there, without a word: a dump wrote 1,366 of 3,000 messages and
// exited 0 (seen on a starved process; a replay test then missed the rest
// of its lines). Here the pauses are made, and the read must be whole.
func TestBrowseStarvedOfCPUReadsEveryMessage(t *testing.T) {
	r := requireBroker(t)
	const n = 2000
	q := browseQueue(t, r, "classic", n)
	prevIdle := peekIdle
	peekIdle = 40 * time.Millisecond
	// Past the first two consumers (64, then 512), in the last one's: the
	// browse pauses before each of its next 40 waits (the event it then
	// takes is chosen at random among those ready: idle, probe, delivery).
	pauses := 0
	browseStarve = func(read int) {
		if read >= 700 && pauses < 40 {
			pauses++
			time.Sleep(60 * time.Millisecond)
		}
	}
	t.Cleanup(func() { peekIdle, browseStarve = prevIdle, nil })
	l, err := NewLive(r, "test browse starved")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	res, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: n})
	if err != nil {
		t.Fatal(err)
	}
	got := browseIDs(res)
	if !slices.Equal(got, wantIDs(n)) {
		t.Fatalf("read %d of %d after %d pauses (incomplete: %q)", len(got), n, pauses, res.Incomplete)
	}
	if res.Incomplete != "" {
		t.Errorf("incomplete: %s", res.Incomplete)
	}
	if pauses < 40 {
		t.Errorf("paused %d times of 40: the browse was not starved as meant", pauses)
	}
}
