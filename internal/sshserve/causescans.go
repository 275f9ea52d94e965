package sshserve

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/ladder-tui/ladder/broker/usecase"
)

// CauseScans keeps the latest finished scan by cause of each queue the
// sessions of ladder serve grouped (the queue browser's g and S:
// usecase.ScanGroups), for ladder serve --metrics to report. It never
// scans: a scan is a browse a person asked for, which may cost deliveries.
// The zero value is empty and ready; it is safe for concurrent sessions.
type CauseScans struct {
	mu      sync.Mutex
	byQueue map[causeKey]CauseScan
}

type causeKey struct{ vhost, queue string }

// CauseScan is a queue's messages counted by cause.
type CauseScan struct {
	Vhost, Queue string
	// By is the grouping (usecase.GroupError when the scan grouped by it,
	// as the terminal UI's scans do: by every grouping at once).
	By string
	// Causes are the largest groups, largest first, at most KeptCauses;
	// Rest is how many messages the others hold.
	Causes []Cause
	Rest   int
	// Whole: the scan read every ready message of the queue (else it
	// stopped short: its bound, its deadline).
	Whole bool
	// At is when the scan began.
	At time.Time
}

// Cause is one group of a scan: its key and how many messages it holds.
type Cause struct {
	Key   string
	Count int
}

// KeptCauses bounds the causes kept of a scan (the rest are counted in
// CauseScan.Rest): more than the metrics report, few enough that a scan
// by error text of thousands of distinct texts keeps little.
const KeptCauses = 50

// MaxCauseScans bounds the queues whose scans are kept: past it, the
// oldest scan is forgotten.
const MaxCauseScans = 50

// Record keeps scan as vhost's latest of its queue; err is the scan's
// (a scan that stopped short with what it read is not whole).
func (s *CauseScans) Record(vhost string, scan *usecase.GroupScan, err error) {
	if scan == nil {
		return
	}
	by := usecase.GroupError
	groups, ok := scan.GroupsBy(by)
	if !ok {
		by, groups = scan.Coverage.By, scan.Groups
	}
	cs := CauseScan{Vhost: vhost, Queue: scan.Queue.Name, By: by, Whole: err == nil && scan.Coverage.Whole, At: scan.ScannedAt,
		Causes: make([]Cause, 0, min(len(groups), KeptCauses))}
	for i, g := range groups { // largest first (usecase.Grouper.Groups)
		if i < KeptCauses {
			cs.Causes = append(cs.Causes, Cause{Key: g.Key, Count: g.Count})
		} else {
			cs.Rest += g.Count
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byQueue == nil {
		s.byQueue = map[causeKey]CauseScan{}
	}
	k := causeKey{vhost, cs.Queue}
	if _, ok := s.byQueue[k]; !ok && len(s.byQueue) >= MaxCauseScans {
		var oldest causeKey
		first := true
		for k, v := range s.byQueue {
			if first || v.At.Before(s.byQueue[oldest].At) {
				oldest, first = k, false
			}
		}
		delete(s.byQueue, oldest)
	}
	s.byQueue[k] = cs
}

// Latest is the latest scan of each of vhost's queues, by queue name.
// Its scans are copies: the caller may keep them.
func (s *CauseScans) Latest(vhost string) []CauseScan {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CauseScan
	for k, v := range s.byQueue {
		if k.vhost == vhost {
			v.Causes = slices.Clone(v.Causes)
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b CauseScan) int { return cmp.Compare(a.Queue, b.Queue) })
	return out
}
