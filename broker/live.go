package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/retry"
)

// ErrReadOnly refuses a mutation under --read-only.
var ErrReadOnly = errors.New("read-only mode: ladder changes nothing on the broker")

// Live is the Client for a real RabbitMQ.
type Live struct {
	r       *Resolved
	mgmt    *Management
	purpose string

	mu   sync.Mutex
	conn *amqp.Connection
	// block follows conn's resource-alarm state (connection.blocked).
	block *blockState

	// adaptVhost lets tests present topology the broker cannot have here
	// (a delayed-message exchange: the plugin is not installable).
	adaptVhost func(*retry.Vhost)
}

// AdaptTopology makes the client present every vhost topology it plans moves
// on through f first: for tests of broker features this machine cannot
// have (the delayed-message exchange plugin, faked by a plain exchange).
func (l *Live) AdaptTopology(f func(*retry.Vhost)) { l.adaptVhost = f }

// NewLive returns a Client for the broker r describes. Nothing is dialled
// until the first call; purpose names its AMQP connection ("ladder <purpose>").
func NewLive(r *Resolved, purpose string) (*Live, error) {
	m, err := NewManagement(r)
	if err != nil {
		return nil, err
	}
	return &Live{r: r, mgmt: m, purpose: purpose}, nil
}

// Resolved returns the configuration the client was built from.
func (l *Live) Resolved() *Resolved { return l.r }

// Vhost implements Client.
func (l *Live) Vhost() string { return l.r.Vhost }

// ReadOnly implements Client.
func (l *Live) ReadOnly() bool { return l.r.ReadOnly }

// Vhosts implements Client.
func (l *Live) Vhosts(ctx context.Context) ([]string, error) { return l.mgmt.Vhosts(ctx) }

// WithVhost returns a client for another vhost of the same broker.
func (l *Live) WithVhost(vhost string) (*Live, error) {
	r := *l.r
	r.Vhost = vhost
	return NewLive(&r, l.purpose)
}

// Snapshot implements Client: one management read of the vhost, adapted,
// with ladders discovered and findings computed by the retry engine.
func (l *Live) Snapshot(ctx context.Context) (*Snapshot, error) {
	// The version (cached after the first) and the vhost at once.
	var (
		version string
		verr    error
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		version, verr = l.mgmt.BrokerVersion(ctx)
	}()
	v, err := l.mgmt.Vhost(ctx, l.r.Vhost)
	<-done
	if verr != nil {
		return nil, verr
	}
	if err != nil {
		return nil, err
	}
	retry.Inflow(&v)
	ladders := retry.Discover(&v)
	return &Snapshot{
		Vhost: l.r.Vhost, BrokerVersion: version, TakenAt: time.Now(),
		Topology: v, Ladders: ladders, Findings: retry.Findings(&v, ladders),
		Refresh: l.mgmt.RefreshHint(),
	}, nil
}

// connection returns the shared AMQP connection, dialling again when the
// broker closed the previous one.
func (l *Live) connection(ctx context.Context) (*amqp.Connection, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil && !l.conn.IsClosed() {
		return l.conn, nil
	}
	c, err := l.r.DialAMQP(ctx, l.purpose)
	if err != nil {
		return nil, err
	}
	l.conn, l.block = c, watchBlocked(c)
	return c, nil
}

// blockOf is the resource-alarm state of conn, the shared connection (nil
// once it was replaced).
func (l *Live) blockOf(conn *amqp.Connection) *blockState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != conn {
		return nil
	}
	return l.block
}

// blockState is a connection's resource-alarm state, as the broker's
// connection.blocked and connection.unblocked say.
type blockState struct {
	mu     sync.Mutex
	reason string        // "" while not blocked
	change chan struct{} // closed (and replaced) on every change
}

// watchBlocked follows conn's blocked state until the connection closes
// (which ends the goroutine: amqp091 closes the listener then).
func watchBlocked(conn *amqp.Connection) *blockState {
	b := &blockState{change: make(chan struct{})}
	events := conn.NotifyBlocked(make(chan amqp.Blocking, 4))
	go func() {
		for e := range events {
			reason := ""
			if e.Active {
				reason = blockedReason(e.Reason)
			}
			b.mu.Lock()
			if reason != b.reason {
				b.reason = reason
				close(b.change)
				b.change = make(chan struct{})
			}
			b.mu.Unlock()
		}
	}()
	return b
}

// state is the reason the connection is blocked ("" when not) and a
// channel closed when that changes. A nil state is never blocked.
func (b *blockState) state() (string, <-chan struct{}) {
	if b == nil {
		return "", nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reason, b.change
}

func (b *blockState) blockedBy() string {
	r, _ := b.state()
	return r
}

type blockedNoticeKey struct{}

// withBlockedNotice makes Publish, under ctx, tell notice whether a
// resource alarm blocks its connection: the broker's reason, or "" when
// not. It is called when Publish starts, on every change while it waits for
// confirms, and when it returns (the same state may be told twice); replay
// shows it in its progress.
func withBlockedNotice(ctx context.Context, notice func(reason string)) context.Context {
	return context.WithValue(ctx, blockedNoticeKey{}, notice)
}

func blockedNotice(ctx context.Context) func(string) {
	if f, ok := ctx.Value(blockedNoticeKey{}).(func(string)); ok {
		return f
	}
	return func(string) {}
}

// Peek implements Client.
func (l *Live) Peek(ctx context.Context, queue string, opt PeekOptions) (*PeekResult, error) {
	q, err := l.mgmt.Queue(ctx, l.r.Vhost, queue)
	if err != nil {
		return nil, fmt.Errorf("peek: %w", err)
	}
	version, err := l.mgmt.BrokerVersion(ctx)
	if err != nil {
		return nil, err
	}
	// Exact depth: management counters lag by up to 5 s.
	conn, err := l.connection(ctx)
	if err != nil {
		return nil, err
	}
	if q.Type != retry.QueueStream {
		if ready, err := passiveDepth(conn, queue); err == nil {
			// Management counters lag by seconds; only unacked comes from there.
			q.Ready = int64(ready)
			q.Messages = q.Ready + q.Unacked
		}
	}
	// Discovery only labels what the peek shows: cached bindings will do.
	v, err := l.mgmt.read(ctx, l.r.Vhost, false, false)
	if err != nil {
		return nil, err
	}
	ladders := retry.Discover(&v)
	return peekQueue(ctx, conn, q, version, opt, retry.DeathQueuesOf(ladders, queue), retry.MainQueues(ladders))
}

// LadderOf returns the ladder queue belongs to, as main, tier, wait queue
// or DLQ.
func LadderOf(ladders []retry.Ladder, queue string) (retry.Ladder, bool) {
	for _, l := range ladders {
		if l.Main == queue || l.DLQ == queue || slices.Contains(l.WaitQueues, queue) {
			return l, true
		}
		for _, t := range l.Tiers {
			if t.Queue == queue {
				return l, true
			}
		}
	}
	return retry.Ladder{}, false
}

// passiveDepth asks the queue itself for its ready count, on a throwaway
// channel (a missing queue closes the channel it was asked on).
func passiveDepth(conn *amqp.Connection, queue string) (int, error) {
	ch, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		return 0, err
	}
	return q.Messages, nil
}

// Close implements Client.
func (l *Live) Close() error {
	l.mgmt.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil && !l.conn.IsClosed() {
		return l.conn.Close()
	}
	return nil
}
