package rabbit_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// silentPort accepts TCP connections and never answers (a firewall that
// lets the SYN through, a stalled node): an AMQP handshake there waits out
// its whole dial timeout (10 s).
func silentPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never written to
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// A management API that answers and an AMQP port that does not: snapshots
// still come, each within the same-broker check's own bound (3 s) and far
// from the AMQP dial timeout (10 s) — the check is not waited out, and it
// does not make every later snapshot wait for a dial of its own.
func TestSnapshotDoesNotWaitForASilentAMQPPort(t *testing.T) {
	r := brokertest.Require(t)
	cr, err := rabbit.Config{AMQPURL: "amqp://guest:guest@" + silentPort(t) + "/", APIURL: r.APIURL.String(), Vhost: "/"}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	l, err := rabbit.NewLive(cr, "test silent amqp")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Generous: the check waits 3 s at most; the dial would take 10 s.
	const bound = 8 * time.Second
	for i := range 3 {
		start := time.Now()
		snap, err := l.Snapshot(context.Background())
		took := time.Since(start)
		if err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
		if snap.BrokerVersion == "" {
			t.Fatalf("snapshot %d has no broker version", i)
		}
		if took >= bound {
			t.Fatalf("snapshot %d took %s: it waited for the AMQP dial (10 s)", i, took.Round(time.Millisecond))
		}
		t.Logf("snapshot %d: %s", i, took.Round(time.Millisecond))
	}
}
