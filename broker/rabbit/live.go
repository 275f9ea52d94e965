package rabbit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	amqp1 "github.com/Azure/go-amqp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/analysis"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Live is the Client for a real RabbitMQ.
type Live struct {
	r       *Resolved
	mgmt    *Management
	purpose string

	mu   sync.Mutex
	conn *amqp.Connection
	// checked: AMQP and the management API were found to name one cluster.
	checked bool
	// identity is the same-broker check under way (nil: none), which every
	// snapshot meanwhile waits on rather than dialling again.
	identity *identityCheck
	// closed: Close was called; a dial that ends after it closes its own.
	closed bool
	// amqp1 browses quorum queues on 4.3+ (see Peek), opened on first use;
	// amqp1Refused, set by tests, plays a broker that refuses AMQP 1.0.
	amqp1        *amqp1Session
	amqp1Refused error
	// amqp1Broken: queues an AMQP 1.0 browse of this client was ended on
	// by the broker (why, for the refusal): a peek of them has no
	// costless browse any more (see Peek).
	amqp1Broken map[string]string
	// own: recent peeks' redeliveries, kept out of the rates (see
	// ownpeeks.go); shared as evidence is.
	own *ownPeeks
	// block follows conn's resource-alarm state (connection.blocked).
	block *blockState
	// maxMsg is the max_message_size the broker named when it refused a
	// message (0: not known; see PublishLimits).
	maxMsg atomic.Int64
	// browse is the connection peeks and dumps read on, apart from conn: a
	// browse whose channel does not close in time drops its connection
	// (see browseChannels.close), which must not end a move.
	browse *amqp.Connection

	// adaptVhost lets tests present topology the broker cannot have here
	// (a delayed-message exchange: the plugin is not installable).
	adaptVhost func(*topology.Vhost)

	// nodesRunning is which nodes ran at the last snapshot (nodesChanged).
	nodesRunning map[string]bool
	// memory is evidence and the history of this client's reads, which
	// every snapshot is analysed with (shared as evidence is).
	memory *analysis.Memory
	// evidence is what this client's peeks showed about queues' roles,
	// applied to every vhost it reads (shared with WithVhost's clients,
	// a failover's and those given ShareMemory).
	evidence *broker.Evidence
}

// AdaptTopology makes the client present every vhost topology it plans moves
// on through f first: for tests of broker features this machine cannot
// have (the delayed-message exchange plugin, faked by a plain exchange).
func (l *Live) AdaptTopology(f func(*topology.Vhost)) { l.adaptVhost = f }

// NewLive returns a Client for the broker r describes. Nothing is dialled
// until the first call; purpose names its AMQP connection ("ladder <purpose>").
func NewLive(r *Resolved, purpose string) (*Live, error) {
	m, err := NewManagement(r)
	if err != nil {
		return nil, err
	}
	ev := &broker.Evidence{}
	ev.Teach(r.Conventions)
	l := &Live{r: r, mgmt: m, purpose: purpose, evidence: ev, memory: analysis.NewMemory(ev), own: &ownPeeks{}}
	m.otherBroker = l.otherBroker
	return l, nil
}

// otherBroker is verifySameBroker bounded by identityWait: a missing
// vhost's error waits no longer for AMQP to say where it is.
func (l *Live) otherBroker(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- l.verifySameBroker(ctx) }()
	select {
	case err := <-done:
		if errors.Is(err, broker.ErrTwoBrokers) {
			return err
		}
	case <-time.After(identityWait):
	}
	return nil
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
	o, err := NewLive(&r, l.purpose)
	if err != nil {
		return nil, err
	}
	o.ShareMemory(l)
	return o, nil
}

// ShareMemory makes l remember with from: what either's peeks show
// (evidence of queues' roles, their redeliveries) shapes both's snapshots
// and plans. WithVhost's and a failover's clients share their maker's;
// ladder serve's sessions share their snapshot reader's, so a ladder one
// session's peek revealed is on every session's screen and in every
// session's plan. Tests' topology adapter comes along. Call it before l
// is used.
func (l *Live) ShareMemory(from *Live) {
	l.evidence, l.memory, l.own, l.adaptVhost = from.evidence, from.memory, from.peeks(), from.adaptVhost
}

