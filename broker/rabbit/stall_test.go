package rabbit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// stallProxy forwards TCP connections to a broker until Stall: then it stops
// forwarding both ways without closing anything, as a dead middlebox or a
// frozen network does. Bytes already read from one side are held, never
// delivered; the peers learn of it only from their heartbeats.
type stallProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	stalled chan struct{}
	closed  chan struct{}
	conns   []net.Conn
	// after, when > 0, stalls everything once that many bytes went from
	// the clients to the broker: mid-batch, with the broker's answers to
	// what it got still on their way back.
	after int64
	sent  int64
	// trigger is what happens past after (stall when nil).
	trigger func()
	once    sync.Once
}

func newStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, target: target, stalled: make(chan struct{}), closed: make(chan struct{})}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *stallProxy) addr() string { return p.ln.Addr().String() }

func (p *stallProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		b, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, b)
		p.mu.Unlock()
		go p.pipe(c, b, true)
		go p.pipe(b, c, false)
	}
}

// forwarded counts bytes sent to the broker and stalls past p.after.
func (p *stallProxy) forwarded(n int) {
	p.mu.Lock()
	p.sent += int64(n)
	over := p.after > 0 && p.sent >= p.after
	p.mu.Unlock()
	if over {
		p.fire()
	}
}

// fire runs the trigger once.
func (p *stallProxy) fire() {
	p.once.Do(func() {
		if p.trigger != nil {
			p.trigger()
			return
		}
		p.stall()
	})
}

// reset ends every connection at once with a TCP reset, as a middlebox
// that drops its state does.
func (p *stallProxy) reset() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
	}
}

// pipe copies from → to until the stall, then holds what it read and stops
// reading: the sender's socket buffers fill, nothing is closed.
func (p *stallProxy) pipe(from, to net.Conn, toBroker bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		select {
		case <-p.stalled:
			<-p.closed // held until the test closes the sockets
		default:
		}
		if n > 0 {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
			if toBroker {
				p.forwarded(n)
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				to.Close()
			}
			return
		}
	}
}

// stall stops all forwarding, now and for every later connection.
func (p *stallProxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stalled:
	default:
		close(p.stalled)
	}
}

func (p *stallProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.closed:
		return
	default:
		close(p.closed)
	}
	for _, c := range p.conns {
		c.Close()
	}
}

// throughProxy is r with AMQP going through the proxy and a 2 s heartbeat,
// so a stall is noticed in seconds (one that times out for another reason
// is one more way for a run to end: the bound holds there too); the
// management API is reached directly.
func throughProxy(t *testing.T, r *rabbit.Resolved, p *stallProxy) *rabbit.Resolved {
	t.Helper()
	u, err := url.Parse(r.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.addr()
	q := u.Query()
	q.Set("heartbeat", "2")
	u.RawQuery = q.Encode()
	out := *r
	out.AMQPURL = u.String()
	return &out
}

// brokerAddr is the host:port the AMQP URL dials.
func brokerAddr(t *testing.T, r *rabbit.Resolved) string {
	t.Helper()
	u, err := url.Parse(r.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "5672")
	}
	return u.Host
}

// countByID counts every message id of the given queues on the broker,
// once at least want messages are ready in them (a dead connection's
// deliveries return when the broker notices it) or, bounded, when they stop
// changing: a message missing then is lost.
func countByID(f *fixture, want int, queues ...string) map[string]int {
	f.t.Helper()
	ready := func() int {
		n := 0
		for _, q := range queues {
			n += f.depth(q)
		}
		return n
	}
	last, since := -1, time.Now()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		n := ready()
		if n >= want {
			break
		}
		if n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > 30*time.Second {
			break
		}
	}
	seen := map[string]int{}
	for _, q := range queues {
		for id, c := range idsOf(f.drain(q, time.Second)) {
			seen[id] += c
		}
	}
	return seen
}

// lostAndDuplicated compares ids "<prefix>-<i>" with what was published.
func lostAndDuplicated(seen map[string]int, prefix string, n int) (lost, dups int) {
	for i := 0; i < n; i++ {
		c := seen[fmt.Sprintf("%s-%d", prefix, i)]
		if c == 0 {
			lost++
		}
		dups += max(0, c-1)
	}
	return lost, dups
}

