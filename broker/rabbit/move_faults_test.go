package rabbit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// closeConnections closes, through the management API, every connection
// whose client-provided name starts with prefix; it returns how many.
func closeConnections(f *fixture, prefix string) (int, error) {
	req, _ := http.NewRequest(http.MethodGet, f.r.APIURL.String()+"/api/connections?columns=name,client_properties", nil)
	if err := f.r.SetAPIAuth(req); err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var conns []struct {
		Name             string `json:"name"`
		ClientProperties struct {
			ConnectionName string `json:"connection_name"`
		} `json:"client_properties"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&conns); err != nil {
		return 0, err
	}
	n := 0
	for _, c := range conns {
		if strings.HasPrefix(c.ClientProperties.ConnectionName, prefix) {
			if err := apiDo(f, http.MethodDelete, "connections/"+url.PathEscape(c.Name), nil); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// The broker closes ladder's connections in the middle of a move: nothing
// may be missing, and the report must say duplicates are possible.
func TestMoveSurvivesBrokerClosingTheConnection(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	const n = 10000
	f.publishN(src, n, "c")
	purpose := "test-close-" + brokertest.Name(t, "")[len("ladder-test."):]
	r := *f.r
	l, err := rabbit.NewLive(&r, purpose)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	started, resume := make(chan struct{}), make(chan struct{})
	var once bool
	done := make(chan struct{})
	var rep *broker.MoveReport
	var merr error
	go func() {
		defer close(done)
		rep, merr = l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}},
			func(p broker.MoveProgress) {
				if !once && p.Moved > 500 {
					once = true
					close(started)
					<-resume // hold the move here until its connections are closed
				}
			})
	}()
	select {
	case <-started:
	case <-done:
		t.Fatalf("move finished before it could be interrupted: %+v %v", rep, merr)
	case <-time.After(60 * time.Second):
		t.Fatal("move never got going")
	}
	// The management API lists a connection a few seconds after it opens.
	closed := 0
	for deadline := time.Now().Add(20 * time.Second); closed < 2 && time.Now().Before(deadline); {
		n, err := closeConnections(f, "ladder "+purpose)
		if err != nil {
			t.Fatal(err)
		}
		closed += n
		time.Sleep(200 * time.Millisecond)
	}
	close(resume)
	if closed == 0 {
		t.Fatal("found no connection of the move to close")
	}
	<-done
	if merr == nil || !errors.Is(merr, broker.ErrPartial) {
		t.Fatalf("move error %v, want a partial move", merr)
	}
	if rep.Moved == 0 || rep.Moved >= n {
		t.Fatalf("moved %d: the interruption did not land mid-move", rep.Moved)
	}
	t.Logf("interrupted after %d moved; duplicates possible: %v; notes %v", rep.Moved, rep.DuplicatesPossible, rep.Notes)
	f.waitStable(src)
	seen := idsOf(f.drain(dst, time.Second))
	for id, c := range idsOf(f.drain(src, time.Second)) {
		seen[id] += c
	}
	missing, dups := 0, 0
	for i := 0; i < n; i++ {
		c := seen[fmt.Sprintf("c-%d", i)]
		if c == 0 {
			missing++
		}
		dups += max(0, c-1)
	}
	if missing > 0 {
		t.Fatalf("%d messages lost", missing)
	}
	// The report's bound holds: every real duplicate was counted in it.
	t.Logf("%d duplicates, at most %d reported", dups, rep.DuplicatesAtMost)
	if dups > rep.DuplicatesAtMost || (dups > 0 && !rep.DuplicatesPossible) {
		t.Fatalf("%d duplicates, but the report says at most %d (possible: %v)", dups, rep.DuplicatesAtMost, rep.DuplicatesPossible)
	}
}

// waitStable waits until a queue has no unacknowledged messages (a closed
// connection's deliveries return asynchronously).
func (f *fixture) waitStable(queue string) {
	f.t.Helper()
	api, err := f.r.API()
	if err != nil {
		f.t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		q, err := api.GetQueue("/", queue)
		if err == nil && q.MessagesUnacknowledged == 0 && q.Consumers == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestMoveWithDelayArrivesAfterTheDelay(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	f := newVhostFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	f.publishN(src, 20, "w")
	start := time.Now()
	rep, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Delay: 4 * time.Second}, nil)
	if err != nil || rep.Moved != 20 || rep.Via[topology.ViaDelayQueue] != 20 {
		t.Fatalf("%+v %v", rep, err)
	}
	took := time.Since(start) // the last one entered its wait by then
	wait := retry.ReplayQueueName("", dst, 4000)
	t.Cleanup(func() { f.deleteQueue(wait) })
	ch := f.channel()
	defer ch.Close()
	ds, err := ch.Consume(dst, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var first, last time.Duration
	for i := 0; i < 20; i++ {
		select {
		case <-ds:
			el := time.Since(start)
			if i == 0 {
				first = el
			}
			last = el
		case <-time.After(15 * time.Second):
			t.Fatalf("only %d of 20 arrived", i)
		}
	}
	t.Logf("first arrived after %v, last after %v", first, last)
	if first < 3900*time.Millisecond {
		t.Errorf("a message arrived after %v, before the 4s delay", first)
	}
	// One TTL for the wait queue releases each 4 s after it entered:
	// the last within 4 s of the move's end, with room for a busy
	// broker, far from 20 waits one after another (80 s).
	if bound := took + 4*time.Second + 10*time.Second; last > bound {
		t.Errorf("the last message arrived after %v, the move ended after %v: not one 4 s wait for all (bound %v)", last, took, bound)
	}
	// The wait queue carries its own cleanup.
	api, _ := f.r.API()
	q, err := api.GetQueue(f.r.Vhost, wait)
	if err != nil {
		t.Fatalf("wait queue %s: %v", wait, err)
	}
	if q.Arguments["x-expires"] == nil || q.Arguments["x-message-ttl"] == nil || q.Arguments["x-dead-letter-routing-key"] != dst {
		t.Errorf("wait queue arguments %v", q.Arguments)
	}
}

// Messages dead-lettered for real go back where they came from.
func TestMoveToOriginAfterRealDeadLettering(t *testing.T) {
	f := newVhostFixture(t)
	dlq := f.queue("dlq", nil)
	main := f.queue("main", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
	ex := f.exchange("in", "topic", nil)
	f.bind(main, "orders.#", ex)
	f.publish(ex, "orders.created", amqp.Publishing{MessageId: "o1"}, amqp.Publishing{MessageId: "o2"})
	f.publish("", dlq, amqp.Publishing{MessageId: "never-dead"}) // no x-death: reported, left
	ch := f.channel()
	for i := 0; i < 2; i++ {
		var d amqp.Delivery
		var ok bool
		for !ok {
			if d, ok, err := ch.Get(main, false); err != nil {
				t.Fatal(err)
			} else if ok {
				if err := d.Reject(false); err != nil {
					t.Fatal(err)
				}
				break
			}
			_ = d
			time.Sleep(20 * time.Millisecond)
		}
	}
	ch.Close()
	f.waitDepth(dlq, 3)
	rep, err := f.live(false).Move(context.Background(), broker.MoveRequest{From: dlq, To: moveplan.Target{Kind: moveplan.TargetOrigin}}, nil)
	if !errors.Is(err, broker.ErrPartial) || rep.Moved != 2 || rep.Skipped != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	if len(rep.Planned) != 1 || rep.Planned[0].MessageID != "never-dead" || !strings.Contains(rep.Planned[0].Skip, "nothing says where it failed") {
		t.Errorf("skipped not reported: %+v", rep.Planned)
	}
	back := f.drain(main, 500*time.Millisecond)
	if len(back) != 2 || back[0].RoutingKey != "orders.created" || back[0].Exchange != ex {
		t.Fatalf("back in main: %d, first %+v", len(back), back)
	}
	if f.depth(dlq) != 1 {
		t.Errorf("the message without origin must stay")
	}
}

// Dead in main, moved back by ladder, dead again: peek counts both deaths
// on every broker version (4.x restarts x-death on a re-published message;
// ladder carries the history in x-ladder-deaths).
func TestDeathsAddUpAcrossAMove(t *testing.T) {
	f := newVhostFixture(t)
	dlq := f.queue("dlq", nil)
	main := f.queue("main", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
	reject := func() {
		t.Helper()
		ch := f.channel()
		defer ch.Close()
		deadline := time.Now().Add(10 * time.Second)
		for {
			d, ok, err := ch.Get(main, false)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				_ = d.Nack(false, false)
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("nothing to reject")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	f.publish("", main, amqp.Publishing{MessageId: "twice"})
	reject()
	f.waitDepth(dlq, 1)
	l := f.live(false)
	if rep, err := l.Move(context.Background(), broker.MoveRequest{From: dlq, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: main}}, nil); err != nil || rep.Moved != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	reject()
	f.waitDepth(dlq, 1)
	res, err := l.Peek(context.Background(), dlq, broker.PeekOptions{Limit: 1})
	if err != nil || len(res.Messages) != 1 {
		t.Fatal(err)
	}
	m := res.Messages[0]
	var deaths int64
	for _, d := range m.Deaths {
		if d.Queue == main {
			deaths += d.Count
		}
	}
	if deaths != 2 {
		t.Errorf("died in main %d times by the history, want 2: %+v", deaths, m.Deaths)
	}
	// peek's JSON says which death ladder carried: on 4.x the first one.
	version, err := l.BrokerVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(m.Deaths)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Count(string(js), `"carried":true`), map[bool]int{true: 1, false: 0}[topology.CarriesDeaths(version)]; got != want {
		t.Errorf("broker %s: %d deaths marked carried in the JSON, want %d: %s", version, got, want, js)
	}
	t.Logf("broker %s: %d entries, %s", version, len(m.Deaths), js)
}

// A target that rejects publishes (x-max-length with reject-publish):
// nacked messages stay in the source, the report counts them, and the move
// is partial.
func TestMoveToATargetThatRejectsPublishes(t *testing.T) {
	f := newFixture(t)
	src := f.queue("src", nil)
	dst := f.queue("dst", amqp.Table{"x-max-length": int64(5), "x-overflow": "reject-publish"})
	f.publishN(src, 20, "r")
	l := f.live(false)
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}, nil)
	if !errors.Is(err, broker.ErrPartial) {
		t.Fatalf("error %v, want a partial move", err)
	}
	if rep.Moved != 5 || rep.Failed != 15 {
		t.Fatalf("moved %d failed %d, want 5 and 15: %+v", rep.Moved, rep.Failed, rep)
	}
	f.waitStable(src)
	if got := f.depth(src); got != 15 {
		t.Fatalf("source keeps %d, want the 15 nacked", got)
	}
	if got := f.depth(dst); got != 5 {
		t.Fatalf("target has %d, want 5", got)
	}
}
