// Package sim is an in-process RabbitMQ simulation that implements
// broker.Client: the demo broker behind `ladder demo` and the UI tests.
//
// It models what retry ladders depend on, the way RabbitMQ does it: direct,
// fanout, topic and headers exchanges (routing is the retry engine's own
// Router), FIFO classic queues, queue and per-message TTL that expire only at
// the head (so head-of-line blocking shows), dead-lettering with a faithful
// x-death header, x-expires, and a simulated clock. A workload of producers
// and workers keeps the demo topology busy; the orders worker retries through
// the retry engine (ReadState, Plan) like a worker built on it would.
//
// There is no goroutine: the simulation advances lazily, on every Client
// call, by the wall time since the previous call times Options.Speed, and by
// Advance for deterministic tests.
package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/analysis"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Options configure a simulation.
type Options struct {
	// Speed is simulated seconds per wall-clock second; 0 (or less) means 1.
	Speed float64
	// Seed makes the workload's random choices repeatable.
	Seed int64
	// Now is the wall clock; nil means time.Now. Tests pass a fixed clock
	// and move the simulation with Advance.
	Now func() time.Time
	// ReadOnly makes Move, Publish and Drain refuse with
	// broker.ErrReadOnly, as the live client does in read-only mode; a dry
	// run, which changes nothing, is still answered.
	ReadOnly bool
	// WarmUp runs the workload for this long before New returns, so the demo
	// opens with messages in the tiers and the dead-letter queues. The
	// simulated clock starts WarmUp before Now, so it reads wall time after.
	WarmUp time.Duration
	// Quiet declares the topology without producers and workers (and so
	// without their consumers): for tests that put messages in by hand.
	Quiet bool
	// BrokerVersion is the RabbitMQ version the simulation plays
	// (BrokerVersion by default): from 4.0 a move carries x-death on in
	// x-ladder-deaths, as ladder does with a real 4.x broker.
	BrokerVersion string
	// Conventions are the retry conventions its messages are read by
	// (the config file's declared ones first), as the live client's.
	Conventions retry.Table
}

// BrokerVersion is the version the simulation reports. 3.13 is the first
// release that writes x-last-death-*, which the simulation does too.
const BrokerVersion = "3.13.7"

// VhostName is the simulation's only virtual host.
const VhostName = "/"

// ErrClosed is returned by every call after Close.
var ErrClosed = errors.New("sim: closed")

// maxCatchUp bounds how much simulated time one call may process: after a
// long idle spell at high speed the simulation runs late rather than stall
// the caller.
const maxCatchUp = 15 * time.Minute

// Sim is the simulated broker. It is safe for concurrent use.
type Sim struct {
	mu       sync.Mutex
	opt      Options
	now      time.Time // simulated time
	lastWall time.Time
	closed   bool

	queues    []*queue // in declaration order (deterministic iteration)
	byName    map[string]*queue
	exchanges []topology.Exchange
	bindings  []topology.Binding
	topo      *topoCache // nil when the topology changed
	// evidence is what peeks showed about queues' roles, applied to
	// every discovery (as the live client does); memory is it and the
	// history of snapshots, which each snapshot is analysed with.
	evidence broker.Evidence
	memory   *analysis.Memory

	producers []*producer
	workers   []*worker
	rng       *rand.Rand
	seq       uint64 // message sequence, for ids
	moves     uint64 // moves run, for x-ladder-move-id
	nextTick  time.Time
	stats     Stats
	// nextLongRetry is when the payment provider next answers with a long
	// retry-after (paymentsLongDelay), the demo's head-of-line block.
	nextLongRetry time.Time
}

var _ broker.Client = (*Sim)(nil)