// stallPoint is where a run stalls: once progress reports that many
// settled, or once that many bytes went to the broker (mid-batch, with
// confirms for what it got on their way back).
type stallPoint struct {
	moved int
	bytes int64
}

func (s stallPoint) String() string {
	if s.bytes > 0 {
		return fmt.Sprintf("after-%dKB-sent", s.bytes>>10)
	}
	return fmt.Sprintf("after-%d-settled", s.moved)
}

var stallPoints = []stallPoint{{moved: 300}, {moved: 4000}, {bytes: 150 << 10}, {bytes: 700 << 10}, {bytes: 1400 << 10}, {bytes: 2300 << 10}}

// A move whose connections end badly: stalled (nothing flows, nothing
// closes) until the heartbeats give up, reset, or stalled and then
// cancelled (Ctrl+C). Nothing is lost, and every message that ends up both
// in the target and back in the source is within the reported bound.
// Several runs, the ending landing at a different point of each.
func TestMoveStalledConnectionKeepsTheDuplicateBound(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	type ending struct {
		name string
		at   stallPoint
	}
	var endings []ending
	for _, at := range stallPoints {
		endings = append(endings, ending{"stall", at})
	}
	for _, at := range []stallPoint{{bytes: 400 << 10}, {bytes: 1800 << 10}} {
		endings = append(endings, ending{"reset", at}, ending{"cancel", at})
	}
	for run, e := range endings {
		t.Run(e.name+"-"+e.at.String(), func(t *testing.T) {
			t.Parallel() // most of it waits for a heartbeat to give up
			f := newFixture(t)
			src, dst := f.queue("src", nil), f.queue("dst", nil)
			const n = 10000
			prefix := fmt.Sprintf("s%d", run)
			f.publishN(src, n, prefix)
			p := newStallProxy(t, brokerAddr(t, f.r))
			p.after = e.at.bytes
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			switch e.name {
			case "reset":
				p.trigger = p.reset
			case "cancel":
				p.trigger = func() { p.stall(); cancel() }
			}
			l, err := rabbit.NewLive(throughProxy(t, f.r, p), "test-stall")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			rep, err := l.Move(ctx, broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}},
				func(pr broker.MoveProgress) {
					if e.at.moved > 0 && pr.Moved >= e.at.moved {
						p.fire()
					}
				})
			if rep.Moved >= n {
				t.Skipf("the move finished (%d) before the %s landed", rep.Moved, e.name)
			}
			if err == nil || !errors.Is(err, broker.ErrPartial) {
				t.Fatalf("move error %v, want a partial move", err)
			}
			p.close() // the broker's side of the stalled sockets goes now
			lost, dups := lostAndDuplicated(countByID(f, n, src, dst), prefix, n)
			t.Logf("%s: moved %d; %d duplicates, at most %d reported (possible: %v); %v", e.name, rep.Moved, dups, rep.DuplicatesAtMost, rep.DuplicatesPossible, err)
			if lost > 0 {
				t.Fatalf("%d messages lost", lost)
			}
			if dups > rep.DuplicatesAtMost || (dups > 0 && !rep.DuplicatesPossible) {
				t.Fatalf("%d duplicates, but the report says at most %d (possible: %v)", dups, rep.DuplicatesAtMost, rep.DuplicatesPossible)
			}
		})
	}
}