// RememberWith makes l remember with ev: what earlier runs learned of
// the broker (internal/learned) shapes its snapshots and plans, and what
// its peeks show is there for the run to keep. Call it before l is used.
func (l *Live) RememberWith(ev *broker.Evidence) {
	ev.Teach(l.r.Conventions) // the conventions this client reads by go with it
	l.evidence, l.memory = ev, analysis.NewMemory(ev)
}

// Snapshot implements Client: one management read of the vhost, adapted,
// recorded in the client's memory and analysed with it (broker/analysis).
func (l *Live) Snapshot(ctx context.Context) (*broker.Snapshot, error) {
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
	// The nodes too, at once: a user without the monitoring tag may not
	// list them (then the snapshot has none, and says nothing of nodes).
	var nodes []topology.Node
	nodesDone := make(chan struct{})
	go func() {
		defer close(nodesDone)
		nodes, _ = l.mgmt.Nodes(ctx)
	}()
	same := make(chan error, 1)
	go func() { same <- l.verifySameBroker(ctx) }()
	v, err := l.mgmt.Vhost(ctx, l.r.Vhost)
	<-done
	if err == nil {
		err = verr
	}
	if err != nil {
		// Two brokers explain a vhost the API does not know: said first,
		// when AMQP answers soon.
		select {
		case serr := <-same:
			if errors.Is(serr, broker.ErrTwoBrokers) {
				return nil, serr
			}
		case <-time.After(identityWait):
		}
		return nil, err
	}
	// AMQP naming another broker is refused; an AMQP port that does not
	// answer is waited for no longer than identityWait (the API's data
	// stands on its own: the check goes on, and a later snapshot says).
	select {
	case err := <-same:
		if err != nil {
			return nil, err
		}
	case <-time.After(identityWait):
	}
	<-nodesDone
	if l.nodesChanged(nodes) {
		// A node stopped or came back: where queues live and which
		// members are online changed with it, which a steady refresh
		// (depths from Prometheus, the rest from the last full read)
		// would show only later.
		if fresh, err := l.mgmt.read(ctx, l.r.Vhost, true, true); err == nil {
			v = fresh
		}
	}
	v.Nodes, v.ClusterName = nodes, l.mgmt.ClusterName(ctx)
	discountOwn(&v, l.ownSince(time.Now()))
	return l.memory.Snapshot(analysis.Reading{
		Vhost: l.r.Vhost, BrokerVersion: version, TakenAt: time.Now(),
		Topology: v, Refresh: l.mgmt.RefreshHint(),
	}), nil
}

