package ui

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/termtext"
)

// causesHarness is the UI on a quiet simulation whose DLQ holds n dead
// letters of 3 causes (Spring-like, each with its own ids and values),
// open in the browser at w×h.
func causesHarness(t *testing.T, n, w, h int) (*harness, *sim.Sim) {
	t.Helper()
	s := sim.New(sim.Options{Quiet: true})
	t.Cleanup(func() { s.Close() })
	if err := brokertest.PublishCauses(context.Background(), s, sim.OrdersDLQ, brokertest.CauseMessages(n, 9, s.Now())); err != nil {
		t.Fatal(err)
	}
	hs := newHarnessOn(t, s, Options{}, w, h).start()
	hs.send(openQueueMsg{queue: sim.OrdersDLQ, confirmed: true})
	// The peek's answer, not just its title: on a busy machine the peek
	// may still be reading (and g has nothing to group yet).
	hs.mustContain("orders.dlq", "peeked ")
	return hs, s
}

// runSlow runs cmd as the program would, waiting up to d for each command
// (a scan takes longer than the harness's step).
func (h *harness) runSlow(cmd tea.Cmd, d time.Duration) {
	h.t.Helper()
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(d):
		h.t.Fatalf("a command took longer than %s", d)
	}
	switch msg := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range msg {
			h.runSlow(c, d)
		}
		return
	}
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
		for i := range v.Len() {
			h.runSlow(v.Index(i).Interface().(tea.Cmd), d)
		}
		return
	}
	_, next := h.m.Update(msg)
	h.runSlow(next, d)
}

// The done-when of the grouping work, in the UI: 5,000 messages of 3 causes
// with ids and values in their texts. The peek read 1,000; g groups the
// whole queue by default (it holds no more than usecase.GroupWholeLimit):
// all 5,000 in the same 3 groups, the first view labelled partial until
// the scan is done; enter marks a whole group (past the peek too) with the
// ids to check, m moves exactly those.
func TestGroupsCoverTheWholeQueue(t *testing.T) {
	h, _ := causesHarness(t, 5000, 80, 24)
	_, cmd := h.m.Update(keyMsg("g"))
	if !h.m.browser.gscan.running {
		t.Fatal("g on a queue the peek did not cover started no scan")
	}
	if c := h.m.browser.groupCoverage(); !strings.Contains(c, "grouping the whole queue…") || !strings.Contains(c, "partial: the peek's first 1000") {
		t.Errorf("while it scans: %q", c)
	}
	h.runSlow(cmd, 2*time.Minute)
	h.mustContain("grouped 5000 of 5000 ready messages by error · the whole queue", "3 groups by error")
	total := 0
	for _, g := range h.m.browser.groups {
		total += g.Count
		if len(g.IDs) != g.Count || g.Type == "" {
			t.Errorf("group %q: %d ids of %d, type %q", g.Key, len(g.IDs), g.Count, g.Type)
		}
	}
	if len(h.m.browser.groups) != 3 || total != 5000 {
		t.Fatalf("%d groups of %d messages", len(h.m.browser.groups), total)
	}
	// The scan grouped by every grouping: g shows the next without another.
	h.key("g")
	h.mustContain("grouped 5000 of 5000 ready messages by error-text · the whole queue")
	if h.m.browser.gscan.running || h.m.browser.gscan.id != 1 {
		t.Fatalf("g scanned again (scan %d)", h.m.browser.gscan.id)
	}
	for range len(groupOrder) - 1 {
		h.key("g")
	}
	h.mustContain("by error ·")
	// Every line fits 80 columns; the keys keep the exception's name.
	for _, l := range strings.Split(h.plain(), "\n") {
		if termtext.Width(l) > 80 {
			t.Errorf("line of %d cells: %q", termtext.Width(l), l)
		}
	}
	h.mustContain("ResourceAccessException:", "e.g. msg-")
	t.Logf("the grouped view at 80×24:\n%s", h.plain())
	g := h.m.browser.groups[0]
	h.key("enter")
	if len(h.m.browser.marks) != g.Count {
		t.Fatalf("%d marked, the group has %d", len(h.m.browser.marks), g.Count)
	}
	spec := h.m.browser.moveSpec(nil)
	last := g.Positions[len(g.Positions)-1]
	if last < 1000 || spec.IDs[last] != g.IDs[len(g.IDs)-1] || len(spec.Marked) != g.Count {
		t.Fatalf("marked up to #%d, id there %q (want %q), %d marked", last, spec.IDs[last], g.IDs[len(g.IDs)-1], len(spec.Marked))
	}
	h.key("m")
	h.mustContain(fmt.Sprintf("marked messages (%d)", g.Count))
}

