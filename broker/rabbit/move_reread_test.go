package rabbit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// A move reads its targets' policies again as it runs; through a slow
// management API it keeps moving meanwhile. The API here holds each
// policies listing the move asks for while it runs until the move has
// moved 100 more messages (or the move gives the listing up): a move that
// waited on the listing would never get its answer (it reads the API in
// its loop, so nothing moves while it waits).
func TestMoveKeepsMovingWhileTheAPIIsSlow(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	const n = 3000
	f.publishN(src, n, "m")

	var armed atomic.Bool
	var moved atomic.Int64
	var held, answered atomic.Int64 // listings held, and answered once the move went on
	r := viaAPI(t, f.r, func(w http.ResponseWriter, req *http.Request) bool {
		if !armed.Load() || !strings.HasPrefix(req.URL.Path, "/api/policies/") {
			return false
		}
		held.Add(1)
		from := moved.Load()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-req.Context().Done():
				return true // given up on
			case <-tick.C:
				if moved.Load() >= min(from+100, n) {
					answered.Add(1)
					return false
				}
			}
		}
	})
	l, err := rabbit.NewLive(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := time.Now()
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Rate: 1000},
		func(p broker.MoveProgress) {
			moved.Store(int64(p.Moved))
			armed.Store(true) // the move's own listings, not the setup's
		})
	if err != nil || rep.Moved != n {
		t.Fatalf("move: %v, moved %d of %d", err, rep.Moved, n)
	}
	t.Logf("moved %d in %v (1000/s asked); %d policies listings held, %d answered once the move had gone on", rep.Moved, time.Since(start).Round(time.Millisecond), held.Load(), answered.Load())
	if held.Load() == 0 {
		t.Fatal("the move never listed the policies while it ran")
	}
	if answered.Load() == 0 {
		t.Errorf("no policies listing saw the move go on while it waited for the API")
	}
	f.waitDepth(dst, n)
	everyOnce(t, f.countAll(src, dst), "m", n)
}

// viaAPI is r with its management API through a proxy of the test's own:
// hook sees each request first and answers it itself when it returns true.
func viaAPI(t *testing.T, r *rabbit.Resolved, hook func(http.ResponseWriter, *http.Request) bool) *rabbit.Resolved {
	t.Helper()
	rp := httputil.NewSingleHostReverseProxy(r.APIURL)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !hook(w, req) {
			rp.ServeHTTP(w, req)
		}
	}))
	t.Cleanup(srv.Close)
	out, err := rabbit.Config{AMQPURL: r.AMQP.String(), APIURL: srv.URL, Vhost: r.Vhost}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An API that refuses the policies listing is not asked every second: the
// move asks again after 2 s, then 4, 8 … up to 30, says once that it could
// not read them, and moves everything. The bound on the listings follows
// from how long the move took (at least 8 s at the rate asked), not from a
// clock of the test's.
func TestMoveBacksOffAPoliciesListingTheAPIRefuses(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	const n = 4000
	f.publishN(src, n, "m")
	var armed atomic.Bool
	var refused atomic.Int64
	r := viaAPI(t, f.r, func(w http.ResponseWriter, req *http.Request) bool {
		if !armed.Load() || !strings.HasPrefix(req.URL.Path, "/api/policies/") {
			return false
		}
		refused.Add(1)
		http.Error(w, `{"error":"not_authorised","reason":"Not management user"}`, http.StatusUnauthorized)
		return true
	})
	l, err := rabbit.NewLive(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var from time.Time
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Rate: 500},
		func(broker.MoveProgress) {
			if !armed.Load() {
				from = time.Now()
				armed.Store(true)
			}
		})
	took := time.Since(from)
	if err != nil || rep.Moved != n {
		t.Fatalf("move: %v, moved %d of %d", err, rep.Moved, n)
	}
	// The listings a backoff allows in that time: the first, then one
	// after each pause (2 s, doubled, at most 30 s), and one to spare.
	allowed := 2
	for at, wait := 2*time.Second, 2*time.Second; at <= took; at += wait {
		allowed++
		wait = min(2*wait, 30*time.Second)
	}
	t.Logf("moved %d in %v: %d policies listings refused (a backoff allows %d)", rep.Moved, took.Round(time.Millisecond), refused.Load(), allowed)
	if refused.Load() == 0 || refused.Load() > int64(allowed) {
		t.Errorf("%d listings refused in %v, want 1 to %d", refused.Load(), took, allowed)
	}
	noted := 0
	for _, note := range rep.Notes {
		if strings.Contains(note, "policies could not be read during the move") {
			noted++
		}
	}
	if noted != 1 {
		t.Errorf("said %d times that the policies could not be read: %q", noted, rep.Notes)
	}
	everyOnce(t, f.countAll(src, dst), "m", n)
}
