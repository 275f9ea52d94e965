package rabbit

import (
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// How often ladder reads a vhost, by its size. Measured on a vhost of
// 2,500 queues (scripts/brokercpu.sh, BENCH.md): one full read (queues with
// their stats, exchanges) costs the broker about 0.1 ms of CPU per queue on
// 3.10 and 4.3, bindings 0.04–0.05 ms, a Prometheus read of the vhost's
// depths and counters about 0.012 ms; the management UI's Queues page,
// polled every 5 s, costs it 7–10 ms a second. An idle TUI is kept at about
// that: 3 ms/s for Prometheus reads, 3 ms/s for full reads, 1 ms/s for
// bindings, whatever the vhost's size. A small vhost is refreshed every
// broker.BaseRefresh; a bigger one less often, as these say.
const (
	// MaxRefresh bounds the refresh however big the vhost.
	MaxRefresh = time.Minute
	// perQueueSteady: between Prometheus reads, per queue (2,500 queues:
	// every 10 s).
	perQueueSteady = 4 * time.Millisecond
	// perQueueFull: between full reads when each refresh is one (no
	// usable Prometheus), per queue (2,500 queues: every 40 s).
	perQueueFull = 16 * time.Millisecond
	// perQueueFullRead: between full reads where Prometheus refreshes in
	// between, per queue (2,500 queues: every 2 min); bindings as often.
	perQueueFullRead = 50 * time.Millisecond
)

// TopologyTTL bounds how stale cached bindings may be.
const TopologyTTL = 30 * time.Second

// FullEvery is how old the last full read may get before a steady refresh
// makes a full read instead, for n queues: TopologyTTL (30 s) up to 600
// queues, then perQueueFullRead each.
func FullEvery(n int) time.Duration {
	return max(TopologyTTL, time.Duration(n)*perQueueFullRead)
}

// BigFor3x: a vhost of n queues is too big to read fully every refresh on
// 3.x with stats on (see promUsable): a full read every broker.BaseRefresh would
// cost the broker more than the budget above.
func BigFor3x(n int) bool { return time.Duration(n)*perQueueFull > broker.BaseRefresh }

// AutoRefresh is the TUI's refresh for a vhost of n queues: steady says
// whether refreshes between full reads read Prometheus (cheap) or each
// refresh is a full read.
func AutoRefresh(n int, steady bool) time.Duration {
	per := perQueueFull
	if steady {
		per = perQueueSteady
	}
	return min(MaxRefresh, max(broker.BaseRefresh, time.Duration(n)*per))
}