// connection returns the shared AMQP connection, dialling again when the
// broker closed the previous one. A new connection must reach the cluster
// the management API reports (see SameBroker); when the API does not say
// within identityWait, the check waits for the next snapshot. The dial and
// the check are made outside l.mu (a dial can take dialTimeout, and
// everything else on the client takes l.mu): when two callers dial at once,
// the second to finish closes its own and shares the first's.
func (l *Live) connection(ctx context.Context) (*amqp.Connection, error) {
	l.mu.Lock()
	if l.conn != nil && !l.conn.IsClosed() {
		c := l.conn
		l.mu.Unlock()
		return c, nil
	}
	checked := l.checked
	l.mu.Unlock()
	c, err := l.r.DialAMQP(ctx, l.purpose)
	if err != nil {
		return nil, err
	}
	if !checked {
		ictx, cancel := context.WithTimeout(ctx, identityWait)
		err := l.mgmt.SameBroker(ictx, c)
		cancel()
		switch {
		case errors.Is(err, broker.ErrTwoBrokers):
			c.Close()
			return nil, err
		case err == nil:
			checked = true
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.checked = l.checked || checked
	switch {
	case l.closed:
		c.Close()
		return nil, errors.New("the client is closed")
	case l.conn != nil && !l.conn.IsClosed():
		c.Close() // another caller's dial was installed first
		return l.conn, nil
	}
	l.conn, l.block = c, watchBlocked(c)
	return c, nil
}

// identityWait bounds the management API's overview when a connection is
// checked against it: AMQP work does not wait on a slow API.
const identityWait = 3 * time.Second

// identityCheck is a same-broker check under way: err is set when done is
// closed.
type identityCheck struct {
	done chan struct{}
	err  error
}

// verifySameBroker is Snapshot's check that AMQP reaches the cluster the
// management API reads, once per client. AMQP that cannot be reached is
// not the snapshot's failure (the API's data stands on its own; a peek or
// move will say): two brokers are, and a vhost the AMQP broker does not
// have while the API's does (it names the AMQP address: the other broker).
// One check runs at a time, bounded by the dial's own timeouts, not by the
// ctx of the caller that began it; callers wait on it until their ctx ends.
func (l *Live) verifySameBroker(ctx context.Context) error {
	l.mu.Lock()
	if l.checked {
		l.mu.Unlock()
		return nil
	}
	chk := l.identity
	if chk == nil {
		chk = &identityCheck{done: make(chan struct{})}
		l.identity = chk
		go func() {
			_, err := l.connection(context.WithoutCancel(ctx))
			if !errors.Is(err, broker.ErrTwoBrokers) && !errors.Is(err, broker.ErrVhostNotFound) {
				err = nil
			}
			l.mu.Lock()
			l.identity = nil
			l.mu.Unlock()
			chk.err = err
			close(chk.done)
		}()
	}
	l.mu.Unlock()
	select {
	case <-chk.done:
		return chk.err
	case <-ctx.Done():
		return nil
	}
}

// browseConnection returns the connection browses read on, dialling again
// when the previous one was closed.
func (l *Live) browseConnection(ctx context.Context) (*amqp.Connection, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.browse != nil && !l.browse.IsClosed() {
		return l.browse, nil
	}
	c, err := l.r.DialAMQP(ctx, l.purpose+" browse")
	if err != nil {
		return nil, err
	}
	l.browse = c
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

// Peek implements Client. How it browses is decided from the queue and the
// broker's version before any message is touched (PeekModeOf): a quorum
// queue on 4.3+ over AMQP 1.0 (released: no delivery counted); a quorum
// queue without that browse is refused under read-only mode, and refused
// unless forced when the delivery it counts goes toward a delivery limit.
func (l *Live) Peek(ctx context.Context, queue string, opt broker.PeekOptions) (*broker.PeekResult, error) {
	q, err := l.mgmt.Queue(ctx, l.r.Vhost, queue)
	if err != nil {
		return nil, fmt.Errorf("peek: %w", err)
	}
	version, err := l.mgmt.BrokerVersion(ctx)
	if err != nil {
		return nil, err
	}
	if opt.Limit <= 0 {
		opt.Limit = broker.DefaultPeekLimit
	}
	if opt.BodyPreview <= 0 {
		opt.BodyPreview = broker.DefaultBodyPreview
	}
	// Exact depth and consumers: management counters lag by up to 5 s
	// (only unacked comes from there). Asked before ladder attaches
	// anything, so that the consumers counted are others'.
	conn, err := l.browseConnection(ctx)
	if err != nil {
		return nil, err
	}
	if q.Type != topology.QueueStream {
		if ready, consumers, err := passiveState(conn, queue); err == nil {
			q.Ready, q.Consumers, q.ConsumersUnknown = int64(ready), consumers, false
			q.Messages = q.Ready + q.Unacked
		}
	}
	// Discovery labels what the peek shows, and says whether the queue's
	// messages carry their own TTLs (a wait queue): cached bindings will do.
	v, err := l.mgmt.read(ctx, l.r.Vhost, false, false)
	if err != nil {
		return nil, err
	}
	l.evidence.Apply(&v)
	ladders := topology.Discover(&v)
	if seen, ok := v.Queue(queue); ok {
		q.Seen = seen.Seen
	}
	mode, because := broker.PeekModeOf(q, version), ""
	var browser *amqp1Receiver
	if mode == broker.PeekReleased {
		// Attaching delivers nothing: if AMQP 1.0 is not there, nothing
		// was touched and the costly browse's rules apply. Nor is it for a
		// queue whose last browse the broker ended: it would end there
		// again, every message it held counted a delivery.
		if why := l.brokenBrowse(queue); why != "" {
			mode, because = broker.PeekConsumeClose, why
		} else if browser, err = l.attachBrowse(ctx, queue); err != nil {
			mode, because = broker.PeekConsumeClose, "the costless browse over AMQP 1.0 failed: "+amqp1Reason(err)
		}
	}
	cost := broker.WithReleases(broker.PeekCostVia(q, version, mode), q, &v, ladders)
	if r := broker.PeekRefusal(q, version, cost, l.r.ReadOnly, opt.Force, because); r != nil {
		// The question asked next says how many it reads: the exact
		// depth (the management API's lags), which touches no message.
		r.Limit = opt.Limit
		if browser != nil {
			browser.close()
		}
		return nil, r
	}
	dec := decode.NewDecoder(&v, ladders, queue)
	if browser != nil {
		res, redelivered, ended, err := peekAMQP1(ctx, browser, q, version, opt, dec)
		if ended != nil {
			if sessionEnded(ended) {
				l.dropAMQP1(browser.s)
			}
			res.SideEffects = append(res.SideEffects, "ladder's next peeks of this queue count a delivery: "+l.breakBrowse(queue, ended))
		}
		l.noteOwn(queue, redelivered)
		if err != nil {
			return nil, err
		}
		broker.NoteLeft(res, q, broker.OthersSeen{ConsumersBefore: q.Consumers, Unacked: q.Unacked}, 0, time.Now())
		res = finishPeek(res, q)
		l.evidence.Note(l.r.Vhost, res)
		return res, nil
	}
	res, err := peekQueue(ctx, conn, q, version, opt, dec)
	if err != nil {
		return nil, err
	}
	if because != "" && res.Read() > 0 {
		res.SideEffects = append(res.SideEffects, because)
	}
	l.noteOwn(queue, res.Redeliveries())
	l.evidence.Note(l.r.Vhost, res)
	return res, nil
}

// brokenBrowse is why queue has no costless browse for this client: the
// broker ended an earlier AMQP 1.0 browse of it ("" when it did not).
func (l *Live) brokenBrowse(queue string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.amqp1Broken[queue]
}

// breakBrowse remembers, for the client's lifetime, that the broker ended
// an AMQP 1.0 browse of queue (RabbitMQ 4.3.6 does at a message it cannot
// convert, every time): its next peeks are costly ones, refused under
// read-only mode and asked for toward a limit. It returns why.
func (l *Live) breakBrowse(queue string, ended *amqp1Ended) string {
	why := "an earlier browse over AMQP 1.0 was ended by the broker (" + amqp1Reason(ended.Err) + ")"
	if amqp1CrashHint(ended.Err) != "" {
		why = "an earlier browse over AMQP 1.0 ended at a message RabbitMQ could not convert (a header holding a decimal does that)"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.amqp1Broken == nil {
		l.amqp1Broken = map[string]string{}
	}
	l.amqp1Broken[queue] = why
	return why
}

// attachBrowse attaches an AMQP 1.0 receiver to queue on the client's AMQP
// 1.0 session, opening it first when there is none (or it has ended). Two
// first browses at once may each open one: the one installed first is
// kept and the other closed before any use, so no browse loses its session
// to another's.
func (l *Live) attachBrowse(ctx context.Context, queue string) (*amqp1Receiver, error) {
	if l.amqp1Refused != nil {
		return nil, l.amqp1Refused
	}
	for try := 0; ; try++ {
		l.mu.Lock()
		s := l.amqp1
		l.mu.Unlock()
		fresh := s == nil
		if fresh {
			opened, err := openAMQP1Session(ctx, l.r, l.purpose)
			if err != nil {
				return nil, err
			}
			l.mu.Lock()
			if l.amqp1 == nil {
				l.amqp1 = opened
				s = opened
			} else {
				s = l.amqp1 // another browse's, installed meanwhile
			}
			l.mu.Unlock()
			if s != opened {
				opened.close()
			}
		}
		b, err := s.attach(ctx, queue)
		if err == nil || fresh || try > 0 || !sessionEnded(err) {
			return b, err
		}
		// The cached session has ended (the broker ends one it cannot send
		// a message on): once more on a new one.
		l.dropAMQP1(s)
	}
}

// sessionEnded says whether err ended the AMQP 1.0 session (or its
// connection), not just one link: only then is the session dropped, since
// other browses may be using it.
func sessionEnded(err error) bool {
	var se *amqp1.SessionError
	var ce *amqp1.ConnError
	return errors.As(err, &se) || errors.As(err, &ce)
}

// dropAMQP1 forgets s, the client's AMQP 1.0 session, and closes it (it
// has ended: see sessionEnded).
func (l *Live) dropAMQP1(s *amqp1Session) {
	l.mu.Lock()
	if l.amqp1 == s {
		l.amqp1 = nil
	}
	l.mu.Unlock()
	s.close()
}

// passiveDepth asks the queue itself for its ready count, on a throwaway
// channel (a missing queue closes the channel it was asked on).
func passiveDepth(conn *amqp.Connection, queue string) (int, error) {
	ready, _, err := passiveState(conn, queue)
	return ready, err
}

// passiveState is passiveDepth with the queue's consumer count, as exact.
func passiveState(conn *amqp.Connection, queue string) (ready, consumers int, err error) {
	ch, err := conn.Channel()
	if err != nil {
		return 0, 0, err
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		return 0, 0, err
	}
	return q.Messages, q.Consumers, nil
}

// QueueDepths asks each queue for its ready count over AMQP alone
// (passive declares on one channel): what a UI can still show while the
// management API is slow. A queue that no longer exists is left out (it
// closes the channel it was asked on: the next gets a new one). It stops
// at ctx's end with what it has.
func (l *Live) QueueDepths(ctx context.Context, queues []string) (map[string]int64, error) {
	conn, err := l.connection(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(queues))
	var ch *amqp.Channel
	defer func() {
		if ch != nil {
			ch.Close()
		}
	}()
	for _, q := range queues {
		if ctx.Err() != nil {
			return out, nil
		}
		if ch == nil || ch.IsClosed() {
			if ch, err = conn.Channel(); err != nil {
				return out, AMQPFailure(conn, "queue depths", err, nil)
			}
		}
		st, err := ch.QueueDeclarePassive(q, false, false, false, false, nil)
		var ae *amqp.Error
		switch {
		case err == nil:
			out[q] = int64(st.Messages)
		case errors.As(err, &ae) && ae.Server && (ae.Code == amqp.NotFound || ae.Code == amqp.AccessRefused || ae.Code == amqp.ResourceLocked):
			// gone since the API last listed it, or not the user's to ask
		default:
			return out, AMQPFailure(conn, "queue depths", err, nil)
		}
	}
	return out, nil
}

// Close implements Client.
func (l *Live) Close() error {
	l.mgmt.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.amqp1 != nil {
		l.amqp1.close()
		l.amqp1 = nil
	}
	var errs []error
	for _, c := range []*amqp.Connection{l.browse, l.conn} {
		if c != nil && !c.IsClosed() {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// Audit refuses: the live client audits nothing itself; its actions pass
// the gate (internal/gate), which writes them.
func (l *Live) Audit(broker.AuditEvent) error { return broker.ErrUnaudited }
