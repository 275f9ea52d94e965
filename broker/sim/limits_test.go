package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// The simulation's queues keep their length limits as the broker does: a
// drop-head queue pushes its head out (dead-lettered, reason maxlen), a
// reject-publish queue refuses (the publisher's nack), a policy limit
// applied to a fuller queue drops at once.
func TestSimQueuesKeepTheirLengthLimits(t *testing.T) {
	s := quiet(t)
	s.testDeclare(t, "dh", map[string]any{"x-max-length": int64(2), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dh.dead"})
	s.testDeclare(t, "dh.dead", nil)
	s.testDeclare(t, "rp", map[string]any{"x-max-length": int64(2), "x-overflow": "reject-publish"})
	for i := range 3 {
		s.testPublish(t, "", "dh", fmt.Sprint("d", i), "", nil)
	}
	if got := ids(peek(t, s, "dh")); fmt.Sprint(got) != "[d1 d2]" || depth(t, s, "dh.dead") != 1 {
		t.Errorf("drop-head: %v, dead %d", got, depth(t, s, "dh.dead"))
	}
	dead := peek(t, s, "dh.dead")[0]
	if dead.Properties.MessageID != "d0" || dead.Deaths[0].Reason != retry.ReasonMaxlen {
		t.Errorf("dropped head %s %+v", dead.Properties.MessageID, dead.Deaths)
	}
	s.mu.Lock()
	var errs []error
	for range 3 {
		_, err := s.publish("", "rp", broker.Properties{}, nil, []byte("x"))
		errs = append(errs, err)
	}
	s.mu.Unlock()
	var refused errRefused
	if errs[0] != nil || errs[1] != nil || !errors.As(errs[2], &refused) || depth(t, s, "rp") != 2 {
		t.Errorf("reject-publish: %v, depth %d", errs, depth(t, s, "rp"))
	}
	s.mu.Lock()
	s.setPolicy("dh", map[string]any{"max-length": 1})
	s.mu.Unlock()
	if depth(t, s, "dh") != 1 || depth(t, s, "dh.dead") != 2 {
		t.Errorf("policy: dh %d, dead %d", depth(t, s, "dh"), depth(t, s, "dh.dead"))
	}
}

// A policy that limits the target while a move runs: the move stops before
// the target would drop anything, and the rest stay in the source.
func TestSimMoveStopsWhenAPolicyLimitsTheTargetMidMove(t *testing.T) {
	s := quiet(t)
	s.testDeclare(t, "src", nil)
	s.testDeclare(t, "t", nil)
	const n = 1000
	for i := range n {
		s.testPublish(t, "", "src", fmt.Sprint("m", i), "", nil)
	}
	once := false
	rep, err := s.Move(context.Background(), broker.MoveRequest{From: "src", To: moveplan.Target{Kind: moveplan.TargetQueue, Name: "t"}}, func(p broker.MoveProgress) {
		if !once && p.Moved >= 100 {
			once = true
			s.mu.Lock()
			s.setPolicy("t", map[string]any{"max-length": 250})
			s.mu.Unlock()
		}
	})
	if !errors.Is(err, broker.ErrPartial) || rep.Moved != 250 || depth(t, s, "t") != 250 || depth(t, s, "src") != n-250 {
		t.Fatalf("moved %d (%v): t %d, src %d", rep.Moved, err, depth(t, s, "t"), depth(t, s, "src"))
	}
	if s.Stats().MaxLenDrops != 0 {
		t.Errorf("%d dropped", s.Stats().MaxLenDrops)
	}
	if len(rep.Planned) != 1 || !strings.Contains(rep.Planned[0].Skip, "t is full now (at most 250 messages)") {
		t.Errorf("planned %+v", rep.Planned)
	}
	// The source keeps its order: m250 first.
	if got := peek(t, s, "src"); got[0].Properties.MessageID != "m250" || got[1].Properties.MessageID != "m251" {
		t.Errorf("source starts %s %s", got[0].Properties.MessageID, got[1].Properties.MessageID)
	}
}

// A quorum queue that dead-letters at least once keeps a dead letter no
// queue took (messages_dlx) and delivers it once one does; a classic one
// drops it.
func TestSimQuorumWaitQueueKeepsDeadLettersUntilDelivered(t *testing.T) {
	s := quiet(t)
	args := topology.DelayQueueArgs("", "later", 1000, true)
	s.testDeclare(t, "w", map[string]any(args))
	s.testDeclare(t, "wc", map[string]any(topology.DelayQueueArgs("", "later", 1000, false)))
	s.testPublish(t, "", "w", "q", "", nil)
	s.testPublish(t, "", "wc", "c", "", nil)
	s.Advance(2 * time.Second)
	s.mu.Lock()
	kept := len(s.byName["w"].dlx)
	s.mu.Unlock()
	if kept != 1 || s.Stats().DeadLetterDrops != 1 {
		t.Fatalf("kept %d, dropped %d", kept, s.Stats().DeadLetterDrops)
	}
	s.testDeclare(t, "later", nil)
	s.Advance(time.Second)
	if got := ids(peek(t, s, "later")); fmt.Sprint(got) != "[q]" {
		t.Errorf("later holds %v", got)
	}
	if info, _ := s.Topology(context.Background()); info.Queues[0].Name == "" {
		t.Fatal("no topology")
	}
}
