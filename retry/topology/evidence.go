package topology

import (
	"slices"

	"github.com/ladder-tui/ladder/retry"
)

// Seen is evidence from messages about a queue's role.
type Seen struct {
	// Expiration: messages waited here for their expiration: one sitting
	// here carries a per-message expiration (only publishers set one:
	// dead-lettering strips it), or x-death says messages expired here.
	Expiration bool
	// Rejected: x-death says messages were rejected here, or hit a
	// delivery limit: a consumer works this queue.
	Rejected bool
	// FailedIn are the queues that messages sitting here failed in, by
	// their framework's headers (Watermill's topic_poisoned, Moleculer's
	// x-original-group and -channel: moveplan.FailedIn), sorted, at most
	// maxFailedIn: what ties a shared error queue, fed by publishing and
	// named by configuration, to the endpoints whose failures it holds.
	FailedIn []string
	// Look is what the latest peek saw of this queue's messages'
	// expirations (nil when none was made or kept its messages).
	Look *Look
}

// maxFailedIn bounds Seen.FailedIn: a shared error queue of more
// endpoints than that is linked to the first ones seen.
const maxFailedIn = 64

func (s Seen) merge(o Seen) Seen {
	s.Expiration = s.Expiration || o.Expiration
	s.Rejected = s.Rejected || o.Rejected
	for _, q := range o.FailedIn {
		s = s.failedIn(q)
	}
	s.Look = s.Look.later(o.Look)
	return s
}

func (s Seen) failedIn(q string) Seen {
	i, found := slices.BinarySearch(s.FailedIn, q)
	if found || q == "" || len(s.FailedIn) >= maxFailedIn {
		return s
	}
	s.FailedIn = slices.Insert(slices.Clone(s.FailedIn), i, q)
	return s
}

// Evidence is what messages read so far showed about queues' roles, by
// queue name: what a client remembers of its peeks and applies to every
// vhost it reads afterwards (Vhost.Apply), so discovery on the screen, in
// a command and in the move planner weighs the same evidence.
type Evidence map[string]Seen

// Observe folds one message read from queue (a peek) into e: whether it
// carries a per-message expiration, where its x-death entries say it died
// and why, and the queue it failed in by its framework's headers ("" when
// none says).
func (e Evidence) Observe(queue string, expiration bool, deaths []retry.Death, failedIn string) {
	mark := func(name string, s Seen) { e[name] = e[name].merge(s) }
	if expiration {
		mark(queue, Seen{Expiration: true})
	}
	for _, d := range deaths {
		switch d.Reason {
		case retry.ReasonExpired:
			mark(d.Queue, Seen{Expiration: true})
		case retry.ReasonRejected, retry.ReasonDeliveryLimit:
			mark(d.Queue, Seen{Rejected: true})
		}
	}
	if failedIn != "" && failedIn != queue {
		mark(queue, Seen{FailedIn: []string{failedIn}})
	}
}

// Merge folds o into e.
func (e Evidence) Merge(o Evidence) {
	for q, s := range o {
		e[q] = e[q].merge(s)
	}
}

// Apply folds e into the Seen of v's queues; queues not in v are ignored.
func (v *Vhost) Apply(e Evidence) {
	if len(e) == 0 {
		return
	}
	for i := range v.Queues {
		if s, ok := e[v.Queues[i].Name]; ok {
			v.Queues[i].Seen = v.Queues[i].Seen.merge(s)
		}
	}
}

// Observe folds one message read from queue (a peek) into the queues'
// Seen (see Evidence.Observe). Queues not in v are ignored.
func (v *Vhost) Observe(queue string, expiration bool, deaths []retry.Death) {
	e := Evidence{}
	e.Observe(queue, expiration, deaths, "")
	v.Apply(e)
}

// Equal reports whether s and o say the same.
func (s Seen) Equal(o Seen) bool {
	return s.Expiration == o.Expiration && s.Rejected == o.Rejected && slices.Equal(s.FailedIn, o.FailedIn) && s.Look.equal(o.Look)
}
