package ui

import (
	"slices"
	"sync"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
)

// Screens driven alone, each on a fake of only the roles it takes: what a
// screen asks of the broker is what its constructor's type says.

// The browser reads its queue through a usecase.DumpSource: a peek shows
// the messages, asked for the browser's limit, and nothing else is read.
func TestBrowserAloneOnItsRoles(t *testing.T) {
	mu := new(sync.Mutex)
	src := struct {
		*fakeSnapshots
		*fakePeeks
		fakeNoWrites
	}{
		&fakeSnapshots{mu: mu, vhost: "/", snap: fixtureSnapshot()},
		&fakePeeks{mu: mu, peeks: map[string]*broker.PeekResult{"orders.dlq": fixturePeek(3)}},
		fakeNoWrites{},
	}
	c := screenCommon()
	b := newBrowser(c, func() usecase.DumpSource { return src })
	h := newScreenHarness(t, b, 120, 30)
	h.run(b.open("orders.dlq"))
	h.mustContain("msg-0000", "msg-0002")
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(src.peeked, []string{"orders.dlq"}) || src.peekOpts[0].Limit != c.peekLimit {
		t.Errorf("peeks %v with %+v, want one of orders.dlq at limit %d", src.peeked, src.peekOpts, c.peekLimit)
	}
	if src.snaps != 0 {
		t.Errorf("the browser took %d snapshots: the root takes them", src.snaps)
	}
}

// The vhost switcher lists the session's vhosts, stars the client's own
// and asks to open the one chosen: Vhosts and Vhost are all it reads.
func TestVhostSwitcherAloneOnItsRoles(t *testing.T) {
	mu := new(sync.Mutex)
	src := struct {
		*fakeSnapshots
		*fakeSession
	}{
		&fakeSnapshots{mu: mu, vhost: "staging"},
		&fakeSession{mu: mu, vhosts: []string{"/", "staging", "prod"}},
	}
	v := newVhosts(screenCommon(), func() vhostSource { return src })
	h := newScreenHarness(t, v, 60, 10)
	h.run(v.open())
	h.mustContain("Switch vhost", "  /", "* staging", "  prod")
	h.key("down", "enter")
	h.mustContain("prod (opening…)")
	if src.closed {
		t.Error("the switcher closed the client: that is the root's, after the switch")
	}
}
