package sshserve

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/topology"
)

// scanOf is a whole scan of queue by by, of groups of the counts given
// (largest first, as usecase.Grouper makes them), begun at at.
func scanOf(queue, by string, at time.Time, counts ...int) *usecase.GroupScan {
	s := &usecase.GroupScan{Queue: topology.Queue{Name: queue}, ScannedAt: at, Coverage: usecase.GroupCoverage{By: by, Whole: true}}
	for i, n := range counts {
		s.Groups = append(s.Groups, usecase.Group{Key: fmt.Sprintf("cause %d", i), Count: n})
	}
	return s
}

// A scan is kept by vhost and queue, its largest KeptCauses causes with
// the rest counted; a later scan of the queue replaces it; one that
// stopped short (an error) is not whole.
func TestCauseScansKeepTheLatest(t *testing.T) {
	var s CauseScans
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	counts := make([]int, KeptCauses+10)
	for i := range counts {
		counts[i] = 100 - i
	}
	s.Record("/", scanOf("orders.dlq", usecase.GroupError, at, counts...), nil)
	s.Record("other", scanOf("orders.dlq", usecase.GroupReason, at, 7), nil)
	got := s.Latest("/")
	if len(got) != 1 {
		t.Fatalf("%d scans of /, want 1: %+v", len(got), got)
	}
	c := got[0]
	rest := 0
	for _, n := range counts[KeptCauses:] {
		rest += n
	}
	if c.Queue != "orders.dlq" || c.By != usecase.GroupError || len(c.Causes) != KeptCauses || c.Causes[0] != (Cause{"cause 0", 100}) ||
		c.Rest != rest || !c.Whole || !c.At.Equal(at) {
		t.Errorf("kept %+v (rest want %d)", c, rest)
	}
	if o := s.Latest("other"); len(o) != 1 || o[0].By != usecase.GroupReason || o[0].Causes[0].Count != 7 {
		t.Errorf("the other vhost's: %+v", o)
	}
	s.Record("/", scanOf("orders.dlq", usecase.GroupError, at.Add(time.Minute), 3), errors.New("stopped at its deadline"))
	if c := s.Latest("/")[0]; len(c.Causes) != 1 || c.Rest != 0 || c.Whole || !c.At.Equal(at.Add(time.Minute)) {
		t.Errorf("a later partial scan: %+v", c)
	}
}

// At most MaxCauseScans queues are kept: a new one forgets the oldest
// scan; a queue scanned again keeps its place.
func TestCauseScansAreBounded(t *testing.T) {
	var s CauseScans
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range MaxCauseScans {
		s.Record("/", scanOf(fmt.Sprintf("q%03d", i), usecase.GroupError, at.Add(time.Duration(i)*time.Second), 1), nil)
	}
	s.Record("/", scanOf("q000", usecase.GroupError, at.Add(time.Hour), 2), nil) // again: q001 is now the oldest
	s.Record("/", scanOf("new", usecase.GroupError, at.Add(2*time.Hour), 1), nil)
	got := map[string]bool{}
	for _, c := range s.Latest("/") {
		got[c.Queue] = true
	}
	if len(got) != MaxCauseScans || !got["new"] || !got["q000"] || got["q001"] {
		t.Errorf("%d queues kept (want %d), new %v, q000 %v, q001 (the oldest) %v", len(got), MaxCauseScans, got["new"], got["q000"], got["q001"])
	}
}

// Sessions record and scrapes read at once (go test -race).
func TestCauseScansAreSafeForSessions(t *testing.T) {
	var s CauseScans
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				s.Record("/", scanOf(fmt.Sprintf("q%d", (i+j)%MaxCauseScans), usecase.GroupError, time.Now(), 3, 2), nil)
				for _, c := range s.Latest("/") {
					c.Causes[0].Count++ // a copy: the store's is not changed
				}
			}
		})
	}
	wg.Wait()
	for _, c := range s.Latest("/") {
		if c.Causes[0].Count != 3 {
			t.Fatalf("%s: %+v", c.Queue, c.Causes)
		}
	}
}
