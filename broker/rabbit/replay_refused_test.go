package rabbit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// A replay by a user who may not write where it publishes: the broker
// refuses the first publish (ACCESS_REFUSED) and closes the channel. The
// replay stops there, in the broker's words on one line, claims no
// duplicates (nothing was published) and leaves every line unsent in the
// progress file, so a --resume once the user may write publishes each
// line exactly once.
func TestReplayRefusedByTheBrokerStopsAndResumesOnce(t *testing.T) {
	f := newVhostFixture(t)
	dst := f.queue("dst", nil)
	user := brokertest.User(t, f.r, "management", brokertest.Perms{Configure: "^$", Write: "^$", Read: ".*"})
	const n = 600 // three batches: the refusal must not be met batch after batch
	file := writeDump(t, n, "acl", nil)
	req := usecase.ReplayRequest{File: file, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}}

	l, err := rabbit.NewLive(user, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var last broker.MoveProgress
	rep, err := usecase.Replay(context.Background(), gate.New(l, gate.Options{}), req, func(p broker.MoveProgress) { last = p })
	line := broker.Describe(err)
	if !errors.Is(err, broker.ErrAccessRefused) || !strings.Contains(line, "ACCESS_REFUSED - ") || strings.Contains(line, "\n") {
		t.Fatalf("replay: %q, want one line with the broker's ACCESS_REFUSED", line)
	}
	t.Logf("%s", line)
	if strings.Count(line, "ACCESS_REFUSED") != 1 || strings.Contains(line, "not open") || strings.Contains(line, "before every confirm") {
		t.Errorf("replay: %q", line)
	}
	if rep.Moved != 0 || rep.DuplicatesPossible || rep.DuplicatesAtMost != 0 {
		t.Errorf("report: moved %d, duplicates possible %v, at most %d; want none", rep.Moved, rep.DuplicatesPossible, rep.DuplicatesAtMost)
	}
	for _, note := range rep.Notes {
		if strings.Contains(note, "may have reached") || strings.Contains(note, "ACCESS_REFUSED") {
			t.Errorf("note %q: the refusal is said once, in the error, and nothing is in doubt", note)
		}
	}
	if last.Failed != rep.Failed || rep.Failed > usecase.ReplayBatch {
		t.Errorf("failed %d (progress said %d): more than the one batch the broker refused", rep.Failed, last.Failed)
	}
	if d := f.depth(dst); d != 0 {
		t.Errorf("%d messages reached the target", d)
	}

	// The user may write now: --resume publishes every line once.
	perm, _ := json.Marshal(map[string]string{"configure": "^$", "write": ".*", "read": ".*"})
	if err := brokertest.API(f.r, http.MethodPut, "permissions/"+url.PathEscape(f.r.Vhost)+"/"+url.PathEscape(user.AMQPUser), perm); err != nil {
		t.Fatal(err)
	}
	l2, err := rabbit.NewLive(user, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	req.Resume = true
	rep2, err := usecase.Replay(context.Background(), gate.New(l2, gate.Options{}), req, nil)
	if err != nil {
		t.Fatalf("resumed replay: %v", err)
	}
	if rep2.Moved != n || rep2.DuplicatesPossible || rep2.DuplicatesAtMost != 0 {
		t.Errorf("resumed replay: moved %d, duplicates possible %v, at most %d; want %d and none", rep2.Moved, rep2.DuplicatesPossible, rep2.DuplicatesAtMost, n)
	}
	seen := idsOf(f.drain(dst, time.Second))
	for i := 0; i < n; i++ {
		if c := seen[fmt.Sprintf("acl-%d", i)]; c != 1 {
			t.Errorf("acl-%d on the broker %d times, want once", i, c)
		}
	}
}
