package ui

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// simHarness is the UI on the demo simulation, its clock fixed, with its DLQ
// open in the browser.
func simHarness(t *testing.T) (*harness, *sim.Sim) {
	t.Helper()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := sim.New(sim.Options{Seed: 3, Now: func() time.Time { return now }, WarmUp: 10 * time.Minute})
	t.Cleanup(func() { s.Close() })
	// The UI acts through the gate, as every face's client does.
	h := newHarnessOn(t, gate.New(s, gate.Options{Principal: gate.Local("", false)}), Options{}, 160, 48).start()
	h.send(openQueueMsg{queue: sim.OrdersDLQ})
	h.mustContain("orders.dlq", "peeked ") // the peek's answer, not only its title
	return h, s
}

func dlqReady(t *testing.T, s *sim.Sim) int {
	t.Helper()
	snap, err := s.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	q, _ := snap.Queue(sim.OrdersDLQ)
	return int(q.Ready)
}

// g groups the messages; enter marks exactly a group's messages; m moves
// exactly those.
func TestBrowserGroupsAndMovesAGroup(t *testing.T) {
	h, s := simHarness(t)
	before := dlqReady(t, s)
	h.key("g")
	h.mustContain("by error · enter marks one")
	for !strings.Contains(h.plain(), "by origin · enter marks one") {
		h.key("g")
	}
	h.mustContain("orders.topic:orders.created")
	// The first group is the largest: mark it.
	res, _ := s.Peek(t.Context(), sim.OrdersDLQ, broker.PeekOptions{Limit: 1000})
	groups := usecase.GroupMessages(res.Messages, usecase.GroupOrigin)
	h.key("enter")
	if got := len(h.m.browser.marks); got != groups[0].Count {
		t.Fatalf("%d marked, the group has %d", got, groups[0].Count)
	}
	h.key("m")
	h.mustContain("marked messages (" + itoa(groups[0].Count) + ")")
	h.key("enter") // preview
	h.mustContain("Confirm move")
	h.key("enter") // move
	h.mustContain("Moved")
	if got := dlqReady(t, s); got != before-groups[0].Count {
		t.Errorf("DLQ %d → %d, the group had %d", before, got, groups[0].Count)
	}
}

// d dumps to a file named after the queue; R replays a dump file through
// the same dialog, dry run and confirmation as a move.
func TestBrowserDumpsAndReplays(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	h, s := simHarness(t)
	n := dlqReady(t, s)
	h.key("d")
	h.mustContain("Dump orders.dlq to a file", "orders.dlq-")
	h.key("enter")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	if lines := strings.Count(string(b), "\n"); lines != n+1 {
		t.Fatalf("%d lines for %d messages", lines, n)
	}
	h.mustContain("dumped " + itoa(n) + " messages")
	h.key("R")
	h.mustContain("Replay a dump file", filepath.Base(files[0]))
	h.key("enter")
	h.mustContain("every message in", "original (where each message was dumped from)")
	h.key("enter") // preview: a dry run of the replay
	h.mustContain("Confirm replay", "Replay "+itoa(n)+" messages", "from dump file")
	h.key("enter")
	h.mustContain("Moved all " + itoa(n) + " messages")
	if got := dlqReady(t, s); got != 2*n {
		t.Errorf("the DLQ holds %d after replaying %d into it (it had %d)", got, n, n)
	}
}

// w chooses the shown messages by --where expressions; a bad one says why.
func TestBrowserWhere(t *testing.T) {
	h, _ := simHarness(t)
	h.key("w")
	h.mustContain("Choose messages (--where)")
	h.typeText("retries>=99")
	h.key("enter")
	h.mustContain("0 messages chosen by --where retries>=99", "where retries>=99")
	if len(h.m.browser.view) != 0 {
		t.Errorf("%d shown", len(h.m.browser.view))
	}
	h.key("w")
	for range len("retries>=99") {
		h.key("backspace")
	}
	h.typeText("colour=red")
	h.key("enter")
	h.mustContain(`--where "colour=red": unknown field "colour"`)
}