// New builds the demo topology (see topology.go) and, unless Quiet, its workload.
func New(opt Options) *Sim {
	if opt.Speed <= 0 {
		opt.Speed = 1
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.BrokerVersion == "" {
		opt.BrokerVersion = BrokerVersion
	}
	wall := opt.Now()
	s := &Sim{
		opt:      opt,
		now:      wall.Add(-opt.WarmUp).Round(0), // Round(0) drops the monotonic reading
		lastWall: wall,
		byName:   map[string]*queue{},
		rng:      rand.New(rand.NewPCG(uint64(opt.Seed), 0x1add3e)),
	}
	s.evidence.Teach(opt.Conventions)
	s.memory = analysis.NewMemory(&s.evidence)
	s.nextTick = s.now.Truncate(time.Second).Add(time.Second)
	s.nextLongRetry = s.now.Add(paymentsLongFirst)
	s.declareDemo()
	if !opt.Quiet {
		s.startWorkload()
	}
	if opt.WarmUp > 0 {
		s.runTo(s.now.Add(opt.WarmUp))
	}
	return s
}

// Advance moves the simulation forward by d of simulated time, independent
// of the wall clock.
func (s *Sim) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d > 0 {
		s.runTo(s.now.Add(d))
	}
}

// Now is the simulated time.
func (s *Sim) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.catchUp()
	return s.now
}

// catchUp advances the simulation by the wall time since the last call.
// Callers hold mu.
func (s *Sim) catchUp() {
	wall := s.opt.Now()
	d := time.Duration(float64(wall.Sub(s.lastWall)) * s.opt.Speed)
	s.lastWall = wall
	if d <= 0 {
		return
	}
	s.runTo(s.now.Add(min(d, maxCatchUp)))
}

// enter locks, catches up and reports whether the simulation is still open.
// The caller must unlock, whatever enter returns.
func (s *Sim) enter() error {
	s.mu.Lock()
	if s.closed {
		return ErrClosed
	}
	s.catchUp()
	return nil
}

// Vhosts lists the one virtual host.
func (s *Sim) Vhosts(ctx context.Context) ([]string, error) {
	defer s.mu.Unlock() // enter locks, even when it fails
	if err := s.enter(); err != nil {
		return nil, err
	}
	return []string{VhostName}, nil
}

// Vhost is "/".
func (s *Sim) Vhost() string { return VhostName }

// BrokerVersion implements broker.Client.
func (s *Sim) BrokerVersion(context.Context) (string, error) { return s.opt.BrokerVersion, nil }

// ReadOnly reports Options.ReadOnly.
func (s *Sim) ReadOnly() bool { return s.opt.ReadOnly }

// Close stops the workload; later calls return ErrClosed.
func (s *Sim) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.producers, s.workers = nil, nil
	for _, q := range s.queues {
		q.consumers = 0
	}
	s.topo = nil
	return nil
}

// Stats are simulation-wide counters the broker would only show as node
// metrics; the demo and tests read them.
type Stats struct {
	Published       int64 // messages published by clients
	Unroutable      int64 // client publishes that reached no queue
	DeadLettered    int64 // dead letters delivered to at least one queue
	DeadLetterDrops int64 // dead letters whose route reached no queue
	CycleDrops      int64 // dead letters dropped as an automatic cycle
	Discarded       int64 // expired or rejected with no dead-letter exchange
	Expired         int64 // messages that expired (dead-lettered or not)
	QueuesExpired   int64 // queues deleted by x-expires
	MaxLenDrops     int64 // messages a full drop-head queue pushed out of its head
	Refused         int64 // copies a full reject-publish queue refused
}

// Stats returns the counters.
func (s *Sim) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.catchUp()
	return s.stats
}

func (s *Sim) errorf(format string, args ...any) error {
	return fmt.Errorf("sim: "+format, args...)
}

// Audit refuses: the simulation audits nothing itself, as the live client
// does not; its actions pass the gate (internal/gate), which writes them.
func (s *Sim) Audit(broker.AuditEvent) error { return broker.ErrUnaudited }

// Failover: the simulation is one node.
func (s *Sim) Failover(context.Context) (broker.Client, string, error) {
	return nil, "", broker.ErrNoFailover
}