// A queue the peek covered needs no scan: no S, and the groups say so.
func TestGroupsOfAWholePeek(t *testing.T) {
	h, _ := causesHarness(t, 300, 80, 24)
	h.key("g")
	h.mustContain("grouped 300 of 300 ready messages by error")
	h.mustNotContain("S groups the whole queue")
	h.key("S") // nothing to scan
	if h.m.browser.gscan.running {
		t.Fatal("a scan of a queue the peek covered")
	}
	// esc leaves the grouped view; g cycles through error-text too.
	h.key("g")
	h.mustContain("by error-text")
	h.key("esc")
	if h.m.browser.groupBy != "" {
		t.Fatal("esc stayed in the grouped view")
	}
}

// esc stops a scan under way: its answer is dropped.
func TestGroupScanStopsOnEsc(t *testing.T) {
	h, _ := causesHarness(t, 3000, 80, 24)
	_, cmd := h.m.Update(keyMsg("g"))
	if !h.m.browser.gscan.running {
		t.Fatal("g did not start a scan")
	}
	h.mustContain("grouping the whole queue…")
	h.key("esc")
	if h.m.browser.gscan.running || h.m.browser.groupBy != "" {
		t.Fatal("esc left the scan running")
	}
	h.runSlow(cmd, 2*time.Minute) // its answer (cancelled) arrives, and is dropped
	h.mustNotContain("canceled")
	if h.m.browser.gscan.result != nil {
		t.Fatal("a stopped scan's groups were kept")
	}
}

// A queue above usecase.GroupWholeLimit is not scanned by default: its
// groups are the peek's, labelled partial with why, and S scans it.
func TestGroupsOfALargeQueueSayTheyArePartial(t *testing.T) {
	fc := newFake()
	fc.peeks["orders.dlq"] = causesPeek(1000, usecase.GroupWholeLimit+1)
	h := newHarness(t, fc, Options{}, 200, 30).start()
	h.send(openQueueMsg{queue: "orders.dlq", confirmed: true})
	h.key("g")
	if h.m.browser.gscan.running {
		t.Fatal("a queue above the bound was scanned by default")
	}
	h.mustContain(fmt.Sprintf("grouped 1000 of %d ready messages by error · partial: the peek's first 1000 (more than the %d grouped whole by default) · S groups up to 100000",
		usecase.GroupWholeLimit+1, usecase.GroupWholeLimit))
}

// The groups table at 80 columns, pure: two causes of one exception type
// read differently, the cursor's group stays on screen, more are counted.
func TestRenderGroupsKeepsBothEnds(t *testing.T) {
	const typ = "org.springframework.web.client.ResourceAccessException"
	var gs []usecase.Group
	for i, tail := range []string{"Connect timed out; nested exception is java.net.SocketTimeoutException: Connect timed out",
		"Connection refused; nested exception is java.net.ConnectException: Connection refused"} {
		gs = append(gs, usecase.Group{Key: typ + `: I/O error on POST request for "…": ` + tail, Count: 10 - i})
	}
	for i := range 20 {
		gs = append(gs, usecase.Group{Key: fmt.Sprintf("other cause %d", i), Count: 1})
	}
	h := newHarness(t, newFake(), Options{NoColor: true}, 80, 24)
	lines := renderGroups(gs, "error", 15, 80, 8, fixedNow, h.m.c.styles)
	if len(lines) != 8 {
		t.Fatalf("%d lines for 8", len(lines))
	}
	plain := make([]string, len(lines))
	for i, l := range lines {
		plain[i] = termtext.Sanitize(strings.TrimRight(ansi.Strip(l), " "))
		if termtext.Width(ansi.Strip(l)) > 80 {
			t.Errorf("line %d is %d cells", i, termtext.Width(ansi.Strip(l)))
		}
	}
	joined := strings.Join(plain, "\n")
	if !strings.Contains(joined, "▸") || !strings.Contains(joined, "other cause 13") || !strings.Contains(joined, "… 16 more") {
		t.Fatalf("cursor not shown or more not counted:\n%s", joined)
	}
	top := renderGroups(gs, "error", 0, 80, 8, fixedNow, h.m.c.styles)
	a, b := ansi.Strip(top[1]), ansi.Strip(top[2])
	if a[10:] == b[10:] || !strings.Contains(a, "ResourceAccessException: I/O error") || !strings.Contains(a, "med out") || !strings.Contains(b, "refused") {
		t.Fatalf("the two causes of one type:\n%s\n%s", a, b)
	}
}

// causesPeek is a peek of n of brokertest's dead letters out of ready, as
// the fake returns it.
func causesPeek(n int, ready int64) *broker.PeekResult {
	r := &broker.PeekResult{Queue: "orders.dlq", Type: "classic", Total: ready, Ready: ready, PeekedAt: fixedNow,
		SideEffects: []string{"every browsed message was requeued: its redelivered flag is now set"}}
	for i, c := range brokertest.CauseMessages(n, 4, fixedNow) {
		at := c.At
		m := broker.Message{Position: i, Headers: c.Headers, Properties: broker.Properties{MessageID: c.ID, Timestamp: &at}}
		decode.DecodeMessage(&m, c.Body, 256, nil, nil)
		r.Messages = append(r.Messages, m)
	}
	return r
}

