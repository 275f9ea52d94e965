package ui

import (
	"context"
	"errors"
	"log"
	"strconv"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui/style"
)

// common is what every screen shares: keys, styles, mode and clock. The
// root owns it and hands the same pointer to each screen.
type common struct {
	// ctx is the program's context (ui.Run's): every broker call's context
	// derives from it, so its end (SIGTERM, ctrl+c outside the terminal)
	// cancels what runs, a move included, which then stops cleanly.
	ctx context.Context
	// policy, when set, offers its next delay in the move dialog.
	policy   *retry.Policy
	keys     *keymap.KeyMap
	styles   *style.Styles
	readOnly bool
	// who is who acts (Options.Who): refusals name them.
	who gate.Principal
	// files is where dumps go and replays come from (Options.Files).
	files Files
	now   func() time.Time
	// tick is tea.Tick; model tests that drive Update by hand replace it.
	tick func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
	log  *log.Logger
	// peekLimit is how many messages the browser asks Peek for.
	peekLimit int
	// refresh is the --refresh given; 0 adapts to the vhost (refreshEvery).
	refresh time.Duration
	// conn is the broker connection as the last snapshot left it; only the
	// root changes it, screens read it to grey their data.
	conn connState
}

// refused is what the screen says when read-only refuses action (a
// gate.Action): the principal's own refusal, naming the key's role or the
// context.
func (c *common) refused(action string) string {
	who := c.who
	who.ReadOnly = who.ReadOnly || c.readOnly
	if err := who.May(gate.Action(action)); err != nil {
		return err.Error()
	}
	return "read-only: " + action + " is disabled"
}

// connState tracks the polling loop's view of the broker.
type connState struct {
	loaded  bool      // a snapshot has arrived at least once
	down    bool      // the last snapshot failed
	attempt int       // failed snapshots in a row
	retryAt time.Time // when the next attempt starts
	// waiting: the failure will not mend by itself (a refused login, a
	// missing vhost, see broker.WaitsForUser), so nothing polls until r.
	waiting bool
	err     error
	lastOK  time.Time // when the data shown was taken
	gotAt   time.Time // when it arrived, by the UI's clock (its age)
	// apiSlow: the last failure was the management API not answering in
	// time (--api-timeout): slow, not down; AMQP may still answer.
	apiSlow bool
	// polling: when the snapshot in flight was asked (zero: none);
	// probed: AMQP was asked for depths during it.
	polling time.Time
	probed  bool
	// amqpAt: when AMQP last told the depths shown while the API was
	// slow; amqpErr: why it could not.
	amqpAt  time.Time
	amqpErr error
}

// slowAfter is how long a snapshot may be in flight before the UI says
// the management API is slow (and asks AMQP for depths meanwhile).
const slowAfter = 5 * time.Second

// pendingFor is how long the snapshot in flight has been waited for.
func (cs *connState) pendingFor(now time.Time) time.Duration {
	if cs.polling.IsZero() {
		return 0
	}
	return now.Sub(cs.polling)
}

// trouble is the word for a failed refresh: the management API slow (AMQP
// may be fine), or the broker unreachable.
func (cs *connState) trouble() string {
	if cs.apiSlow {
		return "management API slow"
	}
	return "broker unreachable"
}

// dataAge is "data from 14:06:35, 45s old" (the age once it is a second).
func (cs *connState) dataAge(now time.Time) string {
	s := "data from " + present.Clock(cs.lastOK)
	at := cs.gotAt
	if at.IsZero() {
		at = cs.lastOK
	}
	if age := now.Sub(at).Truncate(time.Second); age >= time.Second {
		s += ", " + present.Dur(age) + " old"
	}
	return s
}

// downText is the title bar's word on a failed broker: the reconnect
// countdown, or what is wrong and that r retries.
func (cs *connState) downText(now time.Time) string {
	if !cs.waiting && cs.apiSlow {
		return "API slow · " + cs.retryText(now)
	}
	if !cs.waiting {
		return cs.reconnectText(now)
	}
	return waitLabel(cs.err) + " · r retries"
}

// waitLabel names a failure that waits for the user in a couple of words.
func waitLabel(err error) string {
	switch {
	case errors.Is(err, broker.ErrLoginRefused):
		return "login refused"
	case errors.Is(err, broker.ErrVhostNotFound):
		return "vhost not found"
	case errors.Is(err, broker.ErrNoAccess):
		return "no access"
	case errors.Is(err, broker.ErrNotAMQP):
		return "wrong port"
	case errors.Is(err, broker.ErrTwoBrokers):
		return "two brokers"
	}
	return "broker refused"
}

// retryText is reconnectText, or "asking again (8s)" while the next
// attempt is in flight (a slow API takes up to --api-timeout to answer).
func (cs *connState) retryText(now time.Time) string {
	if !cs.polling.IsZero() {
		return "asking again (" + present.Dur(now.Sub(cs.polling).Truncate(time.Second)) + ")"
	}
	return cs.reconnectText(now)
}

// reconnectText is "reconnecting (3) in 4s", counted down from now.
func (cs *connState) reconnectText(now time.Time) string {
	left := present.CeilSeconds(cs.retryAt.Sub(now))
	if left <= 0 {
		return "reconnecting (" + strconv.Itoa(cs.attempt) + ") now"
	}
	return "reconnecting (" + strconv.Itoa(cs.attempt) + ") in " + present.Dur(left)
}

// screen is one child model under the root.
type screen interface {
	help.KeyMap
	Update(tea.Msg) tea.Cmd
	View() string
	SetSize(w, h int)
	// Capturing is true while the screen takes typed text: then every key
	// but ctrl+c goes to it, so q and ? can be typed.
	Capturing() bool
	// Back handles esc; false lets the root close the screen.
	Back() (handled bool, cmd tea.Cmd)
}

// refreshEvery is how long after snapshot s the next one is taken: the
// --refresh given, else what s says suits its vhost (a big one costs the
// broker more to read: broker.AutoRefresh), else broker.BaseRefresh.
func (c *common) refreshEvery(s *broker.Snapshot) time.Duration {
	switch {
	case c.refresh > 0:
		return c.refresh
	case s != nil && s.Refresh > 0:
		return s.Refresh
	}
	return broker.BaseRefresh
}
