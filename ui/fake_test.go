package ui

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/analysis"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// The test fake comes in role-sized pieces, one per broker role (or a
// pair that reads the same state), so a test of one screen or command
// builds only the pieces for the roles it takes; fakeClient composes them
// all for the root-level flows, which take a whole broker.Client.
//
// Every piece locks mu, a pointer: the composed fake points them all at
// its own lock, so a test that holds fakeClient.mu may change any piece
// while the UI's commands run. A piece used alone is given a lock of its
// own (new(sync.Mutex)).

// fakeSnapshots answers Snapshot (broker.Snapshotter) and the
// TopologyReader role, both from one snapshot of one vhost.
type fakeSnapshots struct {
	mu       *sync.Mutex
	vhost    string
	snap     *broker.Snapshot
	snapErr  error
	snaps    int
	topology bool // Topology answers from snap
	// allVhosts, when set, is every vhost as AllVhosts reads them, given
	// the snapshot's topology: analysed with memory, as a client does
	// (each listing 2 s after the last).
	allVhosts func(topology.Vhost) []topology.Vhost
	memory    *analysis.Memory
	listings  int
	history   *analysis.History
}

var (
	_ broker.Snapshotter    = (*fakeSnapshots)(nil)
	_ broker.TopologyReader = (*fakeSnapshots)(nil)
)

func (f *fakeSnapshots) Snapshot(ctx context.Context) (*broker.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snaps++
	if f.snapErr != nil {
		return nil, f.snapErr
	}
	if f.snap == nil {
		return nil, nil
	}
	// Each read a snapshot of its own, as a broker's is, its canned
	// findings kept and its trends (unless canned) the analysis's of the
	// reads so far.
	s := *f.snap
	if s.Trends != nil {
		return &s, nil // canned
	}
	if f.history == nil {
		f.history = analysis.NewHistory()
	}
	depths := map[string]int64{}
	for _, q := range s.Topology.Queues {
		depths[q.Name] = q.Messages
	}
	f.history.Record(s.TakenAt, depths)
	s.Trends = analysis.Trends(&s.Topology, f.history)
	return &s, nil
}

// Topology answers from the snapshot when topology is set (a dump and a
// group scan read it), else says the fake has none.
func (f *fakeSnapshots) Topology(context.Context) (topology.Vhost, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.topology && f.snap != nil {
		return f.snap.Topology, nil
	}
	return topology.Vhost{}, errors.New("fake: no topology")
}

func (f *fakeSnapshots) BrokerVersion(context.Context) (string, error) { return "4.1.0", nil }

// AllVhosts is the snapshot's topology for its vhost, when allVhosts says
// the fake reads every vhost at once (else it cannot, as a user who may
// not list all queues).
func (f *fakeSnapshots) AllVhosts(context.Context) ([]broker.VhostSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.allVhosts == nil || f.snap == nil {
		return nil, errors.New("fake: no listing of all vhosts")
	}
	if f.memory == nil {
		f.memory = analysis.NewMemory(nil)
	}
	f.listings++
	return f.memory.Overview(f.allVhosts(f.snap.Topology), "4.1.0", fixedNow.Add(time.Duration(f.listings)*2*time.Second)), nil
}
func (f *fakeSnapshots) Vhost() string { return f.vhost }

// fakePeeks answers Peek (broker.Peeker) with canned results by queue.
type fakePeeks struct {
	mu      *sync.Mutex
	peeks   map[string]*broker.PeekResult
	peekErr error
	peeked  []string
	// peekGate, when set, makes Peek report peekReport and wait until the
	// gate closes or its context ends (a read that takes a while).
	peekGate   chan struct{}
	peekReport broker.PeekProgress
	// peekEachFirst: a gated browse hands its messages on before it
	// waits (a read stopped half way, with what it read).
	peekEachFirst bool
	peekOpts      []broker.PeekOptions // what each Peek was asked
}

var _ broker.Peeker = (*fakePeeks)(nil)