// p pauses a running move and resumes it.
func TestMovePauseKey(t *testing.T) {
	fc := newFake()
	h := newHarness(t, fc, Options{}, 100, 40).start()
	m := h.m.move
	m.Open(movedialog.Spec{Queue: "orders.dlq"})
	m.SetRunning(broker.MoveProgress{}, nil)
	h.m.push(m)
	h.key("p")
	if !strings.Contains(h.plain(), "paused:") {
		t.Fatalf("p did not pause:\n%s", h.plain())
	}
	h.key("p")
	if strings.Contains(h.plain(), "paused:") {
		t.Errorf("p did not resume:\n%s", h.plain())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// u on the demo's head-of-line-blocked payments.wait: the dialog opens on
// the dry run of exactly the messages holding others back, each with its
// remaining delay; enter moves them; afterwards nothing holds anything back.
func TestBrowserUnblocksAHoLBlockedQueue(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := sim.New(sim.Options{Seed: 3, Now: func() time.Time { return now }, WarmUp: 10 * time.Minute})
	t.Cleanup(func() { s.Close() })
	_, plan, _, err := usecase.PrepareUnblockWith(t.Context(), s, sim.PaymentsWait, usecase.UnblockOptions{ForcePeek: true})
	if err != nil || len(plan.Picks) == 0 {
		t.Fatalf("the demo's payments.wait should be blocked: %+v %v", plan, err)
	}
	// The UI acts through the gate, as every face's client does.
	h := newHarnessOn(t, gate.New(s, gate.Options{Principal: gate.Local("", false)}), Options{}, 160, 48).start()
	h.send(openQueueMsg{queue: sim.PaymentsWait, confirmed: true, force: true})
	h.mustContain("u unblock (HoL)")
	// Its messages carry their own TTLs: u's reads ask first.
	h.key("u")
	h.mustContain("ladder unblock reads the queue twice", "may release at most")
	h.key("y")
	h.mustContain("Confirm move", "those holding others back", "remaining delay", "in a wait queue chosen as it is published")
	if got := h.m.move.Preview().Requested; got != len(plan.Picks) {
		t.Fatalf("dry run plans %d, the unblock picks %d", got, len(plan.Picks))
	}
	h.key("enter")
	h.mustContain("moved " + strconv.Itoa(len(plan.Picks)))
	_, after, _, err := usecase.PrepareUnblockWith(t.Context(), s, sim.PaymentsWait, usecase.UnblockOptions{ForcePeek: true})
	if err != nil || len(after.Picks) != 0 {
		t.Errorf("after unblock: %+v %v", after.Picks, err)
	}
}

// R's replay takes the flags replay takes: a Where typed in its dialog
// replays only the lines it chooses (as replay --where), and its preview
// says the pace typed in Rate.
func TestReplayDialogTakesWhereAndRate(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	h, s := simHarness(t)
	n := dlqReady(t, s)
	res, err := s.Peek(t.Context(), sim.OrdersDLQ, broker.PeekOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// A choice that takes some of the messages, not all, not none.
	where, want := "", 0
	for _, c := range []string{"retries>=1", "retries>=2", "retries>=3", "retries>=4", "reason=rejected", "reason=expired"} {
		w, err := moveplan.ParseWhereLine(c)
		if err != nil {
			t.Fatal(err)
		}
		if k := len(usecase.Choose(res.Messages, w, s.Now())); k > 0 && k < n {
			where, want = c, k
			break
		}
	}
	if where == "" {
		t.Fatalf("no --where chooses some of the %d messages", n)
	}
	h.key("d")
	h.mustContain("Dump orders.dlq to a file")
	h.key("enter")
	h.mustContain("dumped " + itoa(n) + " messages")
	h.key("R")
	h.mustContain("Replay a dump file")
	h.key("enter")
	h.mustContain("every message in")
	mv := h.m.move
	for i := 0; mv.Focus() != movedialog.FieldWhere; i++ {
		if i > 12 {
			t.Fatalf("no Where field:\n%s", h.plain())
		}
		h.key("tab")
	}
	h.typeText(where)
	h.key("tab")
	h.typeText("1000/s")
	h.key("enter")
	h.mustContain("Confirm replay", "Replay "+itoa(want)+" messages", "at most 1000 a second")
	h.key("enter")
	h.mustContain("Moved all " + itoa(want) + " messages")
	if got := dlqReady(t, s); got != n+want {
		t.Errorf("the DLQ holds %d after replaying the %d that %s chooses into it (it had %d)", got, want, where, n)
	}
}