// Golden frames of the grouped view (ANSI stripped) at 80×24 and 160×48:
// 1,000 peeked of 25,000 (above the bound: the peek's groups, partial),
// grouped by error. Regenerate with
// go test ./ui -run TestGoldenGroups -update
func TestGoldenGroups(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("grouped_%dx%d", sz[0], sz[1]), func(t *testing.T) {
			fc := newFake()
			fc.peeks["orders.dlq"] = causesPeek(1000, 25000)
			h := newHarness(t, fc, Options{}, sz[0], sz[1]).start()
			h.send(openQueueMsg{queue: "orders.dlq", confirmed: true})
			h.key("g", "down")
			golden.RequireEqual(t, h.plain())
		})
	}
}

// scanRecorder keeps what the UI tells Options.Scans.
type scanRecorder struct {
	mu    sync.Mutex
	calls []recordedScan
}

type recordedScan struct {
	context, vhost string
	scan           *usecase.GroupScan
	err            error
}

func (r *scanRecorder) RecordScan(context, vhost string, scan *usecase.GroupScan, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, recordedScan{context, vhost, scan, err})
}

func (r *scanRecorder) recorded() []recordedScan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// A scan of the whole queue that finished is told to Options.Scans (what
// ladder serve --metrics reports), naming the context and vhost it ran in;
// one of --where's choice is not.
func TestGroupScansAreRecorded(t *testing.T) {
	rec := &scanRecorder{}
	s := sim.New(sim.Options{Quiet: true})
	t.Cleanup(func() { s.Close() })
	if err := brokertest.PublishCauses(context.Background(), s, sim.OrdersDLQ, brokertest.CauseMessages(1500, 9, s.Now())); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, s, Options{Scans: rec, Context: "prod"}, 80, 24).start()
	open := func() {
		h.send(openQueueMsg{queue: sim.OrdersDLQ, confirmed: true})
		h.mustContain("orders.dlq", "peeked ")
	}
	open()

	// Under a --where: a choice's groups, not the queue's.
	h.runSlow(h.m.browser.setWhere("retries>=0"), time.Minute)
	_, cmd := h.m.Update(keyMsg("g"))
	if !h.m.browser.gscan.running {
		t.Fatal("g under a --where started no scan")
	}
	h.runSlow(cmd, 2*time.Minute)
	if got := rec.recorded(); len(got) != 0 {
		t.Fatalf("a scan under a --where was recorded: %+v", got[0].scan.Coverage)
	}

	open() // the --where is the queue's opening's: gone
	_, cmd = h.m.Update(keyMsg("g"))
	h.runSlow(cmd, 2*time.Minute)
	h.mustContain("grouped 1500 of 1500 ready messages by error · the whole queue")
	got := rec.recorded()
	if len(got) != 1 {
		t.Fatalf("%d scans recorded, want 1", len(got))
	}
	r := got[0]
	if r.context != "prod" || r.vhost != s.Vhost() || r.err != nil || r.scan.Queue.Name != sim.OrdersDLQ || !r.scan.Coverage.Whole {
		t.Errorf("recorded %q %q %v %s whole=%v", r.context, r.vhost, r.err, r.scan.Queue.Name, r.scan.Coverage.Whole)
	}
	gs, ok := r.scan.GroupsBy(usecase.GroupError)
	n := 0
	for _, g := range gs {
		n += g.Count
	}
	if !ok || len(gs) != 3 || n != 1500 {
		t.Errorf("recorded %d groups by error of %d messages (%v), want 3 of 1500", len(gs), n, ok)
	}
}

// A scan esc stopped half way, with the groups of what it had read, is
// not told to Options.Scans: they are not the queue's.
func TestAStoppedGroupScanIsNotRecorded(t *testing.T) {
	rec := &scanRecorder{}
	fc := newFake()
	fc.peeks["orders.dlq"].Ready = 5000
	fc.topology = true
	h := newHarness(t, fc, Options{Scans: rec}, 100, 30).start()
	h.send(openQueueMsg{queue: "orders.dlq", confirmed: true})
	h.mustContain("msg-0002")
	gate := make(chan struct{})
	defer close(gate)
	fc.mu.Lock()
	fc.peekGate, fc.peekReport, fc.peekEachFirst = gate, broker.PeekProgress{Read: 3, Want: 5000}, true
	fc.mu.Unlock()
	h.key("g")
	if h.m.top() != h.m.browser {
		h.key("enter") // the cost question, when others feel the browse
	}
	h.mustContain("grouping the whole queue… 3 of 5000 read")
	h.key("esc")
	if !h.await(time.Now().Add(time.Minute)) {
		t.Fatal("the stopped scan did not answer")
	}
	h.deliver()
	if got := rec.recorded(); len(got) != 0 {
		t.Fatalf("a stopped scan was recorded: %+v (%v)", got[0].scan.Coverage, got[0].err)
	}
}
