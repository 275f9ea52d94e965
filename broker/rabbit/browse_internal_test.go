package rabbit

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"

	amqp "github.com/rabbitmq/amqp091-go"
)

// browseQueue declares a queue of type (classic, quorum, stream) with n
// messages b-000…, deleted when the test ends.
func browseQueue(t *testing.T, r *Resolved, typ string, n int) string {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test browse")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("ladder-test.browse.%s.%s", typ, time.Now().Format("150405.000000"))
	if _, err := ch.QueueDeclare(name, true, false, false, false, amqp.Table{"x-queue-type": typ}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := r.DialAMQP(context.Background(), "test cleanup")
		if err != nil {
			return
		}
		defer c.Close()
		if cc, err := c.Channel(); err == nil {
			_, _ = cc.QueueDelete(name, false, false, false)
		}
	})
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	var confs []*amqp.DeferredConfirmation
	for i := 0; i < n; i++ {
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", name, false, false,
			amqp.Publishing{MessageId: fmt.Sprintf("b-%03d", i), DeliveryMode: amqp.Persistent, Body: []byte("x")})
		if err != nil {
			t.Fatal(err)
		}
		confs = append(confs, dc)
	}
	for _, dc := range confs {
		if !dc.Wait() {
			t.Fatal("publish not confirmed")
		}
	}
	return name
}

func browseIDs(res *broker.PeekResult) []string {
	var ids []string
	for _, m := range res.Messages {
		ids = append(ids, m.Properties.MessageID)
	}
	return ids
}

func wantIDs(n int) []string {
	var ids []string
	for i := 0; i < n; i++ {
		ids = append(ids, fmt.Sprintf("b-%03d", i))
	}
	return ids
}

// waitReady polls (a passive declare: exact) until queue has ready
// messages ready: when that is all it holds, none is held unacked.
func waitReady(t *testing.T, l *Live, queue string, ready int) {
	t.Helper()
	conn, err := l.r.DialAMQP(context.Background(), "test depth")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n := -1
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if n, err = passiveDepth(conn, queue); err == nil && n == ready {
			return
		}
	}
	t.Fatalf("%s never held %d ready: %d (%v)", queue, ready, n, err)
}

// A consumer's prefetch is a 16-bit count and a browse acks nothing, so
// one consumer reads at most 65,535: the browse chains consumers. With each
// capped at 7 messages, 100 take 15, and they must come in queue order, on
// every queue type (a stream: one consumer whose acks grant credit), and
// leave the queue as it was.
func TestBrowseChainsConsumersInQueueOrder(t *testing.T) {
	r := requireBroker(t)
	prev := browsePrefetchCap
	browsePrefetchCap = 7
	t.Cleanup(func() { browsePrefetchCap = prev })
	for _, typ := range []string{"classic", "quorum", "stream"} {
		t.Run(typ, func(t *testing.T) {
			q := browseQueue(t, r, typ, 100)
			l, err := NewLive(r, "test browse")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			var progress []broker.PeekProgress
			res, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: 100, Progress: func(p broker.PeekProgress) { progress = append(progress, p) }})
			if err != nil {
				t.Fatal(err)
			}
			if got := browseIDs(res); !slices.Equal(got, wantIDs(100)) {
				t.Fatalf("read %d: %v", len(got), got)
			}
			if res.Incomplete != "" {
				t.Errorf("incomplete: %s", res.Incomplete)
			}
			last := progress[len(progress)-1]
			if !last.Done || last.Read != 100 || last.Want != 100 || progress[0].Read != 0 {
				t.Errorf("progress %+v … %+v", progress[0], last)
			}
			if typ == "stream" {
				return // read by offset: nothing to return
			}
			waitReady(t, l, q, 100)
			// Read again: the first 30, as they were (a quorum queue on 4.x
			// may return a peek's messages in another order: see issue 20).
			again, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: 30})
			if err != nil {
				t.Fatal(err)
			}
			if got := browseIDs(again); typ == "classic" && !slices.Equal(got, wantIDs(30)) || len(got) != 30 {
				t.Errorf("second read %v", got)
			}
		})
	}
}

