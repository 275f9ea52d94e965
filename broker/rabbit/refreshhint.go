package rabbit

import (
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// bindingsTTL bounds how stale cached bindings may be: as stale as a full
// read gets. m.mu is held.
func (m *Management) bindingsTTL() time.Duration {
	if m.last == nil {
		return topologyTTL
	}
	return FullEvery(len(m.last.queues))
}

// RefreshHint is the refresh AutoRefresh gives the vhost last read: steady
// when Prometheus serves the refreshes between full reads.
func (m *Management) RefreshHint() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		return broker.BaseRefresh
	}
	return AutoRefresh(len(m.last.queues), m.promUsable(time.Now()))
}