func (f *fakePeeks) Peek(ctx context.Context, queue string, opt broker.PeekOptions) (*broker.PeekResult, error) {
	f.mu.Lock()
	f.peeked = append(f.peeked, queue)
	f.peekOpts = append(f.peekOpts, opt)
	gate, report := f.peekGate, f.peekReport
	var first []broker.Message
	if r, ok := f.peeks[queue]; ok && f.peekEachFirst && opt.Each != nil {
		first = slices.Clone(r.Messages)
	}
	f.mu.Unlock()
	if gate != nil {
		if opt.Progress != nil {
			opt.Progress(report)
		}
		for i := range first {
			if err := opt.Each(&first[i]); err != nil {
				return nil, err
			}
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, fmt.Errorf("peek %s: %w", queue, ctx.Err())
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.peekErr != nil {
		return nil, f.peekErr
	}
	if r, ok := f.peeks[queue]; ok {
		if opt.Each == nil {
			return r, nil
		}
		// As a client does: each message handed on, none kept.
		for i := range r.Messages {
			m := r.Messages[i]
			if err := opt.Each(&m); errors.Is(err, broker.ErrStopBrowse) {
				break
			} else if err != nil {
				return nil, err
			}
		}
		cp := *r
		cp.Messages = []broker.Message{}
		return &cp, nil
	}
	return &broker.PeekResult{Queue: queue, Type: "classic"}, nil
}

// fakeMoves answers Move (broker.Mover), recording each request. It moves
// the messages a peek of the source shows (from, sharing its lock; none
// when nil) and refuses while the session is read-only (session, if set).
type fakeMoves struct {
	mu       *sync.Mutex
	from     *fakePeeks
	session  *fakeSession
	moves    []broker.MoveRequest
	moveStep time.Duration // pause between progress reports (teatest flows)
	skipNote string        // when set, every message is skipped for this reason
}

var _ broker.Mover = (*fakeMoves)(nil)

// Move plans every requested position (or the first Limit of the peek) and
// reports progress message by message.
func (f *fakeMoves) Move(ctx context.Context, req broker.MoveRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	f.mu.Lock()
	f.moves = append(f.moves, req)
	var peek *broker.PeekResult
	if f.from != nil {
		peek = f.from.peeks[req.From]
	}
	step := f.moveStep
	skip := f.skipNote
	f.mu.Unlock()
	if f.session != nil && f.session.ReadOnly() {
		return nil, errors.New("read-only")
	}
	var msgs []broker.Message
	if peek != nil {
		for _, m := range peek.Messages {
			if len(req.Positions) > 0 && !slices.Contains(req.Positions, m.Position) {
				continue
			}
			msgs = append(msgs, m)
			if req.Limit > 0 && len(msgs) == req.Limit {
				break
			}
		}
	}
	rep := broker.NewMoveReport(req)
	rep.Requested, rep.Target = len(msgs), targetName(req.To)
	via, through := topology.ViaDirect, ""
	if req.Delay > 0 {
		via, through = topology.ViaTier, "orders.wait.5s"
	}
	if skip != "" {
		// As the live broker: skipped entries carry only the reason, and a
		// move that left messages behind returns ErrPartial.
		for _, m := range msgs {
			rep.Planned = append(rep.Planned, moveplan.Route{Position: m.Position, MessageID: m.Properties.MessageID, Skip: skip})
		}
		if req.DryRun {
			return rep, nil
		}
		rep.Skipped = len(msgs)
		return rep, fmt.Errorf("move from %s: moved 0 of %d (0 returned, 0 failed, %d skipped): %w", req.From, len(msgs), len(msgs), broker.ErrPartial)
	}
	if req.DryRun {
		for _, m := range msgs {
			p := moveplan.Route{Position: m.Position, MessageID: m.Properties.MessageID, Exchange: "", RoutingKey: req.To.Name, Via: via, Queue: through}
			rep.Planned = append(rep.Planned, p)
			rep.Count(p)
		}
		return rep, nil
	}
	start := time.Now()
	for i := range msgs {
		if step > 0 {
			select {
			case <-time.After(step):
			case <-ctx.Done():
				return rep, ctx.Err()
			}
		}
		rep.Moved++
		rep.Count(moveplan.Route{Via: via, Queue: through})
		if progress != nil {
			progress(broker.MoveProgress{Total: len(msgs), Done: i + 1, Moved: rep.Moved, Elapsed: time.Since(start)})
		}
	}
	return rep, nil
}

func targetName(t moveplan.Target) string {
	if t.Kind == moveplan.TargetExchange {
		return "exchange " + t.Name
	}
	if t.Kind == moveplan.TargetOrigin {
		return "origin"
	}
	return "queue " + t.Name
}

// fakeSession answers the Session role: the vhosts to switch to, whether
// mutations are refused, and Close (recorded).
type fakeSession struct {
	mu       *sync.Mutex
	vhosts   []string
	readOnly bool
	closed   bool
}

var _ broker.Session = (*fakeSession)(nil)

func (f *fakeSession) Vhosts(ctx context.Context) ([]string, error) { return f.vhosts, nil }
func (f *fakeSession) ReadOnly() bool                               { return f.readOnly }
func (f *fakeSession) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// fakeNoWrites stands in for the Publisher and Drainer roles, which no
// test of the fake reaches (dumps browse; the flows that replay or drain
// run on the simulation): each says so if called.
type fakeNoWrites struct{}

var (
	_ broker.Publisher = fakeNoWrites{}
	_ broker.Drainer   = fakeNoWrites{}
)

func (fakeNoWrites) Publish(context.Context, []broker.Outgoing) ([]broker.Outcome, error) {
	return nil, errors.New("fake: no publish")
}
func (fakeNoWrites) Drain(context.Context, string, int, func(*broker.Message) (bool, error)) (int, error) {
	return 0, errors.New("fake: no drain")
}

func (fakeNoWrites) PublishLimits(context.Context) (broker.PublishLimits, error) {
	return broker.PublishLimits{}, errors.New("fake: no publish")
}

// Audit refuses, as a client not behind the gate does.
func (fakeNoWrites) Audit(broker.AuditEvent) error { return broker.ErrUnaudited }
func (fakeNoWrites) Failover(context.Context) (broker.Client, string, error) {
	return nil, "", broker.ErrNoFailover
}

// fakeClient is every piece: a broker.Client with canned answers, for the
// root-level model tests and flows.
type fakeClient struct {
	// mu is every piece's lock (see above).
	mu sync.Mutex
	fakeSnapshots
	fakePeeks
	fakeMoves
	fakeSession
	fakeNoWrites
}

var _ broker.Client = (*fakeClient)(nil)

// newFakeClient composes the pieces on one lock, the moves planned from
// the peeks and refused by the session.
func newFakeClient() *fakeClient {
	f := &fakeClient{}
	f.fakeSnapshots.mu, f.fakePeeks.mu, f.fakeMoves.mu, f.fakeSession.mu = &f.mu, &f.mu, &f.mu, &f.mu
	f.fakeMoves.from, f.fakeMoves.session = &f.fakePeeks, &f.fakeSession
	return f
}

// --- fixtures ---

// fixedNow is the clock of every model test, so ages and due times are stable.
var fixedNow = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

const evilQueue = "evil\x1b]0;pwned\x07"

func queue(name string, ready, unacked int64, consumers int, pub, del float64) topology.Queue {
	return topology.Queue{
		Name: name, Type: topology.QueueClassic, Consumers: consumers,
		Messages: ready + unacked, Ready: ready, Unacked: unacked,
		Rates: topology.Rates{Known: true, Publish: pub, Deliver: del, Ack: del, Net: pub - del, NetKnown: true,
			In: pub, InSource: topology.InFromPublish, InKnown: true},
	}
}

func fixtureSnapshot() *broker.Snapshot {
	qs := []topology.Queue{
		queue("orders", 1204, 12, 4, 50, 58.5),
		queue("orders.retry.5s", 30, 0, 0, 2, 2),
		queue("orders.retry.1m", 8, 0, 0, 0.4, 0.4),
		queue("orders.dlq", 12, 0, 0, 0.1, 0),
		queue("payments", 0, 0, 2, 3, 3),
		queue("payments.wait", 7, 0, 0, 0, 0),
		queue("audit", 5, 0, 1, 1, 1),
		queue(evilQueue, 1, 0, 0, 0, 0),
	}
	qs[4].Type = topology.QueueQuorum
	return &broker.Snapshot{
		Vhost: "/", BrokerVersion: "4.1.0", TakenAt: fixedNow,
		Topology: topology.Vhost{Name: "/", Queues: qs},
		Ladders: []retry.Ladder{
			{
				Main: "orders",
				Tiers: []retry.Tier{
					{Queue: "orders.retry.5s", TTL: 5 * time.Second},
					{Queue: "orders.retry.1m", TTL: time.Minute},
				},
				DelayedExchanges: []retry.DelayedExchange{{Name: "orders.delayed", MessagesDelayed: 4}},
				DLQ:              "orders.dlq",
			},
			{Main: "payments", Tiers: []retry.Tier{{Queue: "payments.wait", TTL: -1}}},
		},
		Findings: []topology.Finding{
			{Code: topology.CodeStuck, Severity: topology.SeverityError, Queue: "payments.wait",
				Message: `7 messages here never return to "payments": this queue is fed by dead-lettering, which strips per-message expiration, and has no TTL and no consumers`},
			{Code: topology.CodeNoDLQ, Severity: topology.SeverityWarning, Queue: "payments",
				Message: "no dead-letter queue: this queue has no dead-letter exchange, so a message rejected for good (retries exhausted) is dropped"},
			{Code: topology.CodeHoLRisk, Severity: topology.SeverityWarning, Queue: "orders.retry.1m",
				Message: `wait queue for "orders" has no queue TTL, so it relies on per-message expiration: a long delay at the head holds back every shorter one behind it`},
			{Code: topology.CodeDeliveryLimit, Severity: topology.SeverityInfo, Queue: "payments",
				Message: "quorum queue with delivery-limit 20: a message's 21st return to it dead-letters the message; every requeue counts (from RabbitMQ 4.3 a nack with requeue does not), and before 4.3 a peek's too"},
		},
	}
}

func ts(d time.Duration) *time.Time {
	t := fixedNow.Add(-d)
	return &t
}

// fixtureMessage is a message with every kind of header worth showing.
func fixtureMessage(pos int) broker.Message {
	deaths := []retry.Death{
		{Queue: "orders.retry.1m", Reason: retry.ReasonExpired, Count: 2, Exchange: "orders.retry", RoutingKeys: []string{"orders.created"},
			Time: fixedNow.Add(-3 * time.Minute), OriginalExpiration: time.Minute, HasOriginalExpiration: true},
		{Queue: "orders", Reason: retry.ReasonRejected, Count: 3, Exchange: "orders-x", RoutingKeys: []string{"orders.created"},
			Time: fixedNow.Add(-10 * time.Minute)},
	}
	h := retry.Headers{
		"x-retry-count": int32(3),
		"x-last-error":  "timeout calling payments\x1b[31m (evil)",
		"x-big":         int64(1) << 40,
		"x-flag":        true,
		"x-ratio":       0.25,
		"x-raw":         []byte{0xde, 0xad, 0xbe, 0xef},
		"x-when":        fixedNow.Add(-time.Hour),
		"x-small":       int8(-1),
		"x-short":       int16(300),
		"x-death": []any{
			map[string]any{"queue": "orders.retry.1m", "reason": "expired", "count": int64(2)},
			map[string]any{"queue": "orders", "reason": "rejected", "count": int64(3)},
		},
	}
	body := fmt.Sprintf(`{"order_id":%d,"items":[{"sku":"A-1","qty":2}],"note":"hello\u001b]0;x\u0007"}`, 1000+pos)
	return broker.Message{
		Position: pos, Exchange: "orders-x", RoutingKey: "orders.created",
		Properties: broker.Properties{MessageID: fmt.Sprintf("msg-%04d", pos), Timestamp: ts(time.Duration(10+pos) * time.Minute),
			ContentType: "application/json", DeliveryMode: 2},
		Headers:  h,
		Retry:    retry.RetryState{Count: 3, Source: retry.SourceRetryCount, Kind: "int32", LastError: "timeout calling payments", ErrorSource: "x-last-error"},
		Deaths:   deaths,
		Origin:   &retry.Origin{Exchange: "orders-x", RoutingKey: "orders.created"},
		HoL:      &topology.HoLMark{Position: pos, DueAt: fixedNow.Add(time.Duration(pos-1) * 20 * time.Second), TTL: time.Minute, BlockedBy: -1},
		BodySize: len(body), Body: []byte(body),
	}
}

func fixturePeek(n int) *broker.PeekResult {
	r := &broker.PeekResult{
		Queue: "orders.dlq", Type: "classic", Total: int64(n) + 5, Ready: int64(n),
		SideEffects: []string{"every browsed message was requeued: its redelivered flag is now set"},
		HoLBasis:    "publish timestamps",
		PeekedAt:    fixedNow,
	}
	for i := range n {
		m := fixtureMessage(i)
		if i == 2 {
			m.HoL.Blocked, m.HoL.BlockedBy = true, 1
		}
		if i == 0 {
			m.HoL.Overdue = 20 * time.Second
		}
		r.Messages = append(r.Messages, m)
	}
	return r
}

func newFake() *fakeClient {
	f := newFakeClient()
	f.vhost, f.snap = "/", fixtureSnapshot()
	f.peeks = map[string]*broker.PeekResult{"orders.dlq": fixturePeek(3)}
	f.vhosts = []string{"/", "staging"}
	return f
}

// --- driving a model without a program ---

// harness runs a Model synchronously: it applies messages and executes the
// commands they return, feeding results back. A command that has not
// answered after a short time (a wait, or work slowed by a busy machine)
// stays pending: its message is applied as soon as it comes, before the
// next key, and mustContain waits for pending work before it gives up, so
// no step depends on how fast the machine is.
type harness struct {
	t *testing.T
	m *Model // nil when the harness drives one screen (newScreenHarness)
	// update and view are the model's (m's, or the screen's).
	update    func(tea.Msg) tea.Cmd
	view      func() string
	clipboard []string
	pending   []chan tea.Msg
}

// quickStep is how long a command may take and still be part of the step
// that issued it (its message applied before the next key): generous, so a
// busy machine does not reorder a step; waits (a gate, a progress report)
// cost this much once.
const quickStep = time.Second

// settleBound is how long mustContain waits for pending commands.
const settleBound = 20 * time.Second

func newHarness(t *testing.T, fc *fakeClient, opts Options, w, h int) *harness {
	t.Helper()
	return newHarnessOn(t, fc, opts, w, h)
}

// newHarnessOn drives the UI on any client (the simulation, for flows that
// dump, replay and move for real).
func newHarnessOn(t *testing.T, c broker.Client, opts Options, w, h int) *harness {
	t.Helper()
	opts.Client = c
	m := New(opts)
	m.c.now = func() time.Time { return fixedNow }
	// Ticks would only arrive after real time; tests send pollMsg and
	// countdownMsg themselves.
	m.c.tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	hs := &harness{t: t, m: m,
		update: func(msg tea.Msg) tea.Cmd { _, cmd := m.Update(msg); return cmd },
		view:   func() string { return m.View().Content }}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// newScreenHarness drives one screen without the root: what the screen
// asks of the root (a status line, navigation) comes back to the screen,
// which ignores it. The screen talks to no more of the broker than the
// roles it was built with.
func newScreenHarness(t *testing.T, s screen, w, h int) *harness {
	t.Helper()
	s.SetSize(w, h)
	return &harness{t: t, update: s.Update, view: s.View}
}

// screenCommon is the common of a screen driven alone: the model tests'
// clock, and no ticks.
func screenCommon() *common {
	c := newCommon(Options{})
	c.now = func() time.Time { return fixedNow }
	c.tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	return c
}

// start runs Init (the first snapshot).
func (h *harness) start() *harness {
	h.run(h.m.Init())
	return h
}

func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	h.deliver()
	h.apply(msg)
}

func (h *harness) apply(msg tea.Msg) {
	h.run(h.update(msg))
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		h.handle(msg)
	case <-time.After(quickStep):
		h.pending = append(h.pending, done) // a wait, or slow: applied when it comes
	}
}

// deliver applies the messages of pending commands that have answered.
func (h *harness) deliver() {
	for {
		progressed := false
		for i, ch := range h.pending {
			select {
			case msg := <-ch:
				h.pending = append(h.pending[:i:i], h.pending[i+1:]...)
				h.handle(msg)
				progressed = true
			default:
				continue
			}
			break
		}
		if !progressed {
			return
		}
	}
}

// await waits until a pending command answers (false: none did in time).
func (h *harness) await(deadline time.Time) bool {
	for time.Now().Before(deadline) {
		for _, ch := range h.pending {
			if len(ch) > 0 {
				return true
			}
		}
		if len(h.pending) == 0 {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

func (h *harness) handle(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
		return
	}
	// tea.Sequence's message type is unexported: a slice of commands.
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
		for i := range v.Len() {
			h.run(v.Index(i).Interface().(tea.Cmd))
		}
		return
	}
	if fmt.Sprintf("%T", msg) == "tea.setClipboardMsg" {
		h.clipboard = append(h.clipboard, fmt.Sprint(msg))
		return
	}
	h.apply(msg)
}

func (h *harness) key(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		h.send(keyMsg(k))
	}
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// keyMsg builds the key press a terminal would send for a binding's name.
func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "delete":
		return tea.KeyPressMsg{Code: tea.KeyDelete}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "f1":
		return tea.KeyPressMsg{Code: tea.KeyF1}
	}
	if c, ok := strings.CutPrefix(k, "ctrl+"); ok && len(c) == 1 {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	r := []rune(k)
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// raw is the frame as the terminal would get it; plain strips the styling.
func (h *harness) raw() string   { return h.view() }
func (h *harness) plain() string { h.deliver(); return ansi.Strip(h.raw()) }

func (h *harness) mustContain(subs ...string) {
	h.t.Helper()
	deadline := time.Now().Add(settleBound)
	for {
		out := h.plain()
		missing := ""
		for _, s := range subs {
			if !strings.Contains(out, s) {
				missing = s
				break
			}
		}
		if missing == "" {
			return
		}
		if !h.await(deadline) {
			h.t.Fatalf("frame lacks %q:\n%s", missing, out)
		}
	}
}

func (h *harness) mustNotContain(subs ...string) {
	h.t.Helper()
	out := h.plain()
	for _, s := range subs {
		if strings.Contains(out, s) {
			h.t.Fatalf("frame has %q:\n%s", s, out)
		}
	}
}