// writeIDDump writes a dump of n messages with ids "<prefix>-<i>".
func writeIDDump(t *testing.T, n int, prefix string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stall.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := fmt.Sprintf(`{"ladder_dump":%d,"vhost":"/","queue":"gone","broker_version":"3.10.8","dumped_at":"2024-01-02T03:04:05Z"}`, dumpfile.Format)
	if _, err := f.WriteString(head + "\n"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		line, err := dumpfile.MarshalRecord(dumpfile.Record{Position: i, Properties: dumpfile.Properties{MessageID: fmt.Sprintf("%s-%d", prefix, i), DeliveryMode: 2},
			Body: []byte(fmt.Sprintf(`{"n":%d}`, i))}, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// A replay whose connection stalls, then resumed: every line reaches the
// target, and the messages there twice are within the bound the resumed
// run reports (the lines in flight when the first stalled).
func TestReplayStalledConnectionKeepsTheDuplicateBound(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	for run, at := range stallPoints[1:5] {
		t.Run(at.String(), func(t *testing.T) {
			t.Parallel() // most of it waits for a heartbeat to give up
			f := newFixture(t)
			dst := f.queue("dst", nil)
			const n = 10000
			prefix := fmt.Sprintf("r%d", run)
			file := writeIDDump(t, n, prefix)
			p := newStallProxy(t, brokerAddr(t, f.r))
			p.after = at.bytes
			l, err := rabbit.NewLive(throughProxy(t, f.r, p), "test-stall")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			req := usecase.ReplayRequest{File: file, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}
			first, err := usecase.Replay(context.Background(), gate.New(l, gate.Options{}), req, func(pr broker.MoveProgress) {
				if at.moved > 0 && pr.Moved >= at.moved {
					p.fire()
				}
			})
			if first.Moved >= n {
				t.Skipf("the replay finished (%d) before the stall landed", first.Moved)
			}
			if err == nil || !errors.Is(err, broker.ErrPartial) {
				t.Fatalf("replay error %v, want a partial replay", err)
			}
			p.close()
			req.Resume = true
			second, err := usecase.Replay(context.Background(), gate.New(f.live(false), gate.Options{}), req, nil)
			if err != nil {
				t.Fatalf("resumed replay: %v (%+v)", err, second)
			}
			lost, dups := lostAndDuplicated(countByID(f, n, dst), prefix, n)
			t.Logf("first run published %d (in doubt: at most %d); resumed run published %d, %d duplicates, at most %d reported (possible: %v)",
				first.Moved, first.DuplicatesAtMost, second.Moved, dups, second.DuplicatesAtMost, second.DuplicatesPossible)
			if lost > 0 {
				t.Fatalf("%d lines lost", lost)
			}
			if dups > second.DuplicatesAtMost || (dups > 0 && !second.DuplicatesPossible) {
				t.Fatalf("%d duplicates, but the resumed replay says at most %d (possible: %v)", dups, second.DuplicatesAtMost, second.DuplicatesPossible)
			}
		})
	}
}

// dupsAmong counts the extra copies on the broker of the given ids.
func dupsAmong(seen map[string]int, ids []string) int {
	n := 0
	for _, id := range ids {
		n += max(0, seen[id]-1)
	}
	return n
}

// A replay stalled, resumed, stalled again in the lines the first left in
// doubt, and resumed once more: a line published twice without an answer
// may be on the broker three times, and the last run's bound says so. Each
// run's bound covers the copies of the lines it published.
func TestReplayStalledTwiceKeepsTheDuplicateBound(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	for run, at := range []int64{300 << 10} {
		t.Run(fmt.Sprintf("after-%dKB", at>>10), func(t *testing.T) {
			f := newFixture(t)
			dst := f.queue("dst", nil)
			const n = 6000
			prefix := fmt.Sprintf("t%d", run)
			file := writeIDDump(t, n, prefix)
			req := usecase.ReplayRequest{File: file, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}
			var reps []*broker.MoveReport
			for i, after := range []int64{at, 40 << 10, 0} {
				c := broker.Client(f.live(false))
				if after > 0 {
					p := newStallProxy(t, brokerAddr(t, f.r))
					p.after = after
					l, err := rabbit.NewLive(throughProxy(t, f.r, p), "test-stall")
					if err != nil {
						t.Fatal(err)
					}
					defer l.Close()
					defer p.close()
					c = l
				}
				req.Resume = i > 0
				rep, err := usecase.Replay(context.Background(), gate.New(c, gate.Options{}), req, nil)
				if after > 0 && !errors.Is(err, broker.ErrPartial) {
					t.Fatalf("run %d through a stall: %v", i, err)
				}
				if after == 0 && err != nil {
					t.Fatalf("last run: %v", err)
				}
				reps = append(reps, rep)
			}
			seen := countByID(f, n, dst)
			lost, dups := lostAndDuplicated(seen, prefix, n)
			if lost > 0 {
				t.Fatalf("%d lines lost", lost)
			}
			for i, rep := range reps[1:] {
				d := dupsAmong(seen, rep.MovedIDs)
				t.Logf("run %d published %d: %d of them more than once, at most %d reported", i+2, rep.Moved, d, rep.DuplicatesAtMost)
				if d > rep.DuplicatesAtMost {
					t.Errorf("run %d: %d duplicates of the lines it published, it says at most %d", i+2, d, rep.DuplicatesAtMost)
				}
			}
			t.Logf("%d duplicates in all", dups)
		})
	}
}
