package rabbit_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/topology"
)

// What the one analysis says of a real broker's queues (issue 32): every
// face reads it from a client's snapshot (the TUI and ladder serve every
// refresh, topology once or twice with --over).

func findingOn(s *broker.Snapshot, code, queue string) (topology.Finding, bool) {
	i := slices.IndexFunc(s.Findings, func(f topology.Finding) bool { return f.Code == code && f.Queue == queue })
	if i < 0 {
		return topology.Finding{}, false
	}
	return s.Findings[i], true
}

// snapshotUntil reads l until ok accepts a snapshot, within a generous
// bound (the management API's figures lag by a stats interval).
func snapshotUntil(t *testing.T, l *rabbit.Live, what string, ok func(*broker.Snapshot) bool) *broker.Snapshot {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		s, err := l.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("never %s; last findings %+v", what, s.Findings)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// holWait declares jobs (dead-lettering into jobs.wait) and jobs.wait (no
// TTL, dead-lettering back to jobs), and publishes into jobs.wait a head
// due in an hour, timestamped headAge ago, then n messages of ttl behind
// it: a wait queue fed by direct publishes with expirations of their own,
// and reachable by dead-lettering too.
func holWait(f *fixture, headAge time.Duration, n int, ttl string) (main, wait string) {
	main, wait = "jobs", "jobs.wait"
	f.declareQueue(main, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": wait})
	f.declareQueue(wait, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": main})
	now := time.Now()
	f.publish("", wait, amqp.Publishing{MessageId: "head", Expiration: "3600000", Timestamp: now.Add(-headAge), Body: []byte("later")})
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: "m" + string(rune('a'+i%26)), Expiration: ttl, Timestamp: now, Body: []byte("soon")}
	}
	f.publish("", wait, msgs...)
	f.waitDepth(wait, n+1)
	return main, wait
}

// A wait queue fed by direct publishes with per-message TTLs behind a
// longer head: unlooked, the dead-letter route into it is said as a risk
// (no "N messages here never return"); once a peek saw the blocked
// messages the diagnosis is head-of-line blocking with their count, never
// "dead-lettering strips expiration"; after ladder unblock freed them the
// finding clears.
func TestHoLBlockedQueueDiagnosedFromALookAndClearedByUnblock(t *testing.T) {
	t.Parallel()
	f := newVhostFixture(t)
	// Ten minutes each: not due while the test looks, so the peek
	// releases none of them (a read releases only what is overdue).
	main, wait := holWait(f, time.Minute, 300, "600000")
	live := f.live(false)

	s := snapshotUntil(t, live, "saw 301 messages in "+wait, func(s *broker.Snapshot) bool {
		q, ok := s.Queue(wait)
		return ok && q.Messages == 301
	})
	st, ok := findingOn(s, topology.CodeStuck, wait)
	if !ok || st.Severity != topology.SeverityWarning || strings.Contains(st.Message, "301 messages here never return") || !strings.Contains(st.Message, "a peek tells") {
		t.Fatalf("unlooked: %+v, want the risk said as one", st)
	}
	if _, ok := findingOn(s, topology.CodeHoLBlocked, wait); ok {
		t.Fatalf("hol-blocked before anything showed it: %+v", s.Findings)
	}

	res, err := live.Peek(context.Background(), wait, broker.PeekOptions{Limit: 1000, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Read() != 301 || res.Released != 0 {
		t.Fatalf("peek read %d, released %d: want all 301, none released", res.Read(), res.Released)
	}
	s = snapshotUntil(t, live, "hol-blocked on "+wait, func(s *broker.Snapshot) bool {
		_, ok := findingOn(s, topology.CodeHoLBlocked, wait)
		return ok
	})
	hb, _ := findingOn(s, topology.CodeHoLBlocked, wait)
	if hb.Severity != topology.SeverityError || !strings.HasPrefix(hb.Message, "300 messages wait behind a longer expiration at position 0") {
		t.Errorf("hol-blocked %+v", hb)
	}
	for _, fd := range s.Findings {
		if fd.Queue == wait && (fd.Code == topology.CodeStuck || strings.Contains(fd.Message, "strips")) {
			t.Errorf("a stuck diagnosis for messages with their own expiration: %+v", fd)
		}
	}

	// ladder unblock, as the CLI and the TUI build it: the head holding
	// the rest back goes to the main queue when it is due (through
	// ladder's own delay queue); the 300 then leave on time.
	req, _, _, err := usecase.PrepareUnblockWith(context.Background(), live, wait, usecase.UnblockOptions{Look: 1000, ForcePeek: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := live.Move(context.Background(), req, nil)
	if err != nil || rep.Moved != 1 || !slices.Equal(rep.MovedIDs, []string{"head"}) {
		t.Fatalf("unblock moved %+v: %v, want the head", rep, err)
	}
	s = snapshotUntil(t, live, "hol-blocked cleared on "+wait, func(s *broker.Snapshot) bool {
		q, ok := s.Queue(wait)
		_, blocked := findingOn(s, topology.CodeHoLBlocked, wait)
		return ok && q.Messages == 300 && !blocked
	})
	if fd, ok := findingOn(s, topology.CodeStuck, wait); ok {
		t.Errorf("after unblock: %+v", fd)
	}
	_ = main
}

// Without a peek, what topology --over sees: a client that reads a wait
// queue twice, a minute apart, while messages keep arriving and none leave
// behind a head published minutes ago, reports hol-blocked on the second
// read (the first knows nothing of time).
func TestHoLBlockedFromTwoReadsAMinuteApart(t *testing.T) {
	t.Parallel()
	f := newVhostFixture(t)
	_, wait := holWait(f, 3*time.Minute, 5, "5000")
	live := f.live(true)
	first := snapshotUntil(t, live, "saw 6 messages in "+wait, func(s *broker.Snapshot) bool {
		q, ok := s.Queue(wait)
		return ok && q.Messages == 6
	})
	if _, ok := findingOn(first, topology.CodeHoLBlocked, wait); ok {
		t.Fatalf("hol-blocked from one read: %+v", first.Findings)
	}
	// Messages keep arriving, as a retrying service sends them.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				f.publish("", wait, amqp.Publishing{Expiration: "5000", Timestamp: time.Now(), Body: []byte("again")})
			}
		}
	}()
	defer func() { close(stop); <-done }()
	time.Sleep(65 * time.Second) // topology --over 65s
	second, err := live.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hb, ok := findingOn(second, topology.CodeHoLBlocked, wait)
	if !ok || !strings.Contains(hb.Message, "nothing left for 1m") {
		t.Fatalf("after a minute: %+v, want hol-blocked saying nothing left for a minute", second.Findings)
	}
}

// IN/s of a DLQ fed by dead-lettering (the broker counts no publishes into
// it) is within 5 % of the rate messages reached it, over a minute of 2 s
// refreshes: it was 15.5 for 19.5/s when poll times stood for the times
// of the statistics' steps.
func TestDLQInflowWithinFivePercentOverAMinute(t *testing.T) {
	t.Parallel()
	f := newVhostFixture(t)
	f.declareQueue("feed.dlq", nil)
	// Every message expires at once into the DLQ.
	f.declareQueue("feed", amqp.Table{"x-message-ttl": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "feed.dlq"})
	live := f.live(true)

	const rate = 19.5
	var sent atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		ch := f.channel()
		defer ch.Close()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			// Catch up with the clock: a starved process sends late, not less.
			want := int64(time.Since(start).Seconds() * rate)
			for sent.Load() < want {
				if err := ch.PublishWithContext(context.Background(), "", "feed", false, false, amqp.Publishing{Body: []byte("x")}); err != nil {
					return
				}
				sent.Add(1)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	var s *broker.Snapshot
	for time.Since(start) < 80*time.Second {
		var err error
		if s, err = live.Snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
	}
	q, _ := s.Queue("feed.dlq")
	// What was sent over the last minute, as the broker's own count of
	// the DLQ's depth grew by it.
	if !q.Rates.InKnown || q.Rates.InSource != topology.InFromDepth {
		t.Fatalf("feed.dlq inflow %+v", q.Rates)
	}
	if d := q.Rates.In/rate - 1; d < -0.05 || d > 0.05 {
		t.Fatalf("feed.dlq IN/s %.2f, fed at %.1f/s: off by %.1f%%", q.Rates.In, rate, d*100)
	}
}
