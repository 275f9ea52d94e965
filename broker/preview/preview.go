// Package preview holds the budgets of a move's look before it acts, the
// same for the live client and the simulation: how many messages a move
// and its dry run read, what reading them costs, and the bounds on what it
// holds at once.
package preview

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/ladder-tui/ladder/broker"
)

// RunID names one run (a move, a replay) in HeaderMoveID.
func RunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Requested is how many messages the move will take from the source.
func Requested(req broker.MoveRequest, ready int) int {
	n := ready
	if len(req.Positions) > 0 {
		n = 0
		seen := map[int]bool{}
		for _, p := range req.Positions {
			if p >= 0 && p < ready && !seen[p] {
				seen[p] = true
				n++
			}
		}
	}
	if req.Limit > 0 && req.Limit < n {
		n = req.Limit
	}
	return n
}

// Reads is how many of the source's first messages a dry run of
// req reads when ready are ready (the simulation's dry run reads as many):
// those the move would take, or up to the last position or pick asked for;
// a move that chooses (--where, picks) looks at every message, but no
// further than it can hold back.
func Reads(req broker.MoveRequest, ready int) int {
	n, _ := ReadsCapped(req, ready)
	return n
}

// ReadsCapped is Reads; capped: the bound of what a move holds back
// cut it short.
func ReadsCapped(req broker.MoveRequest, ready int) (n int, capped bool) {
	look := req
	if req.Chooses() {
		look.Limit = 0 // every message is looked at; Limit counts chosen ones
	}
	n = Requested(look, ready)
	if len(req.Positions) > 0 {
		if last := slices.Max(req.Positions); last >= 0 {
			n = last + 1
		}
	}
	if req.Pick != nil {
		last := 0
		for _, k := range req.Pick {
			last = max(last, k.Position)
		}
		n = min(n, last+1) // no pick lies further back
	}
	if req.Chooses() && n > HeldBudget {
		// A move looks no further than it can hold: nor does its preview.
		return HeldBudget, true
	}
	return n, false
}

// CostNotes are the notes a dry run adds for what its browse of the
// source cost beyond the redelivered flag: a delivery counted, messages its
// return dead-lettered (the simulation's dry run says the same).
func CostNotes(res *broker.PeekResult) []string {
	var out []string
	for _, e := range res.SideEffects {
		if strings.Contains(e, "x-delivery-count") || strings.Contains(e, "by this peek") || strings.Contains(e, "left the queue during the peek") {
			out = append(out, "dry run: "+e)
		}
	}
	return out
}

// MaxBody keeps a browsed body whole (dumps, --where on bodies).
const MaxBody = 1 << 30

// HeldBudget bounds the messages a move keeps unacked because it cannot
// move them (deliveries sit in memory until the move ends).
const HeldBudget = 10000
