package usecase

import (
	"fmt"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// Group is messages that broke the same way (peek --group-by). JSON field
// names are a contract.
type Group struct {
	Key   string `json:"key"`
	Count int    `json:"count"`
	// FirstSeen and LastSeen are the earliest and latest of the group's
	// messages' times of the kind Times says (a GroupTime*), over the
	// Timed messages that have one; zero when none has.
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	Times     string    `json:"times,omitempty"`
	Timed     int       `json:"timed,omitempty"`
	// Positions are the grouped messages' queue positions (moving a group
	// moves exactly these); SampleIDs the first few ids.
	Positions []int    `json:"positions"`
	SampleIDs []string `json:"sample_ids"`
	// Type is the error type the group's messages share (by error), ""
	// when none names one.
	Type string `json:"type,omitempty"`
	// Sample is the full error text of the group's first message: the key
	// masks what differs between messages, the sample shows one as it is.
	Sample string `json:"sample,omitempty"`
	// IDs are the message ids at Positions, in the same order ("" for a
	// message without one): moving the group checks each position holds
	// the message grouped there.
	IDs []string `json:"-"`
}

// GroupWholeLimit is how many ready messages groups cover by default:
// the whole queue when it holds no more, read within the scan's deadline
// (the peek's, DefaultPeekDeadline, unless told); past it they are the
// first GroupWholeLimit, and say they are partial. A scan asked for more
// (peek --group-by -n N, the terminal UI's S) reads up to DefaultDumpLimit.
const GroupWholeLimit = 10_000

// DefaultDumpLimit bounds a browsing dump without --limit: a browse holds
// every message it reads, unacked on the broker, until it ends.
const DefaultDumpLimit = 100_000

// GroupCoverage is how much of the queue the groups cover. JSON field
// names are a contract.
type GroupCoverage struct {
	By string `json:"by"`
	// Grouped messages are in the groups; LookedAt were read (grouped,
	// not chosen by --where, or not readable: Unreadable).
	Grouped  int `json:"grouped"`
	LookedAt int `json:"looked_at"`
	// Unreadable is always 0 now: the scan groups every message it reads
	// (it once counted names the dump format cannot carry). Kept for the
	// JSON contract.
	Unreadable int `json:"unreadable,omitempty"`
	// Of is how many messages were ready when the scan began (at least
	// LookedAt); Bound the most a scan looks at.
	Of    int64 `json:"of"`
	Bound int   `json:"bound"`
	// Capped: the scan stopped at Bound, or before the end of the queue,
	// with messages it did not look at.
	Capped bool `json:"capped"`
	// Whole: the groups cover every ready message (Covers). Partial says
	// why they do not, in words ("" when whole): the JSON's, the text's
	// and the terminal UI's label.
	Whole   bool   `json:"whole"`
	Partial string `json:"partial,omitempty"`
	// Limit is the -n the scan was asked for (0: none, the default bound).
	Limit int `json:"-"`
	// Deadline is the deadline (--max-time) that stopped the scan short
	// (0: none did); the result's incomplete says it in words.
	Deadline time.Duration `json:"-"`
}

// Covers reports whether the groups cover every ready message.
func (c GroupCoverage) Covers() bool { return !c.Capped && int64(c.LookedAt) >= c.Of }

// Why is why the groups do not cover every ready message ("" when they
// do): what stopped the scan, and what groups more (Partial, for a
// coverage ScanGroups made).
func (c GroupCoverage) Why() string {
	if c.Covers() {
		return ""
	}
	of := fmt.Sprintf("%d of %d", c.LookedAt, c.Of)
	switch {
	case c.Deadline > 0:
		return fmt.Sprintf("the scan stopped at its %s deadline after %s", c.Deadline, of)
	case c.LookedAt >= c.Bound && c.Limit == 0 && c.Bound == GroupWholeLimit:
		return fmt.Sprintf("the first %s: groups cover a queue of up to %d ready messages by default (-n %d groups them all, up to %d)",
			of, GroupWholeLimit, min(c.Of, int64(DefaultDumpLimit)), DefaultDumpLimit)
	case c.LookedAt >= c.Bound && c.Bound >= DefaultDumpLimit:
		return fmt.Sprintf("the first %s: a scan stops at %d", of, DefaultDumpLimit)
	case c.LookedAt >= c.Bound:
		return fmt.Sprintf("the first %s, as -n asked", of)
	case c.Limit > 0 && c.Grouped >= c.Limit:
		return fmt.Sprintf("the first %d chosen by --where, as -n asked, in the first %s", c.Grouped, of)
	}
	return fmt.Sprintf("the browse saw %s ready messages: the others were taken or held by another reader meanwhile", of)
}

// GroupedPeek is what peek --group-by reports: the peek (its first
// messages, what the read cost), the groups and how much of the queue
// they cover. JSON: the peek's fields, then "groups" and "grouping".
type GroupedPeek struct {
	*broker.PeekResult
	Groups   []Group        `json:"groups,omitempty"`
	Grouping *GroupCoverage `json:"grouping,omitempty"`
}
