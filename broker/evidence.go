package broker

import (
	"sync"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Evidence is what a client's peeks have shown about queues' roles, per
// vhost (topology.Evidence): the live client and the simulation note every
// peek here and apply it to every vhost they read afterwards — the
// snapshot, the peek's own labels, the move planner, dump and replay — so
// a ladder seen on the screen is the ladder an action plans on. It lives
// as long as the client; the zero value is ready.
//
// It also carries the retry conventions the user taught (Teach): every
// vhost it is applied to reads its messages by them.
type Evidence struct {
	mu      sync.Mutex
	byVhost map[string]topology.Evidence
	taught  retry.Table
}

// Teach makes t the conventions every vhost Apply sees is read by.
func (e *Evidence) Teach(t retry.Table) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.taught = t
}

// Note folds what the messages a peek of vhost read showed (kept or
// handed to PeekOptions.Each alike); it reports whether that told anything
// new (a cache of discovery is then stale).
func (e *Evidence) Note(vhost string, res *PeekResult) bool {
	if res == nil || len(res.seen) == 0 {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.byVhost == nil {
		e.byVhost = map[string]topology.Evidence{}
	}
	known := e.byVhost[vhost]
	if known == nil {
		known = topology.Evidence{}
		e.byVhost[vhost] = known
	}
	changed := false
	for q, s := range res.seen {
		before := known[q]
		known.Merge(topology.Evidence{q: s})
		changed = changed || !before.Equal(known[q])
	}
	return changed
}

// Apply folds what was noted of v's vhost into v's queues.
func (e *Evidence) Apply(v *topology.Vhost) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v.Apply(e.byVhost[v.Name])
	v.Conventions = e.taught
}

// Remember folds learned, seen before this client (by an earlier run: see
// internal/learned), into what is known of vhost, as if its peeks had
// been made here.
func (e *Evidence) Remember(vhost string, learned topology.Evidence) {
	if len(learned) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.byVhost == nil {
		e.byVhost = map[string]topology.Evidence{}
	}
	known := e.byVhost[vhost]
	if known == nil {
		known = topology.Evidence{}
		e.byVhost[vhost] = known
	}
	known.Merge(learned)
}

// Known is a copy of everything known, by vhost: what a run leaves for
// the next (internal/learned).
func (e *Evidence) Known() map[string]topology.Evidence {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]topology.Evidence, len(e.byVhost))
	for vhost, known := range e.byVhost {
		c := make(topology.Evidence, len(known))
		c.Merge(known)
		out[vhost] = c
	}
	return out
}
