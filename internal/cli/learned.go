package cli

import (
	"slices"
	"strings"
	"sync"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/learned"
)

// learnedRun is what this run's clients remember of each broker: loaded
// from the user's cache when the first client of that broker is made
// (unless --fresh), shared by every client of it (a vhost switch's too),
// and saved when the run ends, so that what a peek showed is known to the
// next command (internal/learned).
type learnedRun struct {
	mu       sync.Mutex
	store    *learned.Store // nil: no cache directory
	byBroker map[string]*learnedBroker
	notes    []string
}

type learnedBroker struct {
	base learned.Memory
	ev   *broker.Evidence
}

// brokerKey names the broker r reaches by its nodes' addresses (scheme,
// host and port, never credentials): the same broker however its URL
// spells the user.
func brokerKey(r *rabbit.Resolved) string {
	all := r.Addresses
	if len(all) == 0 {
		all = []*rabbit.Resolved{r}
	}
	keys := make([]string, 0, len(all))
	for _, a := range all {
		keys = append(keys, a.AMQP.Scheme+"://"+a.Address())
	}
	slices.Sort(keys)
	return strings.Join(slices.Compact(keys), ",")
}

func (a *app) learnedRun() *learnedRun {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.learned == nil {
		lr := &learnedRun{byBroker: map[string]*learnedBroker{}}
		if dir, err := learned.Dir(); err != nil {
			lr.notes = append(lr.notes, err.Error())
		} else {
			lr.store = &learned.Store{Dir: dir, Note: func(s string) { lr.notes = append(lr.notes, s) }}
		}
		a.learned = lr
	}
	return a.learned
}

// evidenceFor is the evidence every client of r's broker shares this run:
// what earlier runs learned of it, unless --fresh.
func (a *app) evidenceFor(r *rabbit.Resolved) *broker.Evidence {
	lr := a.learnedRun()
	lr.mu.Lock()
	defer lr.mu.Unlock()
	key := brokerKey(r)
	if b := lr.byBroker[key]; b != nil {
		return b.ev
	}
	b := &learnedBroker{base: learned.Memory{}, ev: &broker.Evidence{}}
	if lr.store != nil && !a.fresh {
		b.base = lr.store.Load(key)
		for vhost, e := range b.base.Evidence() {
			b.ev.Remember(vhost, e)
		}
	}
	lr.byBroker[key] = b
	return b.ev
}

// saveLearned keeps what this run's clients know for the next run; a
// cache that cannot be written is a debug note, never a failure.
func (a *app) saveLearned() {
	lr := a.learned
	if lr == nil || lr.store == nil {
		return
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	for key, b := range lr.byBroker {
		if err := lr.store.Save(key, b.base, b.ev.Known()); err != nil {
			lr.notes = append(lr.notes, err.Error())
		}
	}
}

// learnedNotes are what the cache ignored or could not do, for the debug
// log.
func (a *app) learnedNotes() []string {
	if a.learned == nil {
		return nil
	}
	a.learned.mu.Lock()
	defer a.learned.mu.Unlock()
	return slices.Clone(a.learned.notes)
}
