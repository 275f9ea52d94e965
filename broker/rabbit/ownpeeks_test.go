package rabbit

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

func storms(v *topology.Vhost, ladders []retry.Ladder) []string {
	var out []string
	for _, f := range topology.Findings(v, ladders) {
		if f.Code == topology.CodeRequeueStorm {
			out = append(out, f.Queue)
		}
	}
	return out
}

// A peek of 100 messages redelivers them, and the broker's redeliver rate
// shows it for a sample or two: 20/s on a main queue acking nothing reads
// as a requeue storm. The client's own redeliveries are taken out, so its
// peeks never show as one; another queue's storm still does.
func TestOwnPeeksAreNoStorm(t *testing.T) {
	v := topology.Vhost{Queues: []topology.Queue{
		{Name: "orders", Type: topology.QueueQuorum, Consumers: 1, Rates: topology.Rates{Known: true, Redeliver: 20}},
		{Name: "billing", Type: topology.QueueClassic, Consumers: 1, Rates: topology.Rates{Known: true, Redeliver: 20}},
	}}
	ladders := []retry.Ladder{{Main: "orders"}, {Main: "billing"}}
	if got := storms(&v, ladders); len(got) != 2 {
		t.Fatalf("before: storms %v", got)
	}
	l := &Live{}
	l.noteOwn("orders", 100)
	discountOwn(&v, l.ownSince(time.Now()))
	if got := storms(&v, ladders); len(got) != 1 || got[0] != "billing" {
		t.Fatalf("after ladder's own peek of orders: storms %v", got)
	}
	if v.Queues[0].Rates.Redeliver != 0 || v.Queues[1].Rates.Redeliver != 20 {
		t.Errorf("rates %v %v", v.Queues[0].Rates, v.Queues[1].Rates)
	}
	// Forgotten after the window: a storm that goes on shows again.
	if own := l.ownSince(time.Now().Add(ownWindow)); len(own) != 0 {
		t.Errorf("still remembered: %v", own)
	}
}

// Clients that share memory (ladder serve's sessions and their snapshot
// reader) keep each other's peeks out of the rates, and each other's
// evidence in discovery; a client of another vhost keeps only its own
// vhost's.
func TestSharedMemoryKeepsEverySessionsPeeks(t *testing.T) {
	live := func(vhost string) *Live {
		t.Helper()
		r, err := Config{AMQPURL: "amqp://guest:guest@127.0.0.1:1/", APIURL: "http://127.0.0.1:1", Vhost: vhost}.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewLive(r, "test")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	reader, session, elsewhere := live("v"), live("v"), live("w")
	session.ShareMemory(reader)
	elsewhere.ShareMemory(reader)
	session.noteOwn("orders", 40)
	if n := OwnRedelivered(reader, "orders"); n != 40 {
		t.Errorf("the reader keeps %d of the session's 40 redeliveries out of the rates", n)
	}
	if n := OwnRedelivered(elsewhere, "orders"); n != 0 {
		t.Errorf("a client of another vhost discounts %d of its orders' redeliveries", n)
	}
	if session.evidence != reader.evidence {
		t.Error("the session's evidence is not the reader's")
	}
}