// Each consumer is given what fits browseBudget by the sizes its
// predecessor delivered, growing at most eightfold a step.
func TestBrowseSizesConsumersByBytes(t *testing.T) {
	spend := func(c *consumerChain, body int) {
		c.due, c.given, c.bytes = c.next, c.next, 0
		b := make([]byte, body)
		for i := 0; i < c.given; i++ {
			if err := c.got(&amqp.Delivery{Body: b}); err != nil {
				t.Fatal(err)
			}
		}
	}
	big := &consumerChain{next: browseFirst}
	spend(big, 64<<10)
	if big.next != browseBudget/(64<<10+deliveryOverhead) {
		t.Errorf("after 64 KiB bodies: next %d", big.next)
	}
	small := &consumerChain{next: browseFirst}
	var steps []int
	for i := 0; i < 4; i++ {
		spend(small, 10)
		steps = append(steps, small.next)
	}
	if fmt.Sprint(steps) != fmt.Sprint([]int{512, 4096, 16225, 16225}) {
		t.Errorf("small bodies: %v", steps)
	}
	huge := &consumerChain{next: browseFirst}
	spend(huge, 100<<20)
	if huge.next != 1 {
		t.Errorf("100 MiB bodies: next %d", huge.next)
	}
}

// stallProxy forwards TCP connections to a broker until stall: then it
// passes nothing more either way on the connections it has (it still sees
// the client close), as a network that stops answering; new connections
// pass.
type stallProxy struct {
	ln     net.Listener
	mu     sync.Mutex
	stalls []chan struct{}
}

func newStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			stall := make(chan struct{})
			p.mu.Lock()
			p.stalls = append(p.stalls, stall)
			p.mu.Unlock()
			go p.pipe(c, up, stall)
			go p.pipe(up, c, stall)
		}
	}()
	return p
}

// pipe copies from → to until either closes, or the stall: then it reads
// on (to see a close) and drops what it reads.
func (p *stallProxy) pipe(from, to net.Conn, stall chan struct{}) {
	defer from.Close()
	defer to.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if err != nil {
			return
		}
		select {
		case <-stall:
			continue
		default:
		}
		if _, err := to.Write(buf[:n]); err != nil {
			return
		}
	}
}

func (p *stallProxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.stalls {
		select {
		case <-s:
		default:
			close(s)
		}
	}
	p.stalls = nil
}

// A browse returns what it holds by closing its channel, and amqp091's
// Channel.Close waits for the broker's answer without a bound. When none
// comes (here: a network that stops passing anything once the peek has
// read), the browse drops its connection after browseCloseBound, so the
// broker returns every message; the result still comes, says so, and the
// client dials again for the next call.
func TestPeekDropsItsConnectionWhenTheChannelCloseHangs(t *testing.T) {
	r := requireBroker(t)
	q := browseQueue(t, r, "classic", 20)
	proxy := newStallProxy(t, net.JoinHostPort(r.AMQP.Hostname(), r.Port()))
	u, _ := url.Parse(r.AMQPURL)
	u.Host = proxy.ln.Addr().String()
	pr, err := Config{AMQPURL: u.String(), APIURL: r.APIURL.String()}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	prev := browseCloseBound
	browseCloseBound = time.Second
	t.Cleanup(func() { browseCloseBound = prev })
	l, err := NewLive(pr, "test stall")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := time.Now()
	res, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: 20, Progress: func(p broker.PeekProgress) {
		if p.Read == p.Want && !p.Done {
			proxy.stall() // all read: the channel's close gets no answer
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the stalled peek returned after %s", time.Since(start).Round(time.Millisecond))
	if got := browseIDs(res); !slices.Equal(got, wantIDs(20)) {
		t.Fatalf("read %v", got)
	}
	if !strings.Contains(strings.Join(res.SideEffects, " "), "dropped its connection") {
		t.Errorf("side effects do not say the connection was dropped: %v", res.SideEffects)
	}
	// The broker saw the connection go: every message is back, none held.
	waitReady(t, l, q, 20)
	again, err := l.Peek(context.Background(), q, broker.PeekOptions{Limit: 20})
	if err != nil {
		t.Fatalf("the next peek on the same client: %v", err)
	}
	if got := browseIDs(again); !slices.Equal(got, wantIDs(20)) {
		t.Errorf("the next peek read %v", got)
	}
}
